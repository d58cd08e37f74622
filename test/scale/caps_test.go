package scale

import (
	"context"
	"maps"
	"strings"
	"testing"

	prostore "github.com/mailsvc/mailsvc/adapters/pro/store"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/brevofake"
	"github.com/mailsvc/mailsvc/test/fakes/elasticemailfake"
	"github.com/mailsvc/mailsvc/test/fakes/emailitfake"
	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
	"github.com/mailsvc/mailsvc/test/fakes/mailersendfake"
	"github.com/mailsvc/mailsvc/test/fakes/mailgunfake"
	"github.com/mailsvc/mailsvc/test/fakes/mailjetfake"
	"github.com/mailsvc/mailsvc/test/fakes/mailtrapfake"
	"github.com/mailsvc/mailsvc/test/fakes/mandrillfake"
	"github.com/mailsvc/mailsvc/test/fakes/postmarkfake"
	"github.com/mailsvc/mailsvc/test/fakes/sendgridfake"
	"github.com/mailsvc/mailsvc/test/fakes/sendlayerfake"
	"github.com/mailsvc/mailsvc/test/fakes/sesfake"
	"github.com/mailsvc/mailsvc/test/fakes/smtpcomfake"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

// providerCall is one send request a fake accepted: its provider
// message id and its recipients by list.
type providerCall struct {
	id          string
	to, cc, bcc []string
}

// emailsOf returns the addresses of a fake's recorded list.
func emailsOf[A any](list []A, email func(A) string) []string {
	out := make([]string, 0, len(list))
	for _, a := range list {
		out = append(out, email(a))
	}
	return out
}

// TestProviderRecipientCaps: through the built binary, a message over a
// provider's recipient cap reaches its fake (which answers 400 over the
// cap, as the API does) as several calls within the cap that together
// reach every recipient once; the log is delivered in one attempt, not
// partial, and each call's provider message id finds the log, as the
// provider's webhook events about it will.
func TestProviderRecipientCaps(t *testing.T) {
	e := newLimitsEnv(t)
	ctx := context.Background()
	type provider struct {
		name     string
		msg      core.Message
		connect  func(t *testing.T) (int64, func() []providerCall)
		perCall  func(c providerCall) bool // within the cap
		minCalls int
	}
	total := func(c providerCall) int { return len(c.to) + len(c.cc) + len(c.bcc) }
	msgTo := func(to, cc, bcc int) core.Message {
		return core.Message{From: core.Address{Email: "shop@example.com"}, To: addresses("t", to), Cc: addresses("c", cc), Bcc: addresses("b", bcc),
			Subject: "Newsletter", Text: "Hello."}
	}
	providers := []provider{
		{"sendgrid", msgTo(1100, 50, 50), func(t *testing.T) (int64, func() []providerCall) {
			const key = "SG.caps-test"
			f := sendgridfake.New(key)
			t.Cleanup(f.Close)
			id := e.connection(t, "sendgrid", "sendgrid", map[string]any{"api_key": key, "base_url": f.URL})
			return id, func() []providerCall {
				var out []providerCall
				for _, m := range f.Messages() {
					email := func(a sendgridfake.Address) string { return a.Email }
					out = append(out, providerCall{m.ID, emailsOf(m.To, email), emailsOf(m.Cc, email), emailsOf(m.Bcc, email)})
				}
				return out
			}
		}, func(c providerCall) bool { return total(c) <= sendgridfake.MaxRecipients }, 2},
		{"elasticemail", msgTo(60, 20, 20), jsonProvider(e, "elasticemail", elasticemailfake.New, nil, nil),
			func(c providerCall) bool { return total(c) <= elasticemailfake.MaxRecipients }, 2},
		{"mandrill", msgTo(1100, 0, 0), jsonProvider(e, "mandrill", mandrillfake.New, nil, func(m fakeapi.Message) string { return m.ID + "00" }),
			func(c providerCall) bool { return total(c) <= mandrillfake.MaxRecipients }, 2},
		{"sendlayer", msgTo(60, 0, 0), jsonProvider(e, "sendlayer", sendlayerfake.New, nil, nil),
			func(c providerCall) bool { return total(c) <= sendlayerfake.MaxRecipients }, 2},
		{"smtpcom", msgTo(30, 30, 0), jsonProvider(e, "smtpcom", smtpcomfake.New, map[string]any{"channel": smtpcomfake.Channel}, nil),
			func(c providerCall) bool { return total(c) <= smtpcomfake.MaxRecipients }, 2},
		{"mailtrap", msgTo(1001, 0, 0), jsonProvider(e, "mailtrap", mailtrapfake.New, nil, func(m fakeapi.Message) string { return m.ID + "-0" }),
			func(c providerCall) bool { return len(c.to) <= mailtrapfake.MaxPerField }, 2},
		{"emailit", msgTo(60, 60, 60), jsonProvider(e, "emailit", emailitfake.New, nil, func(m fakeapi.Message) string { return "em_" + m.ID }),
			func(c providerCall) bool {
				return len(c.to) <= emailitfake.MaxPerField && len(c.cc) <= emailitfake.MaxPerField && len(c.bcc) <= emailitfake.MaxPerField
			}, 2},
		{"postmark", msgTo(60, 60, 60), func(t *testing.T) (int64, func() []providerCall) {
			const key = "pm-caps-test"
			f := postmarkfake.New(key)
			t.Cleanup(f.Close)
			id := e.connection(t, "postmark", "postmark", map[string]any{"api_key": key, "base_url": f.URL})
			return id, func() []providerCall {
				var out []providerCall
				for _, m := range f.Messages() {
					email := func(a postmarkfake.Address) string { return a.Email }
					out = append(out, providerCall{m.ID, emailsOf(m.To, email), emailsOf(m.Cc, email), emailsOf(m.Bcc, email)})
				}
				return out
			}
		}, func(c providerCall) bool {
			return len(c.to) <= postmarkfake.MaxPerField && len(c.cc) <= postmarkfake.MaxPerField && len(c.bcc) <= postmarkfake.MaxPerField
		}, 2},
		{"mailgun", msgTo(1200, 0, 0), func(t *testing.T) (int64, func() []providerCall) {
			const key, domain = "mg-caps-test", "mg.example.com"
			f := mailgunfake.New(key, domain)
			t.Cleanup(f.Close)
			id := e.connection(t, "mailgun", "mailgun", map[string]any{"api_key": key, "domain": domain, "base_url": f.URL})
			return id, func() []providerCall {
				var out []providerCall
				for _, m := range f.Messages() {
					email := func(a mailgunfake.Address) string { return a.Email }
					out = append(out, providerCall{strings.Trim(m.ID, "<>"), emailsOf(m.To, email), emailsOf(m.Cc, email), emailsOf(m.Bcc, email)})
				}
				return out
			}
		}, func(c providerCall) bool { return total(c) <= mailgunfake.MaxRecipients }, 2},
		{"ses", msgTo(100, 10, 10), func(t *testing.T) (int64, func() []providerCall) {
			const access, secret = "AKIDCAPSTEST", "caps-secret"
			f := sesfake.New("eu-west-1", access, secret)
			t.Cleanup(f.Close)
			id := e.connection(t, "ses", "ses", map[string]any{"region": "eu-west-1", "access_key": access, "secret": secret, "custom_endpoint": f.URL})
			return id, func() []providerCall {
				var out []providerCall
				for _, m := range f.Messages() {
					out = append(out, providerCall{id: m.ID, bcc: m.Destinations})
				}
				return out
			}
		}, func(c providerCall) bool { return total(c) <= sesfake.MaxRecipients }, 3},
	}
	providers = append(providers,
		provider{"brevo", msgTo(150, 20, 20), jsonProvider(e, "brevo", brevofake.New, nil, brevofake.MessageID),
			func(c providerCall) bool { return total(c) <= brevofake.MaxRecipients }, 2},
		provider{"mailjet", msgTo(60, 10, 10), jsonProvider(e, "mailjet", func(key string) *fakeapi.Server { return mailjetfake.New(key, "mj-secret") },
			map[string]any{"api_secret": "mj-secret"}, func(m fakeapi.Message) string { return m.Meta["CustomID"] }),
			func(c providerCall) bool { return total(c) <= mailjetfake.MaxRecipients }, 2},
		provider{"mailersend", msgTo(60, 15, 15), jsonProvider(e, "mailersend", mailersendfake.New, nil, nil),
			func(c providerCall) bool {
				return len(c.to) <= mailersendfake.MaxTo && len(c.cc) <= mailersendfake.MaxCc && len(c.bcc) <= mailersendfake.MaxBcc
			}, 2},
	)
	r := servicetest.Call(t, "GET", e.svc.Base+"/transports", "", e.admin)
	var drivers []struct {
		Driver string             `json:"driver"`
		Caps   core.RecipientCaps `json:"recipient_caps"`
	}
	r.JSON(t, &drivers)
	caps := map[string]core.RecipientCaps{}
	for _, d := range drivers {
		caps[d.Driver] = d.Caps
	}
	if caps["sendgrid"].PerMessage != sendgridfake.MaxRecipients || caps["postmark"].To != postmarkfake.MaxPerField ||
		caps["mailgun"].PerMessage != mailgunfake.MaxRecipients || caps["ses"].PerMessage != sesfake.MaxRecipients || !caps["smtp"].Zero() {
		t.Errorf("GET /transports recipient_caps: %+v", caps)
	}
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			connID, calls := p.connect(t)
			id := e.enqueueMessage(t, connID, p.msg)
			l := e.waitLog(t, id, "the log delivered", func(l recipientsLog) bool {
				return l.Status == core.StatusDelivered || l.Status == core.StatusFailed
			})
			got := calls()
			if len(got) < p.minCalls {
				t.Fatalf("%d calls, want at least %d; log status %s, last attempt %+v", len(got), p.minCalls, l.Status, l.History)
			}
			seen := map[string]int{}
			var ids []string
			for i, c := range got {
				if !p.perCall(c) {
					t.Errorf("call %d passes the cap: to %d, cc %d, bcc %d", i+1, len(c.to), len(c.cc), len(c.bcc))
				}
				for _, list := range [][]string{c.to, c.cc, c.bcc} {
					for _, r := range list {
						seen[r]++
					}
				}
				ids = append(ids, c.id)
			}
			want := len(p.msg.To) + len(p.msg.Cc) + len(p.msg.Bcc)
			if len(seen) != want {
				t.Errorf("%d distinct recipients reached, want %d", len(seen), want)
			}
			for r, n := range seen {
				if n != 1 {
					t.Errorf("%s reached %d times", r, n)
				}
			}
			if l.Status != core.StatusDelivered || l.Partial || l.Attempts != 1 || len(l.History) != 1 {
				t.Fatalf("log: status %s, partial %v, attempts %d, history %+v", l.Status, l.Partial, l.Attempts, l.History)
			}
			found, err := prostore.New(e.db).Events().FindLogIDsByProviderMessageIDs(ctx, ids)
			if err != nil {
				t.Fatal(err)
			}
			for _, pid := range ids {
				if found[pid] != id {
					t.Errorf("provider message id %q finds log %d, want %d", pid, found[pid], id)
				}
			}
		})
	}
}

// jsonProvider connects a driver whose fake runs on fakeapi's server
// (start starts it with the key; extra settings beside the key and base
// URL) and reads its calls back; the provider message id of a call is
// the fake's id as the driver's receipt keeps it (idOf; nil: as it is).
func jsonProvider(e *limitsEnv, driver string, start func(key string) *fakeapi.Server, extra map[string]any, idOf func(fakeapi.Message) string) func(t *testing.T) (int64, func() []providerCall) {
	return func(t *testing.T) (int64, func() []providerCall) {
		key := driver + "-caps-test"
		f := start(key)
		t.Cleanup(f.Close)
		settings := map[string]any{"api_key": key, "base_url": f.URL}
		maps.Copy(settings, extra)
		id := e.connection(t, driver, driver, settings)
		return id, func() []providerCall {
			var out []providerCall
			email := func(a fakeapi.Address) string { return a.Email }
			for _, m := range f.Messages() {
				pid := m.ID
				if idOf != nil {
					pid = idOf(m)
				}
				out = append(out, providerCall{pid, emailsOf(m.To, email), emailsOf(m.Cc, email), emailsOf(m.Bcc, email)})
			}
			return out
		}
	}
}
