package webhooks_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/pro/events"
	"github.com/mailsvc/mailsvc/app/pro/suppression"
	"github.com/mailsvc/mailsvc/app/pro/webhooks"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/sendgridfake"
	"github.com/mailsvc/mailsvc/test/fakes/snsfake"
)

// memConns holds connections with their effective settings.
type memConns []*core.Connection

func (m memConns) List(context.Context, int, int) ([]*core.Connection, int, error) {
	out := make([]*core.Connection, len(m))
	for i, c := range m {
		masked := *c
		masked.Settings = core.Settings{}
		for k, v := range c.Settings {
			masked.Settings[k] = v
			if strings.Contains(k, "key") || strings.Contains(k, "password") {
				masked.Settings[k] = core.Mask
			}
		}
		out[i] = &masked
	}
	return out, len(m), nil
}

func (m memConns) Effective(_ context.Context, id int64) (*core.Connection, error) {
	for _, c := range m {
		if c.ID == id {
			return c, nil
		}
	}
	return nil, core.Errorf(core.ENOTFOUND, "no connection")
}

// memStore is the receiver's store in memory; it counts every call, so a
// test can prove a refused call touched nothing.
type memStore struct {
	mu       sync.Mutex
	calls    int
	seen     map[string]bool
	logs     map[string]int64 // provider message id → log id
	status   map[int64]string
	lastErr  map[int64]string
	events   []events.LogEvent
	suppress []suppression.Suppression
}

func newStore() *memStore {
	return &memStore{seen: map[string]bool{}, logs: map[string]int64{}, status: map[int64]string{}, lastErr: map[int64]string{}}
}

func (s *memStore) addLog(id int64, pid string) {
	s.logs[pid] = id
	s.status[id] = core.StatusDelivered
}

func (s *memStore) RememberWebhookEvent(_ context.Context, provider, id string, _ time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	k := provider + "|" + id
	if s.seen[k] {
		return false, nil
	}
	s.seen[k] = true
	return true, nil
}

func (s *memStore) FindLogIDsByProviderMessageIDs(_ context.Context, ids []string) (map[string]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	out := map[string]int64{}
	for _, id := range ids {
		if l, ok := s.logs[id]; ok {
			out[id] = l
		}
	}
	return out, nil
}

func (s *memStore) RecordLogEvent(_ context.Context, ev *events.LogEvent, status, lastError string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	s.events = append(s.events, *ev)
	if status != "" {
		s.status[ev.LogID], s.lastErr[ev.LogID] = status, lastError
		return true, nil
	}
	return false, nil
}

func (s *memStore) AddFromEvent(_ context.Context, emails []string, reason, source string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	for _, e := range emails {
		s.suppress = append(s.suppress, suppression.Suppression{Email: e, Reason: reason, SourceEvent: source})
	}
	return len(emails), nil
}

func (s *memStore) touched() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

type fixture struct {
	svc      *webhooks.Service
	store    *memStore
	received []map[string]any
	ses      []map[string]any
}

func newFixture(t *testing.T, conns memConns, now time.Time, sns *webhooks.SNSVerifier) *fixture {
	f := &fixture{store: newStore()}
	hooks := &core.Hooks{}
	hooks.AddAction(core.HookWebhookReceived, func(args ...any) { f.received = append(f.received, args[1].(map[string]any)) })
	hooks.AddAction(core.HookWebhookSES, func(args ...any) { f.ses = append(f.ses, args[0].(map[string]any)) })
	f.svc = &webhooks.Service{Connections: conns, Store: f.store, Suppressions: f.store, Hooks: hooks, SNS: sns,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return now }}
	return f
}

func codeOf(err error) string { return core.ErrorCode(err) }

// The SendGrid published test vector (sendgrid-go,
// helpers/eventwebhook/eventwebhook_test.go) verifies.
func TestSendGridPublishedVector(t *testing.T) {
	const (
		key = "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE83T4O/n84iotIvIW4mdBgQ/7dAfSmpqIM8kF9mN1flpVKS3GRqe62gw+2fNNRaINXvVpiglSI8eNEc6wEA3F+g=="
		sig = "MEUCIGHQVtGj+Y3LkG9fLcxf3qfI10QysgDWmMOVmxG0u6ZUAiEAyBiXDWzM+uOe5W0JuG+luQAbPIqHh89M15TluLtEZtM="
		ts  = "1600112502"
	)
	body := []byte(`[{"email":"hello@world.com","event":"dropped","reason":"Bounced Address","sg_event_id":"ZHJvcC0xMDk5NDkxOS1MUnpYbF9OSFN0T0doUTRrb2ZTbV9BLTA","sg_message_id":"LRzXl_NHStOGhQ4kofSm_A.filterdrecv-p3mdw1-756b745b58-kmzbl-18-5F5FC76C-9.0","smtp-id":"<LRzXl_NHStOGhQ4kofSm_A@ismtpd0039p1iad1.sendgrid.net>","timestamp":1600112492}]` + "\r\n")
	pub, err := webhooks.ParseSendGridKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if !webhooks.VerifySendGrid(pub, ts, body, sig) {
		t.Fatal("the published vector does not verify")
	}
	if webhooks.VerifySendGrid(pub, "1600112503", body, sig) || webhooks.VerifySendGrid(pub, ts, bytes.Replace(body, []byte("dropped"), []byte("bounced"), 1), sig) {
		t.Fatal("a changed timestamp or body verifies")
	}

	// Through the receiver, at the vector's time: the log with the
	// message id before the first '.' is failed.
	at := time.Unix(1600112502, 0)
	f := newFixture(t, memConns{{ID: 1, Driver: "sendgrid", Settings: core.Settings{webhooks.KeySendGridPublicKey: key}}}, at, nil)
	f.store.addLog(7, "LRzXl_NHStOGhQ4kofSm_A")
	h := http.Header{}
	h.Set(webhooks.SendGridSignatureHeader, sig)
	h.Set(webhooks.SendGridTimestampHeader, ts)
	res, err := f.svc.Receive(context.Background(), "sendgrid", webhooks.Request{Header: h, Body: body})
	if err != nil || res.Matched != 1 || f.store.status[7] != core.StatusFailed || !strings.Contains(f.store.lastErr[7], "dropped by sendgrid for hello@world.com") {
		t.Fatalf("Receive = %+v, %v; status %q %q", res, err, f.store.status[7], f.store.lastErr[7])
	}
	// Ten minutes later the same call is stale.
	f.svc.Now = func() time.Time { return at.Add(10 * time.Minute) }
	if _, err := f.svc.Receive(context.Background(), "sendgrid", webhooks.Request{Header: h, Body: body}); codeOf(err) != core.EUNAUTHORIZED {
		t.Fatalf("stale call: %v", err)
	}
}

// signer makes calls signed with each provider's real algorithm.
type signer struct {
	sgKey  *ecdsa.PrivateKey
	sgPub  string
	mgKey  string
	pmUser string
	pmPass string
	topic  string
	sns    *snsfake.Fake
	now    time.Time
}

func newSigner(t *testing.T, now time.Time) *signer {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	return &signer{sgKey: k, sgPub: base64.StdEncoding.EncodeToString(der), mgKey: "key-mailgun-signing-secret",
		pmUser: "hook", pmPass: "pm-hook-secret", topic: "arn:aws:sns:us-east-1:123456789012:ses-events",
		sns: snsfake.Start(t, "us-east-1"), now: now}
}

func (s *signer) conns() memConns {
	return memConns{
		{ID: 1, Driver: "sendgrid", Settings: core.Settings{webhooks.KeySendGridPublicKey: "bm90IGEga2V5"}}, // a broken key is skipped
		{ID: 2, Driver: "sendgrid", Settings: core.Settings{webhooks.KeySendGridPublicKey: s.sgPub}},
		{ID: 3, Driver: "mailgun", Settings: core.Settings{webhooks.KeyMailgunSigningKey: s.mgKey}},
		{ID: 4, Driver: "postmark", Settings: core.Settings{webhooks.KeyPostmarkUsername: s.pmUser, webhooks.KeyPostmarkPassword: s.pmPass}},
		{ID: 5, Driver: "ses", Settings: core.Settings{webhooks.KeySESTopicARNs: "arn:aws:sns:eu-west-1:1:other, " + s.topic}},
		{ID: 6, Driver: "smtp", Settings: core.Settings{"password": "x"}},
		{ID: 7, Driver: "mandrill", Settings: core.Settings{webhooks.KeyMandrillKey: mandrillKey, webhooks.KeyMandrillURL: mandrillURL}},
		{ID: 8, Driver: "elasticemail", Settings: core.Settings{webhooks.KeyElasticEmailToken: elasticEmailToken}},
	}
}

// The webhook secrets of the Mandrill and Elastic Email connections.
const (
	mandrillKey       = "md-webhook-key"
	mandrillURL       = "https://shop.example.com/wp-json/mailsvc/v1/pro/webhooks/mandrill"
	elasticEmailToken = "ee-notify-token"
)

// mandrill returns a Mandrill call of the events JSON signed with key
// for webhookURL.
func mandrill(eventsJSON, key, webhookURL string) webhooks.Request {
	form := url.Values{"mandrill_events": {eventsJSON}}
	h := http.Header{}
	h.Set(webhooks.MandrillSignatureHeader, webhooks.SignMandrill(key, webhookURL, form))
	h.Set("Content-Type", "application/x-www-form-urlencoded")
	return webhooks.Request{Method: "POST", Header: h, Body: []byte(form.Encode())}
}

// elasticEmail returns an Elastic Email notification: a GET whose query
// holds the event and the token.
func elasticEmail(query, token string) webhooks.Request {
	q, _ := url.ParseQuery(query)
	if token != "" {
		q.Set("token", token)
	}
	return webhooks.Request{Method: "GET", Query: q, Header: http.Header{}}
}

func (s *signer) sendgrid(body string, at time.Time, key *ecdsa.PrivateKey) webhooks.Request {
	ts := strconv.FormatInt(at.Unix(), 10)
	d := sha256.Sum256(append([]byte(ts), body...))
	sig, _ := ecdsa.SignASN1(rand.Reader, key, d[:])
	h := http.Header{}
	h.Set(webhooks.SendGridSignatureHeader, base64.StdEncoding.EncodeToString(sig))
	h.Set(webhooks.SendGridTimestampHeader, ts)
	return webhooks.Request{Header: h, Body: []byte(body)}
}

func (s *signer) mailgun(eventData string, at time.Time, key, token string) webhooks.Request {
	ts := strconv.FormatInt(at.Unix(), 10)
	body := fmt.Sprintf(`{"signature":{"timestamp":%q,"token":%q,"signature":%q},"event-data":%s}`, ts, token, webhooks.SignMailgun(key, ts, token), eventData)
	return webhooks.Request{Header: http.Header{}, Body: []byte(body)}
}

func (s *signer) postmark(body, user, pass string) webhooks.Request {
	r, _ := http.NewRequest("POST", "/", nil)
	r.SetBasicAuth(user, pass)
	return webhooks.Request{Header: r.Header, Body: []byte(body)}
}

func sns(body []byte) webhooks.Request { return webhooks.Request{Header: http.Header{}, Body: body} }

func TestReceiveVerifiesEachProvider(t *testing.T) {
	now := time.Now()
	s := newSigner(t, now)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	verifier := &webhooks.SNSVerifier{Client: s.sns.Client()}
	sgBounce := `[{"email":"Gone@Example.com","event":"bounce","type":"bounce","reason":"550 5.1.1 unknown","sg_event_id":"ev-1","sg_message_id":"sgid.filter-1","timestamp":%d}]`
	// sesNote is an SES notification signed by the trusted topic.
	sesNote := func(message string, at time.Time, version string) webhooks.Request {
		return sns(s.sns.Notification(s.topic, message, at, version))
	}
	// snsWith is a signed SNS notification with one field changed after
	// signing.
	snsWith := func(field, value string) webhooks.Request {
		var m map[string]string
		_ = json.Unmarshal(s.sns.Notification(s.topic, "{}", now, "2"), &m)
		m[field] = value
		b, _ := json.Marshal(m)
		return sns(b)
	}
	mgFailed := `{"event":"failed","severity":"permanent","reason":"bounce","recipient":"gone@example.com","timestamp":%d.5,"message":{"headers":{"message-id":"<mgid@example.com>"}},"delivery-status":{"description":"No such user"}}`
	pmBounce := `{"RecordType":"Bounce","Type":"HardBounce","TypeCode":1,"MessageID":"pmid","Email":"gone@example.com","BouncedAt":"2025-01-01T00:00:00Z","Description":"Unknown user"}`
	mdEvent := func(name string) string {
		return fmt.Sprintf(`[{"event":%q,"_id":"mdid","ts":%d,"msg":{"_id":"mdid","email":"Gone@example.com","state":"bounced","bounce_description":"bad_mailbox","diag":"smtp;550 5.1.1 unknown"}}]`, name, now.Unix())
	}
	eeBounce := "status=Error&category=NoMailbox&to=Gone%40example.com&messageid=eeid&transaction=eetx&date=" + url.QueryEscape(now.UTC().Format("1/2/2006 3:04:05 PM"))

	tests := []struct {
		name     string
		provider string
		req      func() webhooks.Request
		conns    memConns
		wantCode string
		// on success
		wantStatus string // of log 10
		suppressed bool
	}{
		{"sendgrid hard bounce", "sendgrid", func() webhooks.Request { return s.sendgrid(fmt.Sprintf(sgBounce, now.Unix()), now, s.sgKey) }, nil, "", core.StatusFailed, true},
		{"sendgrid forged", "sendgrid", func() webhooks.Request { return s.sendgrid(fmt.Sprintf(sgBounce, now.Unix()), now, other) }, nil, core.EUNAUTHORIZED, "", false},
		{"sendgrid stale", "sendgrid", func() webhooks.Request {
			return s.sendgrid(fmt.Sprintf(sgBounce, now.Unix()), now.Add(-6*time.Minute), s.sgKey)
		}, nil, core.EUNAUTHORIZED, "", false},
		{"sendgrid no headers", "sendgrid", func() webhooks.Request { return webhooks.Request{Header: http.Header{}, Body: []byte("[]")} }, nil, core.EUNAUTHORIZED, "", false},
		{"sendgrid signed non-JSON", "sendgrid", func() webhooks.Request { return s.sendgrid("not json", now, s.sgKey) }, nil, core.EBADREQUEST, "", false},
		{"sendgrid no secret", "sendgrid", func() webhooks.Request { return s.sendgrid(fmt.Sprintf(sgBounce, now.Unix()), now, s.sgKey) }, memConns{{ID: 1, Driver: "sendgrid", Settings: core.Settings{"api_key": "k"}}}, core.EUNAUTHORIZED, "", false},
		{"mailgun permanent failure", "mailgun", func() webhooks.Request { return s.mailgun(fmt.Sprintf(mgFailed, now.Unix()), now, s.mgKey, "tok-a") }, nil, "", core.StatusFailed, true},
		{"mailgun forged", "mailgun", func() webhooks.Request {
			return s.mailgun(fmt.Sprintf(mgFailed, now.Unix()), now, "wrong-key", "tok-b")
		}, nil, core.EUNAUTHORIZED, "", false},
		{"mailgun stale", "mailgun", func() webhooks.Request {
			return s.mailgun(fmt.Sprintf(mgFailed, now.Unix()), now.Add(-time.Hour), s.mgKey, "tok-c")
		}, nil, core.EUNAUTHORIZED, "", false},
		{"mailgun bad hex", "mailgun", func() webhooks.Request {
			return webhooks.Request{Body: []byte(`{"signature":{"timestamp":"1","token":"t","signature":"zz"}}`)}
		}, nil, core.EUNAUTHORIZED, "", false},
		{"mailgun malformed", "mailgun", func() webhooks.Request { return webhooks.Request{Body: []byte(`{`)} }, nil, core.EBADREQUEST, "", false},
		{"postmark hard bounce", "postmark", func() webhooks.Request { return s.postmark(pmBounce, s.pmUser, s.pmPass) }, nil, "", core.StatusFailed, true},
		{"postmark wrong password", "postmark", func() webhooks.Request { return s.postmark(pmBounce, s.pmUser, "guess") }, nil, core.EUNAUTHORIZED, "", false},
		{"postmark wrong user", "postmark", func() webhooks.Request { return s.postmark(pmBounce, "other", s.pmPass) }, nil, core.EUNAUTHORIZED, "", false},
		{"postmark no auth", "postmark", func() webhooks.Request { return webhooks.Request{Header: http.Header{}, Body: []byte(pmBounce)} }, nil, core.EUNAUTHORIZED, "", false},
		{"ses v1 bounce", "ses", func() webhooks.Request {
			return sesNote(snsfake.SESBounce("sesid", "gone@example.com", true), now, "1")
		}, nil, "", core.StatusFailed, true},
		{"ses v2 complaint", "ses", func() webhooks.Request { return sesNote(snsfake.SESComplaint("sesid", "gone@example.com"), now, "2") }, nil, "", core.StatusFailed, true},
		{"ses soft bounce", "ses", func() webhooks.Request {
			return sesNote(snsfake.SESBounce("sesid", "gone@example.com", false), now, "2")
		}, nil, "", core.StatusFailed, false},
		{"ses delivery", "ses", func() webhooks.Request { return sesNote(snsfake.SESDelivery("sesid", "gone@example.com"), now, "2") }, nil, "", core.StatusDelivered, false},
		{"ses untrusted topic", "ses", func() webhooks.Request {
			return sns(s.sns.Notification("arn:aws:sns:us-east-1:9:evil", snsfake.SESBounce("sesid", "gone@example.com", true), now, "2"))
		}, nil, core.EUNAUTHORIZED, "", false},
		{"ses tampered", "ses", func() webhooks.Request {
			b := s.sns.Notification(s.topic, snsfake.SESBounce("sesid", "gone@example.com", true), now, "2")
			return sns(bytes.Replace(b, []byte("gone@example.com"), []byte("else@example.com"), 1))
		}, nil, core.EUNAUTHORIZED, "", false},
		{"ses certificate off sns host", "ses", func() webhooks.Request {
			return snsWith("SigningCertURL", "https://evil.example.com/SimpleNotificationService-fake.pem")
		}, nil, core.EUNAUTHORIZED, "", false},
		{"ses stale", "ses", func() webhooks.Request {
			return sesNote(snsfake.SESBounce("sesid", "gone@example.com", true), now.Add(-10*time.Minute), "2")
		}, nil, core.EUNAUTHORIZED, "", false},
		{"ses unknown version", "ses", func() webhooks.Request { return snsWith("SignatureVersion", "3") }, nil, core.EUNAUTHORIZED, "", false},
		{"ses non-string field", "ses", func() webhooks.Request { return sns([]byte(`{"Type":1}`)) }, nil, core.EBADREQUEST, "", false},
		{"mandrill hard bounce", "mandrill", func() webhooks.Request { return mandrill(mdEvent("hard_bounce"), mandrillKey, mandrillURL) }, nil, "", core.StatusFailed, true},
		{"mandrill spam", "mandrill", func() webhooks.Request { return mandrill(mdEvent("spam"), mandrillKey, mandrillURL) }, nil, "", core.StatusFailed, true},
		{"mandrill unsubscribe", "mandrill", func() webhooks.Request { return mandrill(mdEvent("unsub"), mandrillKey, mandrillURL) }, nil, "", core.StatusDelivered, true},
		{"mandrill send", "mandrill", func() webhooks.Request { return mandrill(mdEvent("send"), mandrillKey, mandrillURL) }, nil, "", core.StatusDelivered, false},
		{"mandrill wrong key", "mandrill", func() webhooks.Request { return mandrill(mdEvent("hard_bounce"), "guess", mandrillURL) }, nil, core.EUNAUTHORIZED, "", false},
		{"mandrill signed for another URL", "mandrill", func() webhooks.Request {
			return mandrill(mdEvent("hard_bounce"), mandrillKey, mandrillURL+"/")
		}, nil, core.EUNAUTHORIZED, "", false},
		{"mandrill tampered", "mandrill", func() webhooks.Request {
			r := mandrill(mdEvent("send"), mandrillKey, mandrillURL)
			r.Body = bytes.Replace(r.Body, []byte("send"), []byte("spam"), 1)
			return r
		}, nil, core.EUNAUTHORIZED, "", false},
		{"mandrill no signature", "mandrill", func() webhooks.Request {
			r := mandrill(mdEvent("send"), mandrillKey, mandrillURL)
			r.Header.Del(webhooks.MandrillSignatureHeader)
			return r
		}, nil, core.EUNAUTHORIZED, "", false},
		{"mandrill signed non-JSON", "mandrill", func() webhooks.Request { return mandrill("not json", mandrillKey, mandrillURL) }, nil, core.EBADREQUEST, "", false},
		{"mandrill as GET", "mandrill", func() webhooks.Request {
			r := mandrill(mdEvent("send"), mandrillKey, mandrillURL)
			r.Method = "GET"
			return r
		}, nil, core.ENOTFOUND, "", false},
		{"elasticemail hard bounce", "elasticemail", func() webhooks.Request { return elasticEmail(eeBounce, elasticEmailToken) }, nil, "", core.StatusFailed, true},
		{"elasticemail soft bounce", "elasticemail", func() webhooks.Request {
			return elasticEmail(strings.Replace(eeBounce, "NoMailbox", "Throttled", 1), elasticEmailToken)
		}, nil, "", core.StatusFailed, false},
		{"elasticemail complaint", "elasticemail", func() webhooks.Request {
			return elasticEmail(strings.Replace(eeBounce, "status=Error", "status=AbuseReport", 1), elasticEmailToken)
		}, nil, "", core.StatusFailed, true},
		{"elasticemail unsubscribe", "elasticemail", func() webhooks.Request {
			return elasticEmail(strings.Replace(eeBounce, "status=Error", "status=Unsubscribed", 1), elasticEmailToken)
		}, nil, "", core.StatusDelivered, true},
		{"elasticemail sent", "elasticemail", func() webhooks.Request {
			return elasticEmail(strings.Replace(eeBounce, "status=Error", "status=Sent", 1), elasticEmailToken)
		}, nil, "", core.StatusDelivered, false},
		{"elasticemail as POST form", "elasticemail", func() webhooks.Request {
			return webhooks.Request{Method: "POST", Header: http.Header{}, Body: []byte(eeBounce + "&token=" + elasticEmailToken)}
		}, nil, "", core.StatusFailed, true},
		{"elasticemail wrong token", "elasticemail", func() webhooks.Request { return elasticEmail(eeBounce, "guess") }, nil, core.EUNAUTHORIZED, "", false},
		{"elasticemail no token", "elasticemail", func() webhooks.Request { return elasticEmail(eeBounce, "") }, nil, core.EUNAUTHORIZED, "", false},
		{"elasticemail no status", "elasticemail", func() webhooks.Request { return elasticEmail("to=a@example.com", elasticEmailToken) }, nil, core.EBADREQUEST, "", false},
		{"unknown provider", "nosuch", func() webhooks.Request { return webhooks.Request{} }, nil, core.ENOTFOUND, "", false},
		{"body too large", "postmark", func() webhooks.Request {
			return s.postmark(`{"x":"`+strings.Repeat("a", webhooks.MaxBody)+`"}`, s.pmUser, s.pmPass)
		}, nil, core.EBADREQUEST, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conns := tt.conns
			if conns == nil {
				conns = s.conns()
			}
			f := newFixture(t, conns, now, verifier)
			for _, pid := range []string{"sgid", "mgid@example.com", "pmid", "sesid", "mdid", "eeid"} {
				f.store.addLog(10, pid)
			}
			res, err := f.svc.Receive(context.Background(), tt.provider, tt.req())
			if tt.wantCode != "" {
				if codeOf(err) != tt.wantCode {
					t.Fatalf("err %v, want %s", err, tt.wantCode)
				}
				if n := f.store.touched(); n != 0 {
					t.Fatalf("a refused call made %d store calls", n)
				}
				if len(f.received) != 0 {
					t.Fatal("a refused call fired the received hook")
				}
				return
			}
			if err != nil || res.Matched != 1 || res.Unknown != 0 {
				t.Fatalf("Receive = %+v, %v", res, err)
			}
			if f.store.status[10] != tt.wantStatus {
				t.Fatalf("log status %q, want %q", f.store.status[10], tt.wantStatus)
			}
			if got := len(f.store.suppress) == 1 && f.store.suppress[0].Email == "gone@example.com"; got != tt.suppressed {
				t.Fatalf("suppressions %+v, want suppressed=%v", f.store.suppress, tt.suppressed)
			}
			if len(f.store.events) != 1 || f.store.events[0].LogID != 10 || f.store.events[0].Provider != tt.provider {
				t.Fatalf("events %+v", f.store.events)
			}
			if len(f.received) != 1 || f.received[0]["log_id"] != int64(10) || f.received[0]["provider"] != tt.provider {
				t.Fatalf("hook payloads %+v", f.received)
			}
			if tt.provider == "ses" && len(f.ses) != 1 {
				t.Fatalf("the SES hook fired %d times", len(f.ses))
			}
		})
	}
}

func TestReplaysAndUnknownMessages(t *testing.T) {
	now := time.Now()
	s := newSigner(t, now)
	f := newFixture(t, s.conns(), now, &webhooks.SNSVerifier{Client: s.sns.Client()})
	f.store.addLog(10, "known")
	ctx := context.Background()

	mg := s.mailgun(fmt.Sprintf(`{"event":"opened","recipient":"a@example.com","timestamp":%d,"message":{"headers":{"message-id":"known"}}}`, now.Unix()), now, s.mgKey, "tok-replay")
	if res, err := f.svc.Receive(ctx, "mailgun", mg); err != nil || res.Matched != 1 || f.store.status[10] != core.StatusDelivered {
		t.Fatalf("open: %+v, %v", res, err)
	}
	if _, err := f.svc.Receive(ctx, "mailgun", mg); codeOf(err) != core.ECONFLICT {
		t.Fatalf("replayed token: %v", err)
	}

	// A SendGrid batch: one known, one unknown, one event seen before.
	body := fmt.Sprintf(`[{"event":"open","email":"a@example.com","sg_event_id":"e1","sg_message_id":"known.x","timestamp":%[1]d},
		{"event":"delivered","email":"b@example.com","sg_event_id":"e2","sg_message_id":"nobody.x","timestamp":%[1]d},
		{"event":"click","email":"a@example.com","sg_event_id":"e3","timestamp":%[1]d}]`, now.Unix())
	res, err := f.svc.Receive(ctx, "sendgrid", s.sendgrid(body, now, s.sgKey))
	if err != nil || res.Received != 3 || res.Matched != 1 || res.Unknown != 2 || res.Duplicates != 0 {
		t.Fatalf("batch: %+v, %v", res, err)
	}
	// Signed again (a new signature) with the same event ids: all duplicates.
	res, err = f.svc.Receive(ctx, "sendgrid", s.sendgrid(body, now.Add(time.Second), s.sgKey))
	if err != nil || res.Duplicates != 3 || res.Matched != 0 {
		t.Fatalf("re-sent batch: %+v, %v", res, err)
	}

	pm := s.postmark(`{"RecordType":"Open","MessageID":"known","Recipient":"a@example.com"}`, s.pmUser, s.pmPass)
	if _, err := f.svc.Receive(ctx, "postmark", pm); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Receive(ctx, "postmark", pm); codeOf(err) != core.ECONFLICT {
		t.Fatalf("replayed postmark body: %v", err)
	}

	n := s.sns.Notification(s.topic, snsfake.SESDelivery("known", "a@example.com"), now, "2")
	if _, err := f.svc.Receive(ctx, "ses", sns(n)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Receive(ctx, "ses", sns(n)); codeOf(err) != core.ECONFLICT {
		t.Fatalf("replayed SNS message: %v", err)
	}
	if s.sns.CertFetches() != 1 {
		t.Fatalf("the signing certificate was fetched %d times, want 1 (cached)", s.sns.CertFetches())
	}
}

// TestEventsFindAnUncertainLogByMessageID: a log whose last attempt was
// uncertain carries the Message-ID it was sent with as its provider
// message id; SendGrid's and SES's events name the provider's own id,
// which no log knows, and the Message-ID header, by which they are
// matched.
func TestEventsFindAnUncertainLogByMessageID(t *testing.T) {
	now := time.Now()
	s := newSigner(t, now)
	f := newFixture(t, s.conns(), now, &webhooks.SNSVerifier{Client: s.sns.Client()})
	f.store.addLog(20, "uncertain.20@example.com")
	f.store.addLog(21, "uncertain.21@example.com")
	ctx := context.Background()

	body := fmt.Sprintf(`[{"event":"delivered","email":"a@example.com","sg_event_id":"u1","sg_message_id":"sgid.x","smtp-id":"<uncertain.20@example.com>","timestamp":%d}]`, now.Unix())
	if res, err := f.svc.Receive(ctx, "sendgrid", s.sendgrid(body, now, s.sgKey)); err != nil || res.Matched != 1 || res.Unknown != 0 {
		t.Fatalf("sendgrid: %+v, %v; want the event matched by smtp-id", res, err)
	}
	note, _ := json.Marshal(map[string]any{
		"notificationType": "Delivery",
		"delivery":         map[string]any{"timestamp": now.UTC().Format(time.RFC3339), "recipients": []string{"a@example.com"}},
		"mail": map[string]any{"messageId": "ses-own-id", "destination": []string{"a@example.com"},
			"commonHeaders": map[string]any{"messageId": "<uncertain.21@example.com>"}},
	})
	n := s.sns.Notification(s.topic, string(note), now, "2")
	if res, err := f.svc.Receive(ctx, "ses", sns(n)); err != nil || res.Matched != 1 || res.Unknown != 0 {
		t.Fatalf("ses: %+v, %v; want the event matched by commonHeaders.messageId", res, err)
	}
	f.store.mu.Lock()
	defer f.store.mu.Unlock()
	if len(f.store.events) != 2 || f.store.events[0].LogID != 20 || f.store.events[1].LogID != 21 {
		t.Errorf("events recorded %+v, want one for log 20 and one for log 21", f.store.events)
	}
}

// A SendGrid call replayed with its signature rewritten (s → n−s
// re-encoded as DER, or another base64 spelling of the same bytes) still
// verifies; it is refused as a replay and applies nothing again.
func TestSendGridMalleatedSignatureIsAReplay(t *testing.T) {
	now := time.Now()
	ts := strconv.FormatInt(now.Unix(), 10)
	// An event without sg_event_id: only the call's replay id guards it.
	body := []byte(fmt.Sprintf(`[{"event":"delivered","email":"a@example.com","sg_message_id":"known.x","timestamp":%d}]`, now.Unix()))
	sg, err := sendgridfake.NewEventWebhook()
	if err != nil {
		t.Fatal(err)
	}
	orig := sg.Sign(ts, body)
	for !strings.HasSuffix(orig, "=") { // a length whose base64 has unused bits
		orig = sg.Sign(ts, body)
	}
	flipped, err := sendgridfake.Malleate(orig)
	if err != nil {
		t.Fatal(err)
	}
	variants := []struct{ name, sig string }{{"s replaced by n-s", flipped}}
	for name, sig := range map[string]string{"non-canonical base64": orig, "n-s in non-canonical base64": flipped} {
		if nc, ok := sendgridfake.NonCanonicalBase64(sig); ok {
			variants = append(variants, struct{ name, sig string }{name, nc})
		}
	}
	if len(variants) < 2 {
		t.Fatalf("no non-canonical spelling of %s", orig)
	}
	pub, err := webhooks.ParseSendGridKey(sg.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	conns := memConns{{ID: 2, Driver: "sendgrid", Settings: core.Settings{webhooks.KeySendGridPublicKey: sg.PublicKey()}}}
	call := func(sig string) webhooks.Request {
		h := http.Header{}
		h.Set(webhooks.SendGridSignatureHeader, sig)
		h.Set(webhooks.SendGridTimestampHeader, ts)
		return webhooks.Request{Header: h, Body: body}
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			if v.sig == orig || !webhooks.VerifySendGrid(pub, ts, body, v.sig) {
				t.Fatalf("the rewritten signature %q is not a distinct valid one", v.sig)
			}
			f := newFixture(t, conns, now, nil)
			f.store.addLog(10, "known")
			if res, err := f.svc.Receive(context.Background(), "sendgrid", call(orig)); err != nil || res.Matched != 1 {
				t.Fatalf("first delivery: %+v, %v", res, err)
			}
			res, err := f.svc.Receive(context.Background(), "sendgrid", call(v.sig))
			if codeOf(err) != core.ECONFLICT {
				t.Fatalf("rewritten replay: %+v, %v; want %s", res, err, core.ECONFLICT)
			}
			if len(f.store.events) != 1 || len(f.received) != 1 {
				t.Fatalf("applied %d events and fired the hook %d times, want 1 and 1", len(f.store.events), len(f.received))
			}
		})
	}
}

func TestSNSSubscriptionConfirmation(t *testing.T) {
	now := time.Now()
	s := newSigner(t, now)
	f := newFixture(t, s.conns(), now, &webhooks.SNSVerifier{Client: s.sns.Client()})
	for _, v := range []string{"1", "2"} {
		res, err := f.svc.Receive(context.Background(), "ses", sns(s.sns.SubscriptionConfirmation(s.topic, now, v)))
		if err != nil || !res.SubscriptionConfirmed {
			t.Fatalf("v%s: %+v, %v", v, res, err)
		}
	}
	if s.sns.Confirmations() != 2 {
		t.Fatalf("confirmations %d, want 2", s.sns.Confirmations())
	}
	// A SubscribeURL off the SNS hosts is not followed, even when signed.
	var m snsfake.Message
	_ = json.Unmarshal(s.sns.SubscriptionConfirmation(s.topic, now, "2"), &m)
	m["SubscribeURL"] = "https://attacker.example.com/?Action=ConfirmSubscription&Token=x"
	_, err := f.svc.Receive(context.Background(), "ses", sns(s.sns.Sign(m, "2")))
	if codeOf(err) != core.EINVALID || s.sns.Confirmations() != 2 {
		t.Fatalf("off-host SubscribeURL: %v, confirmations %d", err, s.sns.Confirmations())
	}
}

func TestCheckSNSURL(t *testing.T) {
	tests := []struct {
		url string
		ok  bool
	}{
		{"https://sns.us-east-1.amazonaws.com/SimpleNotificationService-1.pem", true},
		{"https://sns.cn-north-1.amazonaws.com.cn/x.pem", true},
		{"http://sns.us-east-1.amazonaws.com/x.pem", false},
		{"https://sns.us-east-1.amazonaws.com.evil.com/x.pem", false},
		{"https://evil.com/sns.us-east-1.amazonaws.com/x.pem", false},
		{"https://user@sns.us-east-1.amazonaws.com/x.pem", false},
		{"https://sns.us-east-1.amazonaws.com:8443/x.pem", false},
		{"https://s3.amazonaws.com/x.pem", false},
		{"::", false},
	}
	for _, tt := range tests {
		if _, err := webhooks.CheckSNSURL(tt.url); (err == nil) != tt.ok {
			t.Errorf("CheckSNSURL(%q) = %v, want ok=%v", tt.url, err, tt.ok)
		}
	}
}

func TestTransitionOf(t *testing.T) {
	tests := []struct {
		ev       webhooks.Event
		status   string
		suppress string
	}{
		{webhooks.Event{Kind: events.EventBounced, Permanent: true, Recipient: "a@x.org"}, core.StatusFailed, suppression.SuppressBounce},
		{webhooks.Event{Kind: events.EventBounced, Recipient: "a@x.org"}, core.StatusFailed, ""},
		{webhooks.Event{Kind: events.EventComplained, Recipient: "a@x.org"}, core.StatusFailed, suppression.SuppressComplaint},
		{webhooks.Event{Kind: events.EventDropped, Provider: "sendgrid"}, core.StatusFailed, ""},
		{webhooks.Event{Kind: events.EventDelivered}, "", ""},
		{webhooks.Event{Kind: events.EventDeferred}, "", ""},
		{webhooks.Event{Kind: events.EventOpened}, "", ""},
		{webhooks.Event{Kind: events.EventClicked}, "", ""},
		{webhooks.Event{Kind: events.EventUnsubscribed, Recipient: "a@x.org"}, "", suppression.SuppressUnsubscribe},
	}
	for _, tt := range tests {
		tr := webhooks.TransitionOf(tt.ev)
		if tr.Status != tt.status || tr.Suppress != tt.suppress || (tt.status != "" && tr.LastError == "") {
			t.Errorf("TransitionOf(%+v) = %+v", tt.ev, tr)
		}
	}
}

// TestMandrillAndElasticEmailReplays: a call received again is a 409;
// a Mandrill event seen before, in a new call, is skipped as a
// duplicate; a Mandrill event of a recipient whose _id no log carries
// finds the log by the Message-ID the driver put in the metadata.
func TestMandrillAndElasticEmailReplays(t *testing.T) {
	now := time.Now()
	s := newSigner(t, now)
	f := newFixture(t, s.conns(), now, nil)
	f.store.addLog(10, "known")
	f.store.addLog(11, "uncertain.11@example.com")
	ctx := context.Background()

	open := fmt.Sprintf(`{"event":"open","_id":"known","ts":%d,"msg":{"_id":"known","email":"a@example.com"}}`, now.Unix())
	call := mandrill("["+open+"]", mandrillKey, mandrillURL)
	if res, err := f.svc.Receive(ctx, "mandrill", call); err != nil || res.Matched != 1 {
		t.Fatalf("open: %+v, %v", res, err)
	}
	if _, err := f.svc.Receive(ctx, "mandrill", call); codeOf(err) != core.ECONFLICT {
		t.Fatalf("replayed Mandrill call: %v", err)
	}
	byMetadata := fmt.Sprintf(`{"event":"hard_bounce","_id":"other-recipient-id","ts":%d,"msg":{"_id":"other-recipient-id","email":"b@example.com","metadata":{"mailsvc_message_id":"<uncertain.11@example.com>"}}}`, now.Unix())
	res, err := f.svc.Receive(ctx, "mandrill", mandrill("["+open+","+byMetadata+"]", mandrillKey, mandrillURL))
	if err != nil || res.Duplicates != 1 || res.Matched != 1 || f.store.status[11] != core.StatusFailed {
		t.Fatalf("batch with a seen event: %+v, %v, log 11 %q", res, err, f.store.status[11])
	}

	ee := elasticEmail("status=Opened&to=a%40example.com&messageid=known", elasticEmailToken)
	if res, err := f.svc.Receive(ctx, "elasticemail", ee); err != nil || res.Matched != 1 {
		t.Fatalf("elastic email open: %+v, %v", res, err)
	}
	if _, err := f.svc.Receive(ctx, "elasticemail", ee); codeOf(err) != core.ECONFLICT {
		t.Fatalf("replayed Elastic Email notification: %v", err)
	}
}
