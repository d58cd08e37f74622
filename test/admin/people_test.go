package admin

import (
	"bytes"
	"fmt"
	"net/http"
	"net/mail"
	"strings"
	"testing"
	"time"

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
	site := wpsite.Install(t, wpsite.Options{Prefix: "wpp_"})
	if _, err := bridge.Install(site.ContentDir); err != nil {
		t.Fatal(err)
	}
	sink := smtpsink.Start(t, smtpsink.WithAuth("mailer", "s3cret-pass"))
	dir := t.TempDir()
	svc := servicetest.StartEnv(t, dir, servicetest.Environ(dir, "MAILSVC_WP_CONFIG="+site.WPConfigPath))
	pw := site.CreateApplicationPassword(t, site.AdminLogin, "screens in people's words")
	b.run("open the screens", chromedp.Navigate("http://"+svc.Addr+"/admin/"))
	signIn(b, site.AdminLogin, pw)
	return &peopleSite{site: site, svc: svc, sink: sink, b: b, admin: func(r *http.Request) { r.SetBasicAuth(site.AdminLogin, pw) }}
}

// visibleJS answers whether the control named name inside sel is shown.
func visibleJS(sel, name string) string {
	return fmt.Sprintf(`(() => { const el = document.querySelector(%q + ' [name="%s"]'); return !!el && el.getClientRects().length > 0; })()`, sel, name)
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
// reset, while a plugin's own sender is kept unless Force from is on.
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
	b.run("open Advanced", click("#onboarding details.advanced > summary"))
	check("after Advanced", advanced, true)

	b.run("fill the wizard and send the test",
		fill("#ob-name", "Office relay"),
		fill(`#onboarding [name="host"]`, sink.Host()),
		fill(`#onboarding [name="encryption"]`, "none"),
		fill(`#onboarding [name="port"]`, fmt.Sprint(sink.Port())),
		fill(`#onboarding [name="username"]`, "mailer"),
		fill(`#onboarding [name="password"]`, "s3cret-pass"),
		fill("#ob-from_email", "hello@shop.example"),
		fill("#ob-from_name", "Example Shop"),
		fill("#ob-to", "owner@example.com"),
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
}
