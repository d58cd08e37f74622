package webhooks_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/pro/suppression"
	"github.com/mailsvc/mailsvc/app/pro/webhooks"
	"github.com/mailsvc/mailsvc/core"
)

// Secrets of the connections of TestReceiveNewProviders.
const (
	brevoToken       = "brevo-hook-token"
	hookUser         = "hook"
	hookPassword     = "hook-password"
	mailerSendSecret = "ms-signing-secret"
)

var resendSecret = "whsec_" + base64.StdEncoding.EncodeToString([]byte("resend-signing-key-0123456789"))

func newProviderConns() memConns {
	return memConns{
		{ID: 1, Driver: "brevo", Settings: core.Settings{webhooks.KeyBrevoToken: brevoToken}},
		{ID: 2, Driver: "sparkpost", Settings: core.Settings{webhooks.KeyWebhookUsername: hookUser, webhooks.KeyWebhookPassword: hookPassword}},
		{ID: 3, Driver: "mailjet", Settings: core.Settings{webhooks.KeyWebhookPassword: hookPassword}},
		{ID: 4, Driver: "resend", Settings: core.Settings{webhooks.KeyWebhookSecret: resendSecret}},
		{ID: 5, Driver: "mailersend", Settings: core.Settings{webhooks.KeyWebhookSecret: mailerSendSecret}},
	}
}

func bearer(token, body string) webhooks.Request {
	h := http.Header{}
	h.Set("Authorization", "Bearer "+token)
	return webhooks.Request{Header: h, Body: []byte(body)}
}

func basic(user, pass, body string) webhooks.Request {
	r, _ := http.NewRequest("POST", "/", nil)
	r.SetBasicAuth(user, pass)
	return webhooks.Request{Header: r.Header, Body: []byte(body)}
}

func svix(secret, id string, at time.Time, body string) webhooks.Request {
	ts := strconv.FormatInt(at.Unix(), 10)
	sig, _ := webhooks.SignSvix(secret, id, ts, []byte(body))
	h := http.Header{}
	h.Set(webhooks.SvixIDHeader, id)
	h.Set(webhooks.SvixTimestampHeader, ts)
	h.Set(webhooks.SvixSignatureHeader, "v1,bm90IGl0 "+sig) // a rotated-out signature first
	return webhooks.Request{Header: h, Body: []byte(body)}
}

func mailerSend(secret, body string) webhooks.Request {
	h := http.Header{}
	h.Set(webhooks.MailerSendSignatureHeader, webhooks.SignMailerSend(secret, []byte(body)))
	return webhooks.Request{Header: h, Body: []byte(body)}
}

// TestReceiveNewProviders: for Brevo, SparkPost, Mailjet, Resend and
// MailerSend, each verified its provider's documented way, an event
// moves the log of the message id the driver kept and, for a hard
// bounce or complaint, lists the address; a call that does not verify
// is 401 before anything is read; the same call again is 409.
func TestReceiveNewProviders(t *testing.T) {
	now := time.Now()
	brevoHard := `{"event":"hard_bounce","email":"Gone@Example.com","id":1,"message-id":"<bv1@smtp-relay.mailin.fr>","reason":"550 unknown user","ts_epoch":` + strconv.FormatInt(now.UnixMilli(), 10) + `}`
	brevoSpam := `[{"event":"spam","email":"gone@example.com","message-id":"<bv1@smtp-relay.mailin.fr>"}]`
	brevoDelivered := `{"event":"delivered","email":"gone@example.com","message-id":"<bv1@smtp-relay.mailin.fr>"}`
	brevoUnsub := `{"event":"unsubscribed","email":"gone@example.com","message-id":"<bv1@smtp-relay.mailin.fr>"}`
	sparkBounce := func(class string) string {
		return fmt.Sprintf(`[{"msys":{"message_event":{"type":"bounce","bounce_class":%q,"event_id":"ev-%s","transmission_id":"sp-tx-1","rcpt_to":"gone@example.com","timestamp":"%d","reason":"550 5.1.1 unknown"}}}]`, class, class, now.Unix())
	}
	sparkComplaint := `[{"msys":{"message_event":{"type":"spam_complaint","event_id":"ev-c","transmission_id":"sp-tx-1","rcpt_to":"gone@example.com","timestamp":"1"}}}]`
	mailjetBounce := `{"event":"bounce","time":1430812195,"MessageID":288230376151711744,"Message_GUID":"1ab23cd4","email":"gone@example.com","CustomID":"mailsvc-mj1","hard_bounce":true,"error":"user unknown"}`
	mailjetSent := `[{"event":"sent","time":1430812195,"Message_GUID":"1ab23cd4","email":"gone@example.com","CustomID":"mailsvc-mj1"}]`
	resendBounce := `{"type":"email.bounced","created_at":"2026-12-06T10:00:00.000Z","data":{"email_id":"rs-1","to":["gone@example.com"],"bounce":{"type":"Permanent","message":"The address does not exist"}}}`
	resendComplaint := `{"type":"email.complained","created_at":"2026-12-06T10:00:00.000Z","data":{"email_id":"rs-1","to":["gone@example.com"]}}`
	msBounce := `{"type":"activity.hard_bounced","data":{"id":"act-1","created_at":"2026-12-06T10:00:00.000000Z","email":{"message":{"id":"ms-1"},"recipient":{"email":"gone@example.com"}},"morph":{"reason":"Host or domain name not found"}}}`
	msSoft := `{"type":"activity.soft_bounced","data":{"id":"act-2","email":{"message":{"id":"ms-1"},"recipient":{"email":"gone@example.com"}}}}`

	tests := []struct {
		name     string
		provider string
		req      webhooks.Request
		wantCode string
		// on success
		wantStatus string
		suppress   string
		kind       string // the event recorded, when not ""
	}{
		{"brevo hard bounce", "brevo", bearer(brevoToken, brevoHard), "", core.StatusFailed, suppression.SuppressBounce, "bounced"},
		{"brevo complaint batch, basic auth", "brevo", basic("any", brevoToken, brevoSpam), "", core.StatusFailed, suppression.SuppressComplaint, ""},
		{"brevo delivered", "brevo", bearer(brevoToken, brevoDelivered), "", core.StatusDelivered, "", ""},
		{"brevo unsubscribed is recorded only", "brevo", bearer(brevoToken, brevoUnsub), "", core.StatusDelivered, "", "unsubscribed"},
		{"brevo wrong token", "brevo", bearer("guess", brevoHard), core.EUNAUTHORIZED, "", "", ""},
		{"brevo no token", "brevo", webhooks.Request{Header: http.Header{}, Body: []byte(brevoHard)}, core.EUNAUTHORIZED, "", "", ""},
		{"brevo malformed", "brevo", bearer(brevoToken, `"x"`), core.EBADREQUEST, "", "", ""},
		{"sparkpost hard bounce", "sparkpost", basic(hookUser, hookPassword, sparkBounce("10")), "", core.StatusFailed, suppression.SuppressBounce, ""},
		{"sparkpost block bounce is soft", "sparkpost", basic(hookUser, hookPassword, sparkBounce("50")), "", core.StatusFailed, "", ""},
		{"sparkpost complaint", "sparkpost", basic(hookUser, hookPassword, sparkComplaint), "", core.StatusFailed, suppression.SuppressComplaint, ""},
		{"sparkpost wrong password", "sparkpost", basic(hookUser, "guess", sparkBounce("10")), core.EUNAUTHORIZED, "", "", ""},
		{"sparkpost wrong user", "sparkpost", basic("other", hookPassword, sparkBounce("10")), core.EUNAUTHORIZED, "", "", ""},
		{"mailjet hard bounce", "mailjet", basic("anyone", hookPassword, mailjetBounce), "", core.StatusFailed, suppression.SuppressBounce, ""},
		{"mailjet sent", "mailjet", basic("anyone", hookPassword, mailjetSent), "", core.StatusDelivered, "", ""},
		{"mailjet no auth", "mailjet", webhooks.Request{Header: http.Header{}, Body: []byte(mailjetBounce)}, core.EUNAUTHORIZED, "", "", ""},
		{"mailjet malformed", "mailjet", basic("anyone", hookPassword, `[1]`), core.EBADREQUEST, "", "", ""},
		{"resend permanent bounce", "resend", svix(resendSecret, "msg_1", now, resendBounce), "", core.StatusFailed, suppression.SuppressBounce, "bounced"},
		{"resend complaint", "resend", svix(resendSecret, "msg_2", now, resendComplaint), "", core.StatusFailed, suppression.SuppressComplaint, ""},
		{"resend forged", "resend", svix("whsec_"+base64.StdEncoding.EncodeToString([]byte("other")), "msg_3", now, resendBounce), core.EUNAUTHORIZED, "", "", ""},
		{"resend stale", "resend", svix(resendSecret, "msg_4", now.Add(-10*time.Minute), resendBounce), core.EUNAUTHORIZED, "", "", ""},
		{"resend no headers", "resend", webhooks.Request{Header: http.Header{}, Body: []byte(resendBounce)}, core.EUNAUTHORIZED, "", "", ""},
		{"mailersend hard bounce", "mailersend", mailerSend(mailerSendSecret, msBounce), "", core.StatusFailed, suppression.SuppressBounce, ""},
		{"mailersend soft bounce", "mailersend", mailerSend(mailerSendSecret, msSoft), "", core.StatusFailed, "", ""},
		{"mailersend forged", "mailersend", mailerSend("guess", msBounce), core.EUNAUTHORIZED, "", "", ""},
		{"mailersend no signature", "mailersend", webhooks.Request{Header: http.Header{}, Body: []byte(msBounce)}, core.EUNAUTHORIZED, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, newProviderConns(), now, nil)
			for _, pid := range []string{"<bv1@smtp-relay.mailin.fr>", "sp-tx-1", "mailsvc-mj1", "rs-1", "ms-1"} {
				f.store.addLog(10, pid)
			}
			ctx := context.Background()
			res, err := f.svc.Receive(ctx, tt.provider, tt.req)
			if tt.wantCode != "" {
				if codeOf(err) != tt.wantCode || f.store.touched() != 0 || len(f.received) != 0 {
					t.Fatalf("err %v (want %s), %d store calls, %d hooks", err, tt.wantCode, f.store.touched(), len(f.received))
				}
				return
			}
			if err != nil || res.Matched != 1 || res.Unknown != 0 {
				t.Fatalf("Receive = %+v, %v", res, err)
			}
			if f.store.status[10] != tt.wantStatus {
				t.Errorf("log status %q (%s), want %q", f.store.status[10], f.store.lastErr[10], tt.wantStatus)
			}
			wantSuppressed := tt.suppress != ""
			if got := len(f.store.suppress) == 1 && f.store.suppress[0].Email == "gone@example.com" && f.store.suppress[0].Reason == tt.suppress; got != wantSuppressed {
				t.Errorf("suppressions %+v, want %q", f.store.suppress, tt.suppress)
			}
			if len(f.store.events) != 1 || f.store.events[0].Provider != tt.provider || (tt.kind != "" && f.store.events[0].Event != tt.kind) {
				t.Errorf("events %+v", f.store.events)
			}
			if _, err := f.svc.Receive(ctx, tt.provider, tt.req); codeOf(err) != core.ECONFLICT {
				t.Errorf("the same call again: %v, want %s", err, core.ECONFLICT)
			}
		})
	}
}
