package admin

import (
	"bytes"
	"fmt"
	"net/http"
	"net/mail"
	"regexp"
	"strings"
	"testing"
	"time"

	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/mailsvc/mailsvc/adapters/wordpress/bridge"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// peopleSite is a WordPress site with the bridge, a service reading its
// database, an SMTP sink that asks for a login, and a browser signed in to
// the service's screens with an application password.
type peopleSite struct {
	site  *wpsite.Site
	svc   *servicetest.Service
	sink  *smtpsink.Sink
	b     *browser
	admin func(*http.Request)
}

func startPeopleSite(t *testing.T) *peopleSite {
	t.Helper()
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	b := newBrowser(t)
	site := wpsite.Install(t, wpsite.Options{Prefix: "wpp_", EnvironmentType: "local"})
	if _, err := bridge.Install(site.ContentDir); err != nil {
		t.Fatal(err)
	}
	sink := smtpsink.Start(t, smtpsink.WithAuth("mailer", "s3cret-pass"))
	dir := t.TempDir()
	svc := servicetest.StartEnv(t, dir, servicetest.Environ(dir, "MAILSVC_WP_CONFIG="+site.WPConfigPath, "MAILSVC_ENVIRONMENT=production"))
	pw := site.CreateApplicationPassword(t, site.AdminLogin, "screens in people's words")
	b.run("open the screens", chromedp.Navigate("http://"+svc.Addr+"/admin/"))
	signIn(b, site.AdminLogin, pw)
	return &peopleSite{site: site, svc: svc, sink: sink, b: b, admin: func(r *http.Request) { r.SetBasicAuth(site.AdminLogin, pw) }}
}

// visibleJS answers whether the control named name inside sel is shown
// (checkVisibility: the content of a closed details element is not).
func visibleJS(sel, name string) string {
	return fmt.Sprintf(`(() => { const el = document.querySelector(%q + ' [name="%s"]'); return !!el && el.checkVisibility(); })()`, sel, name)
}

// sender reads the From field of a message as the sink got it.
func sender(t *testing.T, data []byte) *mail.Address {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("read the message: %v", err)
	}
	a, err := mail.ParseAddress(m.Header.Get("From"))
	if err != nil {
		t.Fatalf("From %q: %v", m.Header.Get("From"), err)
	}
	return a
}

// TestScreensInPeoplesWords: the setup wizard on a fresh WordPress site
// asks only the essentials of "Other SMTP" until "Advanced" is opened,
// and the From it sets replaces WordPress's default sender on a password
// reset, while a plugin's own sender is kept unless Force from is on;
// then the screens speak in words (testScreensInWords). It writes the
// pictures of docs/admin.md (make screenshots).
func TestScreensInPeoplesWords(t *testing.T) {
	p := startPeopleSite(t)
	b, site, sink := p.b, p.site, p.sink
	site.CreateUser(t, "resetme", "resetme@example.com", "subscriber", "Old-pass-123")

	b.run("choose Other SMTP in the wizard",
		chromedp.WaitVisible("#ob-driver", chromedp.ByQuery),
		fill("#ob-driver", "smtp"),
		chromedp.WaitVisible(`#onboarding [name="host"]`, chromedp.ByQuery))
	essential := []string{"host", "port", "encryption", "username", "password", "name", "site_from_email", "site_from_name"}
	advanced := []string{"helo", "max_concurrency", "adaptive_concurrency", "max_per_second", "insecure_skip_verify", "timeout"}
	check := func(when string, names []string, want bool) {
		t.Helper()
		for _, n := range names {
			var shown bool
			b.eval(visibleJS("#onboarding", n), &shown)
			if shown != want {
				t.Errorf("%s: the wizard's %s field shown = %v, want %v", when, n, shown, want)
			}
		}
	}
	check("before Advanced", essential, true)
	check("before Advanced", advanced, false)
	var kinds struct {
		Username   string   `json:"username"`
		Encryption []string `json:"encryption"`
		Name       string   `json:"name"`
		Help       string   `json:"help"`
	}
	b.eval(`({ username: document.querySelector('#onboarding [name="username"]').type,
		encryption: [...document.querySelector('#onboarding [name="encryption"]').options].map((o) => o.text),
		name: document.querySelector('#ob-name').value,
		help: document.querySelector('#ob-setup-help').textContent })`, &kinds)
	if kinds.Username != "text" {
		t.Errorf("the username field is of type %q, want text (typed in clear)", kinds.Username)
	}
	if strings.Join(kinds.Encryption, "|") != "None|SSL (port 465)|TLS (STARTTLS, port 587)" {
		t.Errorf("the encryption choices read %q", kinds.Encryption)
	}
	if kinds.Name != "Other SMTP" || kinds.Help == "" {
		t.Errorf("the connection name starts as %q and the provider's help reads %q", kinds.Name, kinds.Help)
	}
	p.b.shots("wizard")
	b.run("open Advanced", click("#onboarding details.advanced > summary"))
	check("after Advanced", advanced, true)
	b.run("close Advanced", click("#onboarding details.advanced > summary"))
	check("Advanced closed again", advanced, false)

	// A refused advanced field opens Advanced to show its message.
	b.run("fill the wizard with a bad HELO name", append(wizardRelaySteps(sink, fill(`#onboarding [name="helo"]`, "not a host")),
		chromedp.WaitVisible(fieldError("helo"), chromedp.ByQuery))...)
	check("after a refused HELO name", []string{"helo"}, true)
	b.run("correct the HELO name and send the test",
		fill(`#onboarding [name="helo"]`, ""),
		submit("#ob-to"),
		chromedp.WaitVisible("#onboarding .notice-success", chromedp.ByQuery))
	if _, err := sink.WaitFor(1, 60*time.Second); err != nil {
		t.Fatalf("the wizard's test email did not arrive: %v", err)
	}
	var conns []struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	}
	servicetest.Call(t, "GET", p.svc.Base+"/connections", "", p.admin).JSON(t, &conns)
	if len(conns) != 1 || conns[0].Name != "Office relay" {
		t.Fatalf("the wizard made the connections %+v, want one named Office relay", conns)
	}
	var channels []struct {
		Type string `json:"type"`
	}
	servicetest.Call(t, "GET", p.svc.Base+"/notifications", "", p.admin).JSON(t, &channels)
	if len(channels) != 1 || channels[0].Type != "email" {
		t.Errorf("the wizard's alert (on by default) made the channels %+v, want one email channel", channels)
	}

	// The From set in the wizard replaces WordPress's default sender; a
	// plugin's own From is kept, unless the connection forces its own.
	sends := []struct {
		name, php, wantEmail, wantName string
	}{
		{"password reset", `var_export( retrieve_password( 'resetme' ) );`, "hello@shop.example", "Example Shop"},
		{"plugin's own sender", `var_export( wp_mail( 'buyer@example.org', 'Your order', 'Thanks', array( 'From: Shop Desk <desk@shop.example>' ) ) );`, "desk@shop.example", "Shop Desk"},
		{"forced sender", `var_export( wp_mail( 'buyer@example.org', 'Your order', 'Thanks', array( 'From: Shop Desk <desk@shop.example>' ) ) );`, "relay@shop.example", "Shop Desk"},
	}
	for i, s := range sends {
		if s.name == "forced sender" {
			r := servicetest.Call(t, "PUT", fmt.Sprintf("%s/connections/%d", p.svc.Base, conns[0].ID),
				`{"settings":{"force_from":true,"from_email":"relay@shop.example"}}`, p.admin)
			if r.Status != 200 {
				t.Fatalf("turn Force from on: %d %s", r.Status, r.Body)
			}
		}
		if out := site.PHP(t, s.php); !strings.Contains(out, "true") {
			t.Fatalf("%s: %s", s.name, out)
		}
		got, err := sink.WaitFor(i+2, 60*time.Second)
		if err != nil {
			t.Fatalf("%s did not arrive: %v", s.name, err)
		}
		if a := sender(t, got[i+1].Data); a.Address != s.wantEmail || a.Name != s.wantName {
			t.Errorf("%s arrived from %q <%s>, want %q <%s>", s.name, a.Name, a.Address, s.wantName, s.wantEmail)
		}
	}
	p.testScreensInWords(t, "Office relay")
}

// narrowColumnsJS lists, at the page's width, the cells of the list
// tables that are narrower than the longest word of their column's
// header, measured in the cell's own font.
const narrowColumnsJS = `(() => {
	const ctx = document.createElement("canvas").getContext("2d");
	const out = [];
	for (const table of document.querySelectorAll("table.widefat")) {
		if (!table.getClientRects().length) continue;
		const heads = [...table.querySelectorAll("thead th")].map((th) => th.textContent.trim());
		for (const tr of table.querySelectorAll("tbody tr")) {
			[...tr.children].forEach((td, i) => {
				const word = (heads[i] || "").split(/\s+/).reduce((a, b) => (b.length > a.length ? b : a), "");
				if (!word || td.classList.contains("empty")) return;
				const cs = getComputedStyle(td);
				ctx.font = "600 " + cs.fontSize + " " + cs.fontFamily;
				const need = ctx.measureText(word).width;
				const has = td.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
				if (has + 0.5 < need) out.push(heads[i] + ": " + Math.round(has) + " px for " + Math.round(need) + " px");
			});
		}
	}
	return out; })()`

// createdCell is the text of log id's Created cell in the logs list.
func createdCell(b *browser, id int64) string {
	b.t.Helper()
	return b.textOf(fmt.Sprintf(`tr:has(a[href="#/logs/%d"]) td[data-colname="Created"]`, id))
}

// testScreensInWords: settings grouped with labels and units, alert
// channels and events in words, the logs in the site's date format and
// zone with connection names, a sent message's headers, a retrying
// message's next attempt, and list tables that stack at 390 px.
func (p *peopleSite) testScreensInWords(t *testing.T, connName string) {
	b, site := p.b, p.site

	// Settings: the groups in order, a label and unit in words.
	b.run("open the settings", show("#/settings"), chromedp.WaitVisible("#set-health_check_interval", chromedp.ByQuery))
	var groups []string
	b.eval(`[...document.querySelectorAll(".settings-group > legend")].map((l) => l.textContent)`, &groups)
	if want := "Sending|Email log|Alerts and reports|Health and OAuth|Staging|Flood guard"; strings.Join(groups, "|") != want {
		t.Errorf("the settings groups read %q, want %s", groups, want)
	}
	var row struct{ Group, Label, Unit, Help string }
	b.eval(`(() => { const f = document.querySelector('.field[data-key="health_check_interval"]');
		return { group: f.closest("fieldset").querySelector("legend").textContent, label: f.querySelector("label").textContent,
			unit: f.querySelector(".unit").textContent, help: f.querySelector(".help").textContent }; })()`, &row)
	if row.Group != "Health and OAuth" || row.Label != "Check every" || row.Unit != "minutes" || row.Help == "" {
		t.Errorf("health_check_interval shows as %+v", row)
	}
	if txt := b.textOf("#summary-report"); !strings.Contains(txt, "Weekly to the site's admin email by default") {
		t.Errorf("the summary report does not say it is on by default: %s", txt)
	}
	p.b.shots("settings")

	// Alerts: channel types and events by name.
	b.run("open the alerts", show("#/alerts"), chromedp.WaitVisible(`a[href^="#/alerts/"]`, chromedp.ByQuery))
	txt := b.textOf("table.widefat tbody")
	for _, want := range []string{"Email", "A message failed for good", "A connection stopped working"} {
		if !strings.Contains(txt, want) {
			t.Errorf("the alert channels read %q, want %q", txt, want)
		}
	}
	if strings.Contains(txt, "delivery_failed") || strings.Contains(txt, "connection_down") {
		t.Errorf("the alert channels show event keys: %q", txt)
	}
	b.run("open a new channel", show("#/alerts/new"), chromedp.WaitVisible("#al-type", chromedp.ByQuery))
	var types []string
	b.eval(`[...document.querySelectorAll("#al-type option")].map((o) => o.text)`, &types)
	if got := strings.Join(types, "|"); !strings.Contains(got, "Slack") || !strings.Contains(got, "SMS (Twilio)") || strings.Contains(got, "twilio") {
		t.Errorf("the channel types read %q", got)
	}
	p.b.shots("alerts")

	// The site's own date and time format and zone.
	site.PHP(t, `update_option( 'date_format', 'd.m.Y' ); update_option( 'time_format', 'H:i' ); update_option( 'timezone_string', 'Europe/Berlin' );`)
	var logs []struct {
		ID        int64     `json:"id"`
		CreatedAt time.Time `json:"created_at"`
		Message   struct {
			Subject string `json:"subject"`
		} `json:"message"`
	}
	servicetest.Call(t, "GET", p.svc.Base+"/logs?per_page=100", "", p.admin).JSON(t, &logs)
	var reset int64
	for _, l := range logs {
		if strings.Contains(l.Message.Subject, "Password Reset") {
			reset = l.ID
		}
	}
	if reset == 0 {
		t.Fatalf("no password reset among the logs %+v", logs)
	}
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	b.run("reload with the site's format", chromedp.Reload(), chromedp.WaitVisible(`nav a[data-screen="dashboard"]`, chromedp.ByQuery),
		show("#/logs"), chromedp.WaitVisible(fmt.Sprintf(`a[href="#/logs/%d"]`, reset), chromedp.ByQuery))
	for _, l := range logs {
		if got, want := createdCell(b, l.ID), l.CreatedAt.In(berlin).Format("02.01.2006 15:04"); got != want {
			t.Errorf("log %d was created %q in the list, want %q (d.m.Y H:i, Europe/Berlin)", l.ID, got, want)
		}
	}
	if txt := b.textOf(fmt.Sprintf(`tr:has(a[href="#/logs/%d"])`, reset)); !strings.Contains(txt, connName) || !strings.Contains(txt, "Delivered") {
		t.Errorf("the reset's row reads %q, want its connection %q and Delivered", txt, connName)
	}
	p.b.shots("logs")

	// A formatter of PHP's date() formats, in a zone or at an offset.
	formats := []struct {
		format, zone string
		offset       float64
		want         string
	}{
		{"d.m.Y H:i", "Europe/Berlin", 0, "06.12.2026 05:41"},
		{"F j, Y g:i a", "", 0, "December 6, 2026 4:41 am"},
		{"D, d M y G:i:s A T", "America/New_York", 0, "Sat, 05 Dec 26 23:41:22 PM EST"},
		{`l jS \o\f F`, "", 5.5, "Sunday 6th of December"},
		{"n/j/Y h:i T", "", -3.5, "12/6/2026 01:11 -03:30"},
		{"Y-m-d H:i:s", "No/Such_Zone", 1, "2026-12-06 05:41:22"},
	}
	for _, f := range formats {
		var got string
		b.run("format "+f.format, chromedp.Evaluate(fmt.Sprintf(`import("./js/ui.js").then((m) => m.formatDate(new Date("2026-12-06T04:41:22Z"), %q, %q, %v))`,
			f.format, f.zone, f.offset), &got, func(p *cdpruntime.EvaluateParams) *cdpruntime.EvaluateParams { return p.WithAwaitPromise(true) }))
		if got != f.want {
			t.Errorf("formatDate(%q, %q, %v) = %q, want %q", f.format, f.zone, f.offset, got, f.want)
		}
	}

	// A sent message's detail: its connection by name, its headers.
	b.run("open the reset's log", show(fmt.Sprintf("#/logs/%d", reset)), chromedp.WaitVisible("#hdr-h", chromedp.ByQuery))
	if txt := b.textOf("dl.facts"); !strings.Contains(txt, connName) || strings.Contains(txt, "#1") {
		t.Errorf("the log's facts read %q, want the connection %q by name", txt, connName)
	}
	if txt := b.textOf("#hdr-h + table"); !strings.Contains(txt, "Example Shop <hello@shop.example>") || strings.Contains(txt, "Nothing here yet") {
		t.Errorf("the sent message's headers read %q", txt)
	}
	p.b.shots("log-detail")

	// A message the server asks to try later: its next attempt, and the
	// attempt's outcome in words.
	p.sink.FailNext(5, 451, "4.3.0 try again later")
	if out := site.PHP(t, `var_export( wp_mail( 'later@example.org', 'Retry me', 'Soon' ) );`); !strings.Contains(out, "true") {
		t.Fatalf("wp_mail: %s", out)
	}
	var queued []struct {
		ID int64 `json:"id"`
	}
	servicetest.Call(t, "GET", p.svc.Base+"/logs?search=later@example.org", "", p.admin).JSON(t, &queued)
	if len(queued) != 1 {
		t.Fatalf("the retried message's logs: %+v", queued)
	}
	// The screen is drawn again until the first attempt has failed.
	b.run("open the retrying log", show(fmt.Sprintf("#/logs/%d", queued[0].ID)),
		chromedp.Poll(`(() => { if (document.querySelector("#log-next-attempt")) return true;
			if (!document.querySelector("#screen[aria-busy]")) window.dispatchEvent(new HashChangeEvent("hashchange"));
			return false; })()`, nil, chromedp.WithPollingInterval(200*time.Millisecond)))
	if txt := b.textOf("#log-next-attempt"); !regexp.MustCompile(`^\d{2}\.\d{2}\.\d{4} \d{2}:\d{2}$`).MatchString(txt) {
		t.Errorf("the next attempt reads %q, want d.m.Y H:i", txt)
	}
	if txt := b.textOf("#att-h + table"); !strings.Contains(txt, "Temporary failure, will retry") || !strings.Contains(txt, connName) {
		t.Errorf("the attempts read %q", txt)
	}

	// At 390 px the list tables stack: no column narrower than its
	// header word.
	for _, screen := range []string{"#/logs", "#/connections", "#/alerts", "#/dashboard"} {
		b.run("open "+screen+" at 390 px", chromedp.EmulateViewport(390, 844), show(screen),
			chromedp.WaitVisible("table.widefat tbody td", chromedp.ByQuery), settled())
		var narrow []string
		b.eval(narrowColumnsJS, &narrow)
		if len(narrow) > 0 {
			t.Errorf("%s at 390 px squeezes columns: %v", screen, narrow)
		}
	}
	b.run("back to desktop width", chromedp.EmulateViewport(1280, 900))
	for _, screen := range []struct{ name, fragment, sel string }{
		{"dashboard", "#/dashboard", "svg.chart"},
		{"connections", "#/connections", `a[href^="#/connections/"]`},
		{"connection", "#/connections/1", "#conn-name"},
	} {
		b.run("open "+screen.name, show(screen.fragment), chromedp.WaitVisible(screen.sel, chromedp.ByQuery))
		p.b.shots(screen.name)
	}
}
