package admin

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

// controlSizesJS lists the visible buttons, button-like links and form
// controls of the page with their height, and the least height each must
// have at the width the page is at (WordPress's own sizes): -1 when no
// bound applies.
const controlSizesJS = `[...document.querySelectorAll("button, .button, .button-link, summary, input, select, textarea")]
	.filter((el) => el.type !== "hidden" && el.checkVisibility() && el.getClientRects().length > 0)
	.map((el) => {
		const r = el.getBoundingClientRect();
		const box = el.type === "checkbox" || el.type === "radio";
		const name = el.id ? "#" + el.id : (el.getAttribute("aria-label") || el.textContent.trim() || el.name || el.type).slice(0, 40);
		return { what: el.tagName.toLowerCase() + " " + name, height: Math.round(r.height * 10) / 10, box: box, button: el.matches(".button") };
	})`

// controlSize is one control controlSizesJS measured.
type controlSize struct {
	What   string  `json:"what"`
	Height float64 `json:"height"`
	Box    bool    `json:"box"`
	Button bool    `json:"button"`
}

// TestTouchTargetsOnPhones: at a phone's width (390 px, below
// WordPress's 782 px) every button, button-like link and form control of
// every screen is at least 40 px tall, as WordPress's own are there
// (checkboxes and radio buttons 25 px, WordPress's size) and the page
// still fits the phone's width; at a desktop's width (1280 px) the
// buttons keep their desktop height of about 30 px.
func TestTouchTargetsOnPhones(t *testing.T) {
	b := newBrowser(t)
	sink := smtpsink.Start(t)
	svc := servicetest.Start(t, t.TempDir())
	pw := svc.MustAdminPassword(t)
	admin := servicetest.Basic("admin", pw)
	r := servicetest.Call(t, "POST", svc.Base+"/connections", fmt.Sprintf(`{"name":"sink","driver":"smtp","settings":{"host":%q,"port":%d,"encryption":"none","auth":false,"from_email":"site@example.com"}}`, sink.Host(), sink.Port()), admin)
	var conn struct{ ID int64 }
	if r.JSON(t, &conn); r.Status != 201 {
		t.Fatalf("create connection: %d %s", r.Status, r.Body)
	}
	r = servicetest.Call(t, "POST", svc.Base+"/test-email", fmt.Sprintf(`{"to":"reader@example.com","connection_id":%d}`, conn.ID), admin)
	var sent struct {
		LogID int64 `json:"log_id"`
	}
	if r.JSON(t, &sent); r.Status != 200 || sent.LogID == 0 {
		t.Fatalf("test email: %d %s", r.Status, r.Body)
	}

	// check measures the page at w: every control at least its least
	// height on a phone, every button at most 32 px on a desktop.
	check := func(screen string, w viewport) {
		t.Helper()
		b.resize(w)
		b.run("settle "+screen, settled())
		var sizes []controlSize
		b.eval(controlSizesJS, &sizes)
		if len(sizes) == 0 {
			t.Errorf("%s at %d px: no control measured", screen, w.width)
		}
		var wrong []string
		for _, c := range sizes {
			switch {
			case w.mobile && c.Box && c.Height < 25, w.mobile && !c.Box && c.Height < 40:
				wrong = append(wrong, fmt.Sprintf("%s %.1f px", c.What, c.Height))
			case !w.mobile && c.Button && c.Height > 32:
				wrong = append(wrong, fmt.Sprintf("%s %.1f px", c.What, c.Height))
			}
		}
		if len(wrong) > 0 {
			t.Errorf("%s at %d px, controls of the wrong height: %s", screen, w.width, strings.Join(wrong, ", "))
		}
		// The taller, larger controls still fit the width: the page does
		// not scroll sideways.
		var wide struct {
			Width int      `json:"width"`
			Past  []string `json:"past"`
		}
		b.eval(fmt.Sprintf(`({ width: document.documentElement.scrollWidth,
			past: [...document.querySelectorAll("#app *")].filter((el) => el.getClientRects().length > 0 && el.getBoundingClientRect().right > %d + 1)
				.filter((el) => ![...el.children].some((c) => c.getBoundingClientRect().right > %d + 1))
				.slice(0, 5).map((el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className ? "." + String(el.className).split(" ").join(".") : "")) })`, w.width, w.width), &wide)
		if wide.Width > int(w.width) {
			t.Errorf("%s at %d px: the page is %d px wide, past the window: %v", screen, w.width, wide.Width, wide.Past)
		}
	}

	b.resize(phoneWidth)
	b.run("open the sign-in screen", chromedp.Navigate("http://"+svc.Addr+"/admin/"), chromedp.WaitVisible("#signin-user", chromedp.ByQuery))
	check("sign-in", phoneWidth)
	signIn(b, "admin", pw)
	for _, screen := range []struct{ fragment, sel string }{
		{"#/dashboard", "#dash-range"},
		{"#/connections", `a[href="#/connections/new"]`},
		{"#/connections/new", "#conn-driver"},
		{fmt.Sprintf("#/connections/%d", conn.ID), "#test-to"},
		{"#/logs", "#log-status"},
		{fmt.Sprintf("#/logs/%d", sent.LogID), "#resend-to"},
		{"#/alerts", `a[href="#/alerts/new"]`},
		{"#/alerts/new", "#al-type"},
		{"#/settings", "#summary-report-send"},
		{"#/tools", "#mig-h"},
	} {
		b.run("open "+screen.fragment, show(screen.fragment), chromedp.WaitVisible(screen.sel, chromedp.ByQuery))
		check(screen.fragment, phoneWidth)
		check(screen.fragment, desktopWidth)
	}
}
