package admin

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

// TestCaptureBanner: a service whose address moved (a copy of the live
// site) shows the staging guard's banner on every screen; a held message
// is released from the logs, "This is the live site now" stops the
// capture and releases nothing, and "Release all" sends the rest, each
// once; the dashboard's count of held messages follows the banner, and
// the banner follows simulation mode switched on the Settings screen.
func TestCaptureBanner(t *testing.T) {
	b := newBrowser(t)
	sink := smtpsink.Start(t)
	dir := t.TempDir()
	live := servicetest.Start(t, dir, "MAILSVC_PUBLIC_URL=https://live.example")
	pw := live.MustAdminPassword(t)
	admin := servicetest.Basic("admin", pw)
	r := servicetest.Call(t, "POST", live.Base+"/connections", fmt.Sprintf(`{"name":"sink","driver":"smtp","settings":{"host":%q,"port":%d,"encryption":"none","auth":false,"from_email":"site@example.com"}}`, sink.Host(), sink.Port()), admin)
	var conn struct{ ID int64 }
	if r.JSON(t, &conn); r.Status != 201 {
		t.Fatalf("create connection: %d %s", r.Status, r.Body)
	}
	live.Stop(t)

	// The same data, served at another address: a copy.
	svc := servicetest.Start(t, dir, "MAILSVC_PUBLIC_URL=https://copy.example")
	for _, to := range []string{"one@customer.example", "two@customer.example"} {
		r := servicetest.Call(t, "POST", svc.Base+"/test-email", fmt.Sprintf(`{"to":%q,"connection_id":%d}`, to, conn.ID), admin)
		if r.Status != 200 || !strings.Contains(string(r.Body), `"status":"captured"`) {
			t.Fatalf("test email on the copy: %d %s", r.Status, r.Body)
		}
	}

	ctx, stopListening := context.WithCancel(b.ctx)
	defer stopListening()
	chromedp.ListenTarget(ctx, func(ev any) { // the confirmations: OK
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			go func() { _ = chromedp.Run(b.ctx, page.HandleJavaScriptDialog(true)) }()
		}
	})
	b.run("open the screens", chromedp.Navigate("http://"+svc.Addr+"/admin/"))
	signIn(b, "admin", pw)
	const banner = "This looks like a copy of https://live.example. Mail is being held."
	for _, screen := range []string{"#/dashboard", "#/connections", "#/settings", "#/tools"} {
		b.run("the banner on "+screen, show(screen), settled(), chromedp.WaitVisible("#capture-adopt", chromedp.ByQuery))
		if txt := b.textOf("#capture-banner"); !strings.Contains(txt, banner) || !strings.Contains(txt, "2 messages are held.") {
			t.Fatalf("banner on %s: %q", screen, txt)
		}
	}
	b.screenshot("capture-banner")

	// Release one from the logs, chosen by its box.
	b.run("choose messages to release", click("#capture-choose"), chromedp.WaitVisible("#release-selected", chromedp.ByQuery))
	// The captured filter offers what applies to held mail: release the
	// ticked ones, or delete them unsent; nothing to resend. A held row's
	// connection says it was not sent.
	var offer struct {
		Buttons     []string `json:"buttons"`
		Connections []string `json:"connections"`
	}
	b.eval(`({ buttons: [...document.querySelectorAll("#log-results .bulk button")].map((b) => b.textContent.trim()),
		connections: [...document.querySelectorAll('#log-results tbody td[data-colname="Connection"]')].map((td) => td.innerText.trim()) })`, &offer)
	if got := strings.Join(offer.Buttons, "|"); got != "Release selected|Delete selected, not sent" {
		t.Errorf("the captured filter offers %q, want Release selected and Delete selected, not sent", got)
	}
	if got := strings.Join(offer.Connections, "|"); got != "Held, not sent|Held, not sent" {
		t.Errorf("the captured rows' connections read %q, want Held, not sent for each", got)
	}
	b.run("release the first", click(`#log-results tbody input[type="checkbox"]`), click("#release-selected"))
	if _, err := sink.WaitFor(1, 30*time.Second); err != nil {
		t.Fatalf("the released message did not arrive: %v", err)
	}
	b.run("the banner counts one", chromedp.Poll(`document.querySelector("#capture-banner").textContent.includes("1 message is held.")`, nil, pollFast))

	// This is the live site now: the capture stops, the held one stays.
	b.run("adopt", click("#capture-adopt"),
		chromedp.Poll(`document.querySelector("#capture-banner").textContent.includes("Mail is sent again")`, nil, pollFast))
	if n := len(sink.Messages()); n != 1 {
		t.Fatalf("adopting sent %d messages, want none more than the released one", n-1)
	}
	// Released from the banner on the dashboard: its count of held
	// messages is read again with the banner.
	const held = `[...document.querySelectorAll(".stat")].some((s) => s.textContent.includes("Held (captured)"))`
	b.run("the dashboard counts the held one", show("#/dashboard"), settled(), chromedp.Poll(held, nil, pollFast))
	b.run("release all", click("#capture-release-all"),
		chromedp.Poll(`document.querySelector("#capture-banner").textContent === ""`, nil, pollFast),
		chromedp.Poll(`!(`+held+`) && !document.querySelector("#screen[aria-busy]")`, nil, pollFast))
	got, err := sink.WaitFor(2, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, m := range got {
		for _, to := range m.To {
			seen[to]++
		}
	}
	if seen["one@customer.example"] != 1 || seen["two@customer.example"] != 1 {
		t.Fatalf("the sink got %v, want each message once", seen)
	}

	// Simulation mode, switched on and off on the Settings screen, holds
	// mail too: the banner follows at once.
	b.run("simulation on", show("#/settings"), settled(), click("#set-simulation_enabled"), submit("#set-simulation_enabled"),
		chromedp.Poll(`document.querySelector("#capture-banner").textContent.includes("Simulation mode is on. Mail is being held.")`, nil, pollFast))
	b.run("simulation off", click("#set-simulation_enabled"), submit("#set-simulation_enabled"),
		chromedp.Poll(`document.querySelector("#capture-banner").textContent === ""`, nil, pollFast))
}
