package admin

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/oauthfake"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

// TestStandaloneScreens walks the screens as a site owner does after
// `make run`: sign in with an application password, create an SMTP
// connection through the generated form, send a test email, find it in
// the logs, open it, resend it (to other recipients too), change a
// setting and see the chart.
func TestStandaloneScreens(t *testing.T) {
	b := newBrowser(t)
	sink := smtpsink.Start(t)
	svc := servicetest.Start(t, t.TempDir())
	pw := svc.MustAdminPassword(t)
	admin := "http://" + svc.Addr + "/admin/"
	const to = "reader@example.com"

	// A wrong password is refused on the sign-in screen; the right one signs in.
	b.run("open the sign-in screen", chromedp.Navigate(admin), chromedp.WaitVisible("#signin-user", chromedp.ByQuery))
	b.screenshot("signin")
	b.run("sign in with a wrong password",
		fill("#signin-user", "admin"),
		fill("#signin-pass", "AAAAAAAAAAAAAAAAAAAAAAAA"),
		submit("#signin-pass"),
		chromedp.WaitVisible("#signin-status .notice-error", chromedp.ByQuery))
	signIn(b, "admin", pw)
	var stored string
	b.eval(`sessionStorage.getItem("mailsvc.auth") || ""`, &stored)
	if !strings.Contains(stored, "admin") {
		t.Errorf("credentials not kept for the tab: %q", stored)
	}
	var local string
	b.eval(`JSON.stringify(localStorage)`, &local)
	if strings.Contains(local, pw) {
		t.Errorf("the application password outlives the tab (localStorage): %s", local)
	}

	// First use: the onboarding wizard and an empty chart.
	b.run("dashboard on first use", chromedp.WaitVisible("#ob-driver", chromedp.ByQuery), chromedp.WaitVisible("svg.chart", chromedp.ByQuery))
	b.screenshot("dashboard-first-use")

	// Create an SMTP connection: a bad port first, shown at the field.
	b.run("open the new connection form",
		show("#/connections/new"),
		chromedp.WaitVisible(`[name="host"]`, chromedp.ByQuery))
	b.run("fill the SMTP form with a bad port",
		fill("#conn-name", "sink"),
		fill(`[name="host"]`, sink.Host()),
		fill(`[name="port"]`, "99999"),
		fill(`[name="encryption"]`, "none"),
		fill(`[name="from_email"]`, "site@example.com"),
		act(`[name="auth"]`, "if (el.checked) el.click()"),
		click(`.conn-form button[type="submit"]`),
		chromedp.WaitVisible(fieldError("port"), chromedp.ByQuery))
	if msg := b.textOf(fieldError("port")); !strings.Contains(msg, "65535") {
		t.Errorf("port error at the field is %q, want the bound 65535", msg)
	}
	var invalid, focused string
	b.eval(`document.querySelector('[name="port"]').getAttribute("aria-invalid") || ""`, &invalid)
	b.eval(`document.activeElement ? document.activeElement.name : ""`, &focused)
	if invalid != "true" || focused != "port" {
		t.Errorf("the port field is not marked invalid and focused: aria-invalid=%q focus=%q", invalid, focused)
	}
	b.hasNoRawJSON()
	b.screenshot("connection-validation")
	b.run("fix the port and create",
		fill(`[name="port"]`, strconv.Itoa(sink.Port())),
		click(`.conn-form button[type="submit"]`),
		chromedp.WaitVisible("#test-to", chromedp.ByQuery))

	// Test email through the connection; it reaches the sink and the logs.
	b.run("send a test email",
		fill("#test-to", to),
		submit("#test-to"),
		chromedp.WaitVisible("#action-result .notice-success", chromedp.ByQuery))
	if _, err := sink.WaitFor(1, 30*time.Second); err != nil {
		t.Fatalf("the test email did not reach the sink: %v", err)
	}
	b.screenshot("connection-edit")
	b.run("connection list", show("#/connections"), chromedp.WaitVisible(`a[href^="#/connections/"]`, chromedp.ByQuery))
	if txt := b.text(); !strings.Contains(txt, "sink") || !strings.Contains(txt, "Other SMTP") {
		t.Errorf("connection list lacks the new connection:\n%s", txt)
	}
	b.screenshot("connections")

	// The logs: the test email is there; search finds it by address and
	// finds nothing for another one.
	b.run("open the logs", show("#/logs"), chromedp.WaitVisible(`#log-results tbody a[href^="#/logs/"]`, chromedp.ByQuery))
	search := func(term string) int {
		b.run("search "+term,
			fill("#log-search", term),
			submit("#log-search"))
		var n int
		b.run("count rows", chromedp.Poll(`(() => { const box = document.querySelector('#log-results');
			if (!box || box.hasAttribute('aria-busy') || !box.querySelector('.pager')) return null;
			return 1 + box.querySelectorAll('tbody a[href^="#/logs/"]').length; })()`, &n,
			chromedp.WithPollingInterval(50*time.Millisecond)))
		return n - 1
	}
	if n := search("nobody-at-all@example.com"); n != 0 {
		t.Errorf("search for another address shows %d logs", n)
	}
	if n := search(to); n != 1 {
		t.Errorf("search for %s shows %d logs, want 1", to, n)
	}
	// By domain and by the start of the address too; while the search's
	// address index is still being filled (as after the upgrade that
	// added it), the screen says the list may be incomplete.
	partialNote := func() bool {
		var shown bool
		b.eval(`!!document.querySelector("#log-search-partial .notice")`, &shown)
		return shown
	}
	for _, term := range []string{"@example.com", "reader"} {
		if n := search(term); n != 1 || partialNote() {
			t.Errorf("search for %s shows %d logs (partial note %v), want 1 and no note", term, n, partialNote())
		}
	}
	setPartial := func(partial bool) {
		t.Helper()
		db, err := store.Open(context.Background(), "sqlite:"+filepath.Join(svc.Dir, "data", "mailsvc.db"), store.DefaultPrefix, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		q := "UPDATE `" + db.TableName("search_progress") + "` SET target = done_up_to WHERE name = 'addresses'"
		if partial {
			// Far enough that the service's backfill does not finish it
			// during the test.
			q = "UPDATE `" + db.TableName("search_progress") + "` SET target = done_up_to + 1000000000 WHERE name = 'addresses'"
		}
		if err := db.Gorm().Exec(q).Error; err != nil {
			t.Fatal(err)
		}
	}
	setPartial(true)
	if n := search("@example.com"); n != 1 || !partialNote() {
		t.Errorf("search for @example.com while the index is filled shows %d logs, partial note %v; want 1 and the note", n, partialNote())
	}
	b.screenshot("logs-search-partial")
	setPartial(false)
	if n := search("@example.com"); n != 1 || partialNote() {
		t.Errorf("search for @example.com once filled shows %d logs, partial note %v; want 1 and no note", n, partialNote())
	}
	b.screenshot("logs")

	// The detail, then resend: a second message reaches the sink.
	b.run("open the detail",
		click(`#log-results tbody a[href^="#/logs/"]`),
		chromedp.WaitVisible("dl.facts", chromedp.ByQuery))
	if txt := b.text(); !strings.Contains(txt, to) || !strings.Contains(txt, "Attempts") {
		t.Errorf("detail view lacks the recipient or attempts:\n%s", txt)
	}
	var sandbox string
	b.eval(`(() => { const f = document.querySelector("iframe.body-frame"); return f ? f.getAttribute("sandbox") : "none"; })()`, &sandbox)
	if sandbox != "" && sandbox != "none" {
		t.Errorf("body frame sandbox is %q, want empty (everything blocked)", sandbox)
	}
	b.screenshot("log-detail")
	b.run("resend",
		clickButton("Resend"),
		chromedp.WaitVisible(`div[role="status"] .notice-success`, chromedp.ByQuery))
	if _, err := sink.WaitFor(2, 60*time.Second); err != nil {
		t.Fatalf("the resent email did not reach the sink: %v", err)
	}
	// Resend to other recipients: a bad address is shown at its field;
	// good ones replace the original recipients in a new log that points
	// back to this one.
	b.run("resend to a bad address",
		fill("#rs-to", "not-an-address"),
		submit("#rs-to"),
		chromedp.WaitVisible("#rs-to-err:not(:empty)", chromedp.ByQuery))
	b.run("resend to other recipients",
		fill("#rs-to", "Colleague <colleague@example.net>, second@example.net"),
		fill("#rs-bcc", "audit@example.net"),
		submit("#rs-to"),
		chromedp.WaitVisible(`#resend-to .notice-success a[href^="#/logs/"]`, chromedp.ByQuery))
	got, err := sink.WaitFor(3, 60*time.Second)
	if err != nil {
		t.Fatalf("the copy to other recipients did not reach the sink: %v", err)
	}
	if rcpt := strings.Join(got[2].To, " "); rcpt != "colleague@example.net second@example.net audit@example.net" {
		t.Errorf("the copy went to %q, want only the new recipients", rcpt)
	}
	b.run("open the copy's log",
		click(`#resend-to .notice-success a[href^="#/logs/"]`),
		chromedp.WaitVisible(`dl.facts a[href^="#/logs/"]`, chromedp.ByQuery))
	if txt := b.textOf("dl.facts"); !strings.Contains(txt, "Resent from") || !strings.Contains(txt, "colleague@example.net") {
		t.Errorf("the copy's log does not name its original and new recipients:\n%s", txt)
	}

	// Settings: an out-of-range value is shown at its field; a good one is saved.
	b.run("open settings", show("#/settings"), chromedp.WaitVisible("#set-log_retention_days", chromedp.ByQuery))
	b.run("bad retention",
		fill("#set-log_retention_days", "99999"),
		submit("#set-log_retention_days"),
		chromedp.WaitVisible(fieldError("log_retention_days"), chromedp.ByQuery))
	b.hasNoRawJSON()
	b.run("good retention",
		fill("#set-log_retention_days", "30"),
		submit("#set-log_retention_days"),
		chromedp.WaitVisible("#flash .notice-success", chromedp.ByQuery))
	var settings map[string]any
	servicetest.Call(t, "GET", svc.Base+"/settings", "", servicetest.Basic("admin", pw)).JSON(t, &settings)
	if settings["log_retention_days"] != float64(30) {
		t.Errorf("log_retention_days = %v after saving 30 in the screen", settings["log_retention_days"])
	}
	// The log body mode and a per-source override: a bad mode is shown at
	// its field, then both are saved.
	b.run("bad log body override",
		fill("#set-log_body", "none"),
		fill("#set-log_body_sources", "my-plugin = full\nshop = everything"),
		submit("#set-log_body"),
		chromedp.WaitVisible(fieldError("log_body_sources"), chromedp.ByQuery))
	b.hasNoRawJSON()
	b.run("good log body override",
		fill("#set-log_body_sources", "my-plugin = full"),
		submit("#set-log_body"))
	deadline := time.Now().Add(30 * time.Second)
	for {
		servicetest.Call(t, "GET", svc.Base+"/settings", "", servicetest.Basic("admin", pw)).JSON(t, &settings)
		if src, _ := settings["log_body_sources"].(map[string]any); settings["log_body"] == "none" && len(src) == 1 && src["my-plugin"] == "full" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("log_body %v, log_body_sources %v after saving them in the screen", settings["log_body"], settings["log_body_sources"])
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The summary report: a bad recipient is shown at its field; a good
	// one is saved; the preview shows the HTML in a sandboxed frame.
	b.run("bad report recipient",
		fill("#set-summary_report-frequency", "daily"),
		fill("#set-summary_report-recipients", "ops@example.com, nope"),
		submit("#set-summary_report-frequency"),
		chromedp.WaitVisible("#set-summary_report-recipients-err:not(:empty)", chromedp.ByQuery))
	b.run("good report recipients",
		fill("#set-summary_report-recipients", "ops@example.com"),
		submit("#set-summary_report-frequency"),
		chromedp.WaitVisible("#flash .notice-success", chromedp.ByQuery))
	// The success notice of an earlier save may still show: await the
	// saved value itself.
	deadline = time.Now().Add(30 * time.Second)
	for {
		servicetest.Call(t, "GET", svc.Base+"/settings", "", servicetest.Basic("admin", pw)).JSON(t, &settings)
		if rep, _ := settings["summary_report"].(map[string]any); rep["frequency"] == "daily" && fmt.Sprint(rep["recipients"]) == "[ops@example.com]" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("summary_report = %v after saving it in the screen", settings["summary_report"])
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.run("preview the report", clickButton("Preview"), chromedp.WaitVisible(`iframe.report-frame[sandbox=""]`, chromedp.ByQuery))
	b.screenshot("settings")

	// Email controls: unticking a core email and saving switches it off.
	b.run("switch off a core email",
		act("#ec-comment_moderation", "el.click()"),
		submit("#ec-comment_moderation"))
	deadline = time.Now().Add(30 * time.Second)
	for {
		var controls struct {
			Controls []struct {
				Kind    string `json:"kind"`
				Enabled bool   `json:"enabled"`
			} `json:"controls"`
		}
		servicetest.Call(t, "GET", svc.Base+"/settings/email-controls", "", servicetest.Basic("admin", pw)).JSON(t, &controls)
		off := 0
		for _, c := range controls.Controls {
			if !c.Enabled {
				off++
				if c.Kind != "comment_moderation" {
					t.Fatalf("%s switched off, only comment_moderation was unticked", c.Kind)
				}
			}
		}
		if off == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("comment_moderation not switched off after saving the email controls")
		}
		time.Sleep(20 * time.Millisecond)
	}

	// Alerts: a channel with a URL that is not http(s) is refused at its field.
	b.run("open a new alert channel", show("#/alerts/new"), chromedp.WaitVisible("#al-webhook_url", chromedp.ByQuery))
	b.run("save a bad webhook URL",
		fill("#al-name", "ops"),
		fill("#al-webhook_url", "ftp://hooks.example.com/x"),
		submit("#al-name"),
		chromedp.WaitVisible(fieldError("webhook_url"), chromedp.ByQuery))
	b.hasNoRawJSON()
	b.screenshot("alerts")

	// An SMS channel with a delivery_failed threshold: a count without a
	// window is refused at its field; with one it is saved and listed.
	b.run("a twilio channel with a threshold", show("#/alerts/new"), chromedp.WaitVisible("#al-type", chromedp.ByQuery),
		fill("#al-type", "twilio"), chromedp.WaitVisible("#al-auth_token", chromedp.ByQuery),
		fill("#al-name", "sms"), fill("#al-account_sid", "AC0123456789abcdef0123456789abcdef"),
		fill("#al-auth_token", "f00dfeedf00dfeedf00dfeedf00dfeed"), fill("#al-from", "+15005550006"), fill("#al-to", "+447700900123"),
		fill("#al-threshold_count", "3"), fill("#al-threshold_minutes", "0"), submit("#al-name"),
		chromedp.Poll(`(document.querySelector("#al-threshold_minutes-err") || {}).textContent > ""`, nil, pollFast))
	b.run("save it with a window", fill("#al-threshold_minutes", "10"), submit("#al-name"),
		chromedp.Poll(`location.hash === "#/alerts" && document.body.textContent.includes("after 3 in 10 min")`, nil, pollFast))
	var channels []struct {
		Type             string            `json:"type"`
		ThresholdCount   int               `json:"threshold_count"`
		ThresholdMinutes int               `json:"threshold_minutes"`
		Settings         map[string]string `json:"settings"`
	}
	servicetest.Call(t, "GET", svc.Base+"/notifications", "", servicetest.Basic("admin", pw)).JSON(t, &channels)
	if len(channels) != 1 || channels[0].Type != "twilio" || channels[0].ThresholdCount != 3 || channels[0].ThresholdMinutes != 10 ||
		channels[0].Settings["auth_token"] != "********" {
		t.Fatalf("channels after saving the SMS channel: %+v", channels)
	}

	// Tools: the doctor, transcripts of the credential checks and the
	// plugins list.
	b.run("open tools", show("#/tools"), chromedp.WaitVisible("#dbg-h", chromedp.ByQuery), chromedp.WaitVisible("#plg-h", chromedp.ByQuery),
		chromedp.WaitVisible(`#doc-h ~ table td .badge-ok`, chromedp.ByQuery))
	b.screenshot("tools")

	// A second connection sending as the same address makes a sender
	// group; the keyboard's Move down button reorders it and Save keeps it.
	second := fmt.Sprintf(`{"name":"backup","driver":"smtp","settings":{"host":%q,"port":%d,"encryption":"none","auth":false,"from_email":"site@example.com"}}`, sink.Host(), sink.Port())
	if r := servicetest.Call(t, "POST", svc.Base+"/connections", second, servicetest.Basic("admin", pw)); r.Status != 201 {
		t.Fatalf("create the second connection: %d %s", r.Status, r.Body)
	}
	b.run("open sender groups", show("#/pro/groups"), chromedp.WaitVisible(`button[aria-label="Move sink down"]`, chromedp.ByQuery))
	b.run("move the first member down and save",
		chromedp.Focus(`button[aria-label="Move sink down"]`, chromedp.ByQuery),
		chromedp.KeyEvent("\r"),
		submit(`button[aria-label="Move sink down"]`),
		chromedp.WaitVisible("#flash .notice-success", chromedp.ByQuery))
	var groups []struct {
		Sender  string `json:"sender"`
		Members []struct {
			ID   int64  `json:"connection_id"`
			Name string `json:"name"`
		} `json:"members"`
	}
	servicetest.Call(t, "GET", svc.Base+"/pro/sender-groups", "", servicetest.Basic("admin", pw)).JSON(t, &groups)
	if len(groups) != 1 || len(groups[0].Members) != 2 || groups[0].Members[0].Name != "backup" {
		t.Errorf("sender group after moving sink down: %+v, want backup first", groups)
	}
	b.screenshot("pro-groups-reordered")

	// Dragging sink with the mouse above backup puts it first again; Save
	// keeps the order the list shows.
	if len(groups) == 1 && len(groups[0].Members) == 2 {
		sinkID, backupID := groups[0].Members[1].ID, groups[0].Members[0].ID
		b.run("reopen sender groups", show("#/dashboard"), settled(), show("#/pro/groups"),
			chromedp.WaitVisible(`button[aria-label="Move sink down"]`, chromedp.ByQuery), settled())
		b.drag(fmt.Sprintf(`ol.sortable li[data-id="%d"] .grip`, sinkID), fmt.Sprintf(`ol.sortable li[data-id="%d"]`, backupID))
		var order []string
		b.eval(`[...document.querySelectorAll("ol.sortable li strong")].map((e) => e.textContent)`, &order)
		if strings.Join(order, ",") != "sink,backup" {
			t.Errorf("after dragging sink above backup the list shows %v", order)
		}
		b.run("save the dragged order", submit(`form[aria-label="Sender group site@example.com"] [name="strategy"]`), chromedp.WaitVisible("#flash .notice-success", chromedp.ByQuery))
		servicetest.Call(t, "GET", svc.Base+"/pro/sender-groups", "", servicetest.Basic("admin", pw)).JSON(t, &groups)
		if len(groups) != 1 || len(groups[0].Members) != 2 || groups[0].Members[0].Name != "sink" || groups[0].Members[1].Name != "backup" {
			t.Errorf("sender group after dragging sink first: %+v, want sink, backup", groups)
		}
		b.screenshot("pro-groups-dragged")
	}

	// Every Pro tab opens and shows its data (no licence needed to look).
	for _, tab := range []string{"license", "settings", "groups", "rules", "analytics", "domain", "transfer", "ses", "webhooks", "suppressions"} {
		b.run("open Pro "+tab, show("#/pro/"+tab), chromedp.Poll(`(() => { const el = document.querySelector(".pro-`+tab+`");
			return !!el && el.children.length > 0 && !document.querySelector("#screen[aria-busy]"); })()`, nil, chromedp.WithPollingInterval(50*time.Millisecond)))
		if txt := b.text(); strings.Contains(txt, "TypeError") || strings.Contains(txt, "is not a function") || strings.Contains(txt, "undefined") {
			t.Errorf("Pro %s shows a script error:\n%s", tab, txt)
		}
		b.hasNoRawJSON()
		if tab == "webhooks" {
			var urls []string
			b.eval(`[...document.querySelectorAll(".pro-webhooks input")].map((i) => i.value.replace(/^.*\/pro\/webhooks\//, ""))`, &urls)
			if want := []string{"sendgrid", "mailgun", "postmark", "ses", "brevo", "sparkpost", "mailjet", "resend", "mailersend", "mandrill", "elasticemail?token=WEBHOOK_TOKEN"}; !slices.Equal(urls, want) {
				t.Errorf("webhook URLs %q, want %q", urls, want)
			}
		}
		b.screenshot("pro-" + tab)
	}
	// The Pro tab comes last in the navigation, after the built-in tabs,
	// and names the page while open.
	var tabs []string
	var title string
	b.eval(`[...document.querySelectorAll("nav.nav-tab-wrapper a")].map((a) => a.dataset.screen + " " + a.textContent)`, &tabs)
	b.eval(`document.title`, &title)
	if want := []string{"dashboard Dashboard", "connections Connections", "logs Email logs", "alerts Alerts", "settings Settings", "tools Tools", "pro Pro"}; !slices.Equal(tabs, want) || title != "Pro ‹ mailsvc" {
		t.Errorf("navigation %q, page title %q; want %q, %q", tabs, title, want, "Pro ‹ mailsvc")
	}

	// A routing rule made in the editor is chosen by the rule tester.
	b.run("new routing rule", show("#/pro/rules/new"), chromedp.WaitVisible("#rule-name", chromedp.ByQuery))
	b.run("fill the rule",
		fill("#rule-name", "Invoices"),
		clickButton("Add condition"),
		chromedp.WaitVisible(".condition [name=value]", chromedp.ByQuery),
		fill(".condition [name=value]", "invoice"),
		submit("#rule-name"),
		chromedp.Poll(`!document.querySelector("#rule-name") && !document.querySelector("#screen[aria-busy]")
			&& !!document.querySelector('a[href^="#/pro/rules/"]')`, nil, chromedp.WithPollingInterval(50*time.Millisecond)))
	b.run("test the rules",
		fill("#rt-subject", "Invoice 42"),
		fill("#rt-to", to),
		submit("#rt-subject"),
		chromedp.WaitVisible(`#rt-h ~ [role="status"] .notice-success`, chromedp.ByQuery))
	if txt := b.textOf(`#rt-h ~ [role="status"] .notice-success`); !strings.Contains(txt, "Invoices") {
		t.Errorf("rule tester answer %q does not name the rule", txt)
	}
	b.screenshot("pro-rules-tested")

	// The dashboard chart draws the delivered messages as bars.
	b.run("dashboard chart",
		show("#/dashboard"),
		chromedp.WaitVisible("svg.chart rect.bar-delivered", chromedp.ByQuery),
		chromedp.WaitVisible("#dash-stopped", chromedp.ByQuery))
	b.screenshot("dashboard")
}

// signIn signs in on the sign-in screen that is showing.
func signIn(b *browser, user, pw string) {
	b.t.Helper()
	b.run("sign in",
		chromedp.WaitVisible("#signin-user", chromedp.ByQuery),
		fill("#signin-user", user),
		fill("#signin-pass", pw),
		submit("#signin-pass"),
		chromedp.WaitVisible(`nav a[data-screen="dashboard"]`, chromedp.ByQuery))
}

// TestOnboardingSecretAndOAuth: the wizard of a fresh service creates
// the default connection and sends the test email; a connection edited
// without touching its password keeps it (the sink requires the login);
// an OAuth connection's Connect button goes through the provider's
// consent and comes back authorized.
func TestOnboardingSecretAndOAuth(t *testing.T) {
	b := newBrowser(t)
	sink := smtpsink.Start(t, smtpsink.WithAuth("mailer", "s3cret-pass"))
	google := oauthfake.New(core.ProviderGoogle)
	defer google.Close()
	google.AddClient("client-google", "secret-google")
	svc := servicetest.Start(t, t.TempDir(), "MAILSVC_USE_LOCAL_OAUTH_REDIRECTS=true", servicetest.AllowCustomEndpoints)
	pw := svc.AdminPassword()
	admin := servicetest.Basic("admin", pw)
	b.run("open the screens", chromedp.Navigate("http://"+svc.Addr+"/admin/"))
	signIn(b, "admin", pw)

	b.run("choose SMTP in the wizard",
		chromedp.WaitVisible("#ob-driver", chromedp.ByQuery),
		fill("#ob-driver", "smtp"),
		chromedp.WaitVisible(`#onboarding [name="host"]`, chromedp.ByQuery))
	b.run("fill the wizard and apply",
		fill(`#onboarding [name="host"]`, sink.Host()),
		fill(`#onboarding [name="port"]`, strconv.Itoa(sink.Port())),
		fill(`#onboarding [name="encryption"]`, "none"),
		fill(`#onboarding [name="username"]`, "mailer"),
		fill(`#onboarding [name="password"]`, "s3cret-pass"),
		fill("#ob-from_email", "site@example.com"),
		fill("#ob-to", "owner@example.com"),
		submit("#ob-to"),
		chromedp.WaitVisible("#onboarding .notice-success", chromedp.ByQuery))
	if _, err := sink.WaitFor(1, 30*time.Second); err != nil {
		t.Fatalf("the wizard's test email did not arrive: %v", err)
	}
	var settings map[string]any
	servicetest.Call(t, "GET", svc.Base+"/settings", "", admin).JSON(t, &settings)
	id, _ := settings["default_connection_id"].(float64)
	if id == 0 {
		t.Fatalf("the wizard made no default connection: %v", settings)
	}
	b.screenshot("onboarding-done")

	// Edit the connection's name only: the masked password is sent back
	// as the mask and the stored one is kept, so the next test email
	// still logs in.
	b.run("open the connection", show("#/connections/"+strconv.Itoa(int(id))),
		chromedp.WaitVisible("#test-to", chromedp.ByQuery), chromedp.WaitVisible(`.conn-form [name="password"]`, chromedp.ByQuery))
	var shown string
	b.eval(`document.querySelector('.conn-form [name="password"]').value`, &shown)
	if shown != "********" {
		t.Errorf("the password field shows %q, want the mask", shown)
	}
	b.run("rename and save",
		fill("#conn-name", "Renamed relay"),
		submit("#conn-name"),
		chromedp.WaitVisible("#flash .notice-success", chromedp.ByQuery))
	b.run("send a test email after the edit",
		fill("#test-to", "owner@example.com"),
		submit("#test-to"),
		chromedp.WaitVisible("#action-result .notice", chromedp.ByQuery))
	if txt := b.textOf("#action-result"); !strings.Contains(b.text(), "Renamed relay") || !b.has("#action-result .notice-success") {
		t.Errorf("test email after renaming failed: %s", txt)
	}
	if _, err := sink.WaitFor(2, 30*time.Second); err != nil {
		t.Fatalf("the second test email did not arrive (password lost?): %v", err)
	}
	if strings.Contains(b.text(), "s3cret-pass") {
		t.Error("the page shows the stored password")
	}

	// A Gmail connection whose provider is the local fake: "Connect with
	// google" goes to its consent screen, which returns to the service's
	// callback, which returns to the screens with the connection authorized.
	var gmail struct {
		ID          int64  `json:"id"`
		OAuthStatus string `json:"oauth_status"`
	}
	servicetest.Call(t, "POST", svc.Base+"/connections", fmt.Sprintf(`{"name":"Mailbox","driver":"gmail","settings":{
		"client_id":"client-google","client_secret":"secret-google","oauth_base_url":%q,"from_email":"site@gmail.example"}}`, google.URL()),
		admin).JSON(t, &gmail)
	if gmail.ID == 0 || gmail.OAuthStatus != core.OAuthPending {
		t.Fatalf("create the Gmail connection: %+v", gmail)
	}
	b.run("open the Gmail connection", show(fmt.Sprintf("#/connections/%d", gmail.ID)), chromedp.WaitVisible("#test-to", chromedp.ByQuery))
	b.run("connect with Google",
		clickButton("Connect with google"),
		chromedp.WaitVisible(`#screen .notice-success`, chromedp.ByQuery))
	if n := len(google.Authorizations()); n != 1 {
		t.Errorf("the provider's consent screen saw %d authorization requests, want 1", n)
	}
	var where string
	b.eval(`location.pathname + location.search + location.hash`, &where)
	if !strings.Contains(where, "oauth=success") || !strings.HasSuffix(where, "#/connections") {
		t.Errorf("the callback returned the browser to %s, want the connections with oauth=success", where)
	}
	if txt := b.textOf(`#screen .notice-success`); !strings.Contains(strings.ToLower(txt), "authorized") {
		t.Errorf("the banner after the callback says %q", txt)
	}
	row := b.textOf(fmt.Sprintf(`tr:has(a[href="#/connections/%d"])`, gmail.ID))
	if !strings.Contains(strings.ToLower(row), "authorized") {
		t.Errorf("the connection's row after the callback: %q, want authorized", row)
	}
	servicetest.Call(t, "GET", fmt.Sprintf("%s/connections/%d", svc.Base, gmail.ID), "", admin).JSON(t, &gmail)
	if gmail.OAuthStatus != core.OAuthAuthorized || google.Exchanges() != 1 {
		t.Errorf("after the callback oauth_status = %q and %d codes redeemed, want authorized and 1", gmail.OAuthStatus, google.Exchanges())
	}
	b.screenshot("connections-oauth-authorized")

	// A screen that loads slowly never replaces the one opened meanwhile:
	// the dashboard's module is held back on a fresh load while the person
	// opens Settings; when it arrives, Settings stays.
	paused := make(chan fetch.RequestID, 1)
	hold, release := context.WithCancel(b.ctx)
	defer release()
	chromedp.ListenTarget(hold, func(ev any) {
		if e, ok := ev.(*fetch.EventRequestPaused); ok {
			paused <- e.RequestID
		}
	})
	b.run("hold the dashboard's module back", fetch.Enable().WithPatterns([]*fetch.RequestPattern{{URLPattern: "*/admin/js/dashboard.js"}}),
		chromedp.ActionFunc(func(ctx context.Context) error {
			_, _, _, _, err := page.Navigate("http://" + svc.Addr + "/admin/#/dashboard").Do(ctx)
			return err
		}))
	var held fetch.RequestID
	select {
	case held = <-paused:
	case <-time.After(stepTimeout):
		t.Fatal("the dashboard's module was never requested")
	}
	b.run("open settings while the dashboard loads", show("#/settings"), chromedp.WaitVisible("#set-log_retention_days", chromedp.ByQuery), settled())
	var screens []string
	b.run("let the dashboard's module arrive", fetch.ContinueRequest(held), fetch.Disable(),
		chromedp.Evaluate(`import("./js/dashboard.js").then(() => new Promise((r) => setTimeout(r))).then(() => [...document.querySelectorAll("#screen > .screen")].map((e) => e.className))`,
			&screens, func(p *cdpruntime.EvaluateParams) *cdpruntime.EvaluateParams { return p.WithAwaitPromise(true) }))
	// (The module evaluated, the task after it: the app's own import has
	// resumed by then.)
	if len(screens) != 1 || screens[0] != "screen screen-settings" || !b.has("#set-log_retention_days") {
		t.Errorf("after the slow dashboard arrived the screen holds %v, want Settings alone", screens)
	}
}
