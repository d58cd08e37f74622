package admin

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// inFrameJS is the JavaScript that binds doc to the document of the
// service's screens framed in wp-admin's Mail page (null until loaded).
const inFrameJS = `const frame = document.querySelector("iframe#mailsvc-screens");
		const doc = frame && frame.contentDocument;`

// frameAct runs body (JavaScript with el bound to the element sel of the
// framed screens) once el is there, enabled and the screen settled.
func frameAct(sel, body string) chromedp.Action {
	return chromedp.Poll(fmt.Sprintf(`(() => { %s
		const el = doc && doc.querySelector(%q);
		if (!el || el.disabled || doc.querySelector("#screen[aria-busy], #log-results[aria-busy]")) return false;
		%s;
		return true; })()`, inFrameJS, sel, body), nil, pollFast)
}

// framePoll waits until cond (JavaScript with doc bound to the framed
// screens' document) is true with no screen or list rendering.
func framePoll(cond string) chromedp.Action {
	return chromedp.Poll(fmt.Sprintf(`(() => { %s
		if (!doc || doc.querySelector("#screen[aria-busy], #log-results[aria-busy]")) return false;
		return !!(%s); })()`, inFrameJS, cond), nil, pollFast)
}

// frameFill sets the control sel of the framed screens as typing does.
func frameFill(sel, value string) chromedp.Action {
	return frameAct(sel, fmt.Sprintf(`el.focus();
		const proto = el instanceof frame.contentWindow.HTMLSelectElement ? frame.contentWindow.HTMLSelectElement.prototype : frame.contentWindow.HTMLInputElement.prototype;
		Object.getOwnPropertyDescriptor(proto, "value").set.call(el, %q);
		el.dispatchEvent(new Event("input", { bubbles: true }));
		el.dispatchEvent(new Event("change", { bubbles: true }))`, value))
}

// heldRowsJS lists the subjects, status words and connection cells of
// the rows the framed Email logs screen shows.
const heldRowsJS = `(() => { ` + inFrameJS + `
	const cell = (tr, col) => tr.querySelector('td[data-colname="' + col + '"]').innerText.trim();
	return [...doc.querySelectorAll("#log-results tbody tr")].map((tr) => cell(tr, "Subject") + "|" + cell(tr, "Status") + "|" + cell(tr, "Connection")); })()`

// heldBulkJS lists what the framed Email logs screen offers above its
// rows: the texts of the bulk bar's buttons, and how many rows have a box
// to tick.
const heldBulkJS = `(() => { ` + inFrameJS + `
	return { buttons: [...doc.querySelectorAll("#log-results .bulk button")].map((b) => b.textContent.trim()),
		boxes: doc.querySelectorAll('#log-results tbody input[type="checkbox"]').length }; })()`

// bulkOffer is what heldBulkJS answers.
type bulkOffer struct {
	Buttons []string `json:"buttons"`
	Boxes   int      `json:"boxes"`
}

// logTotal answers how many logs GET /logs?query matches (X-WP-Total).
func logTotal(t *testing.T, s *bridgeSite, query string) int {
	t.Helper()
	r := servicetest.Call(t, "GET", s.svc.Base+"/logs?per_page=1&"+query, "", s.admin)
	n, err := strconv.Atoi(r.Header.Get("X-WP-Total"))
	if r.Status != 200 || err != nil {
		t.Fatalf("GET /logs?%s: %d %s, X-WP-Total %q", query, r.Status, r.Body, r.Header.Get("X-WP-Total"))
	}
	return n
}

// awaitLogs asks the service how many logs have each status until the
// counts are want, for up to a minute.
func awaitLogs(t *testing.T, s *bridgeSite, what string, want map[string]int) {
	t.Helper()
	var got map[string]int
	awaitMinute(t, func() bool {
		got = map[string]int{}
		for status := range want {
			got[status] = logTotal(t, s, "status="+status)
		}
		return maps.Equal(got, want)
	}, func() string {
		return fmt.Sprintf("%s: the logs by status are %v, want %v\n%s", what, got, want, s.svc.Stdout)
	})
}

// TestHeldMailOnTheLogsScreen: WordPress sends 60 messages at once, with
// the flood guard's default settings: the 50 of the floor go out, the
// excess is held. The WordPress Dashboard's notice and the Mail menu's
// count show the held mail. In wp-admin's Mail → Email logs, the owner
// picks the filter "Held by the flood guard", sees the held rows, narrows
// them by a search, discards those (after a confirmation) and releases the
// rest: each released message reaches the sink exactly once, the
// discarded never, and the notice and the count of held mail are gone.
// At a phone's width the buttons are on screen. It takes the picture of
// docs/admin.md (make screenshots).
func TestHeldMailOnTheLogsScreen(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	b := newBrowser(t)
	sink := smtpsink.Start(t)
	// A local site that is the live one: its mail is not held by the
	// staging guard, only by the flood guard.
	s := startBridgeSiteWith(t, wpsite.Options{Prefix: "wph_", EnvironmentType: "local", ExtraConfig: "define( 'MAILSVC_ENVIRONMENT', 'production' );"}, "held mail test")
	s.deliverTo(t, sink)

	// The flood: 60 messages from WordPress in a moment, alpha and beta
	// in turn; the default floor is 50 an hour.
	const sent, floor = 60, 50
	subject := func(i int) string {
		if i%2 == 0 {
			return fmt.Sprintf("Order alpha %d", i)
		}
		return fmt.Sprintf("Order beta %d", i)
	}
	s.site.PHP(t, fmt.Sprintf(`for ( $i = 0; $i < %d; $i++ ) { wp_mail( "buyer$i@customer.example", ( 0 === $i %% 2 ? 'Order alpha ' : 'Order beta ' ) . $i, 'Thanks' ); }`, sent))
	awaitLogs(t, s, "after the flood", map[string]int{"held": sent - floor, "delivered": floor})
	var heldLogs []struct {
		Message struct {
			Subject string `json:"subject"`
		} `json:"message"`
	}
	servicetest.Call(t, "GET", s.svc.Base+"/logs?status=held&per_page=100", "", s.admin).JSON(t, &heldLogs)
	var alpha, beta []string
	for _, l := range heldLogs {
		if strings.Contains(l.Message.Subject, "beta") {
			beta = append(beta, l.Message.Subject)
		} else {
			alpha = append(alpha, l.Message.Subject)
		}
	}
	if len(alpha) == 0 || len(beta) == 0 || len(alpha)+len(beta) != sent-floor {
		t.Fatalf("held alpha %v and beta %v, want some of each, %d in all", alpha, beta, sent-floor)
	}

	// The WordPress Dashboard tells of the held mail.
	browserLogin(t, b, s.site, s.site.AdminLogin)
	openDashboard := func(what string) {
		s.site.PHP(t, `delete_transient( 'mailsvc_attention' );`)
		b.run(what, chromedp.Navigate(s.site.SiteURL+"/wp-admin/index.php"), chromedp.WaitVisible("#adminmenu", chromedp.ByQuery))
	}
	openDashboard("open the WordPress Dashboard during the flood")
	if txt := b.textOf("#mailsvc-flood-held"); !strings.Contains(txt, fmt.Sprintf("%d messages are held by the flood guard, not sent.", sent-floor)) ||
		!strings.Contains(txt, "Release or discard them on the Email logs screen.") {
		t.Errorf("the flood notice says %q", txt)
	}
	if txt := b.textOf("#mailsvc-menu-count .pending-count"); txt != strconv.Itoa(sent-floor) {
		t.Errorf("the Mail menu's count is %q, want %d (the held mail)", txt, sent-floor)
	}

	// The confirmations: accepted, and kept to be read.
	var dialogs []string
	var dialogsMu sync.Mutex
	ctx, stopListening := context.WithCancel(b.ctx)
	defer stopListening()
	chromedp.ListenTarget(ctx, func(ev any) {
		if d, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			dialogsMu.Lock()
			dialogs = append(dialogs, d.Message)
			dialogsMu.Unlock()
			go func() { _ = chromedp.Run(b.ctx, page.HandleJavaScriptDialog(true)) }()
		}
	})

	// Mail → Email logs, the filter "Held by the flood guard".
	b.run("open wp-admin's Mail page", chromedp.Navigate(s.site.SiteURL+"/wp-admin/admin.php?page=mailsvc"),
		chromedp.WaitVisible("iframe#mailsvc-screens", chromedp.ByQuery))
	var heldWords string
	b.run("open Email logs and pick the held filter",
		frameAct(`a[href="#/logs"]`, "el.click()"),
		frameFill("#log-status", "held"),
		chromedp.Evaluate(`(() => { `+inFrameJS+` const s = doc.querySelector("#log-status"); return s.options[s.selectedIndex].text; })()`, &heldWords),
		frameAct(`form.filters button[type="submit"]`, "el.click()"),
		framePoll(`doc.querySelector("#held-release") && doc.querySelector("#held-discard")`))
	if heldWords != "Held by the flood guard" {
		t.Errorf("the held filter reads %q", heldWords)
	}
	rows := func(what string, want int) []string {
		t.Helper()
		var got []string
		b.run(what, framePoll(fmt.Sprintf(`doc.querySelectorAll("#log-results tbody tr").length === %d`, want)), chromedp.Evaluate(heldRowsJS, &got))
		return got
	}
	for _, row := range rows("the held rows", sent-floor) {
		if !strings.HasSuffix(row, "|Held by the flood guard|Held, not sent") {
			t.Errorf("a row of the held filter reads %q, want its status and a connection cell saying it was not sent", row)
		}
	}
	// What applies to held mail: releasing or discarding what the filters
	// match; nothing to resend or delete, no boxes to tick (the held
	// routes take the filters, not ids).
	var offer bulkOffer
	b.eval(heldBulkJS, &offer)
	if strings.Join(offer.Buttons, "|") != "Release all matching|Discard all matching" || offer.Boxes != 0 {
		t.Errorf("the held filter offers %+v, want Release all matching and Discard all matching and no boxes", offer)
	}

	// Narrowed by a search: only the beta ones; discarded.
	b.run("search the held beta messages", frameFill("#log-search", "beta"), frameAct(`form.filters button[type="submit"]`, "el.click()"))
	for _, row := range rows("the held beta rows", len(beta)) {
		if !strings.Contains(row, "beta") {
			t.Errorf("the search for beta shows %q", row)
		}
	}
	// On a phone, the buttons are on screen and wide enough to tap.
	b.resize(phoneWidth)
	var offScreen []string
	b.run("the held buttons at a phone's width", chromedp.Evaluate(`(() => { `+inFrameJS+`
		return ["#held-release", "#held-discard"].filter((sel) => { const r = doc.querySelector(sel).getBoundingClientRect();
			return r.left < 0 || r.right > frame.clientWidth || r.height < 24 || r.width < 44; }); })()`, &offScreen))
	if len(offScreen) > 0 {
		t.Errorf("at 390 px, these buttons are off screen or too small to tap: %v", offScreen)
	}
	b.shots("wp-admin-logs-held", chromedp.Evaluate(`(() => { `+inFrameJS+` doc.querySelector("#held-release").scrollIntoView({ block: "center" }); })()`, nil))
	b.run("discard the held beta messages", frameAct("#held-discard", "el.click()"),
		framePoll(`doc.body.innerText.includes("`+strconv.Itoa(len(beta))+` discarded: not sent.") && !doc.querySelector("#held-discard")`))
	dialogsMu.Lock()
	if len(dialogs) != 1 || !strings.Contains(dialogs[0], "Discard every held message these filters match?") {
		t.Errorf("the discard asked %q, want one confirmation", dialogs)
	}
	dialogsMu.Unlock()

	// The rest, all alpha, released.
	b.run("clear the search", frameFill("#log-search", ""), frameAct(`form.filters button[type="submit"]`, "el.click()"))
	for _, row := range rows("the held alpha rows", len(alpha)) {
		if !strings.Contains(row, "alpha") {
			t.Errorf("after the discard the held filter shows %q", row)
		}
	}
	b.run("release the rest", frameAct("#held-release", "el.click()"),
		framePoll(`doc.body.innerText.includes("`+strconv.Itoa(len(alpha))+` released: sent once each.") && !doc.querySelector("#held-release")`))

	// Each released message arrives once, the discarded never: counted
	// once the service has settled every one of them.
	awaitLogs(t, s, "after the release", map[string]int{"delivered": floor + len(alpha), "failed": len(beta), "held": 0, "queued": 0, "sending": 0})
	got := servicetest.SubjectsAtSink(t, sink)
	for i := 0; i < sent; i++ {
		want := 1
		for _, d := range beta {
			if d == subject(i) {
				want = 0
			}
		}
		if got[subject(i)] != want {
			t.Errorf("%q reached the sink %d times, want %d", subject(i), got[subject(i)], want)
		}
	}
	if n := len(sink.Messages()); n != floor+len(alpha) {
		t.Errorf("the sink got %d messages, want %d", n, floor+len(alpha))
	}

	// The notice and the count of held mail are gone.
	openDashboard("the WordPress Dashboard after the release")
	if b.has("#mailsvc-flood-held") {
		t.Errorf("the flood notice still shows: %q", b.textOf("#mailsvc-flood-held"))
	}
	// A discarded message is failed (docs/delivery.md, "Release and
	// discard"): the menu's count is the failed ones', no held mail.
	var att struct {
		Failed24h int `json:"failed_24h"`
		Held      int `json:"held"`
		Count     int `json:"count"`
	}
	servicetest.Call(t, "GET", s.svc.Base+"/dashboard/attention", "", s.admin).JSON(t, &att)
	if att.Held != 0 || att.Count != att.Failed24h {
		t.Errorf("the service's attention after the release: %+v, want no held mail", att)
	}
	if txt := b.textOf("#mailsvc-menu-count .pending-count"); txt != strconv.Itoa(att.Failed24h) {
		t.Errorf("the Mail menu counts %q after the release, want %d (the failed, none held)", txt, att.Failed24h)
	}
}
