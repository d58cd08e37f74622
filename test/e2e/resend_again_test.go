package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/resendfake"
)

// TestResendByHandIsSent sends a message with its own Message-ID through
// the built binary (sendmail) to Resend's fake, then resends it from the
// logs: Resend gets it a second time, with the same Message-ID but
// another Idempotency-Key, instead of answering the resend with the first
// message's id and sending nothing.
func TestResendByHandIsSent(t *testing.T) {
	const key = "re_123456789_abcdefghijklmnopqrstuv"
	re := resendfake.New(key)
	defer re.Close()
	svc, pw := adminOf(t, t.TempDir(), "MAILSVC_ALLOW_CUSTOM_ENDPOINTS=true")
	admin := basic("admin", pw)
	r := call(t, "POST", svc.Base+"/connections", fmt.Sprintf(`{"name":"resend","driver":"resend","settings":{"api_key":%q,"base_url":%q}}`, key, re.URL), admin)
	var conn struct{ ID int64 }
	if r.JSON(t, &conn); r.Status != 201 {
		t.Fatalf("create connection: %d %s", r.Status, r.Body)
	}
	call(t, "PUT", svc.Base+"/settings", fmt.Sprintf(`{"default_connection_id":%d}`, conn.ID), admin)

	const messageID = "<invoice-7@shop.example.com>"
	msg := "From: shop@example.com\nTo: bob@example.com\nMessage-ID: " + messageID + "\nSubject: Invoice 7\n\nYour invoice.\n"
	if res := svc.Run(msg, "sendmail", "-t"); res.Code != 0 {
		t.Fatalf("sendmail: %d %s", res.Code, res.Stderr)
	}
	var logs []struct {
		ID int64 `json:"id"`
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(logs) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the message was not logged")
		}
		time.Sleep(50 * time.Millisecond)
		call(t, "GET", svc.Base+"/logs", "", admin).JSON(t, &logs)
	}
	id := logs[0].ID
	delivered := func(n int) logDetail {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			l := readLog(t, svc, admin, id)
			if l.Status == "delivered" && len(l.History) == n {
				return l
			}
			if time.Now().After(deadline) {
				t.Fatalf("log %+v; want delivered on attempt %d", l, n)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	first := delivered(1)
	if r := call(t, "POST", fmt.Sprintf("%s/logs/%d/resend", svc.Base, id), "", admin); r.Status/100 != 2 {
		t.Fatalf("resend: %d %s", r.Status, r.Body)
	}
	again := delivered(2)
	held := re.Messages()
	if len(held) != 2 {
		t.Fatalf("Resend holds %d messages, want the first and the resend", len(held))
	}
	for i, m := range held {
		if m.Headers["Message-ID"] != messageID {
			t.Errorf("message %d went with Message-ID %q, want the message's own %s", i, m.Headers["Message-ID"], messageID)
		}
	}
	if first.ProviderMessageID != held[0].ID || again.ProviderMessageID != held[1].ID {
		t.Errorf("the log's ids %q then %q, want Resend's %q then %q", first.ProviderMessageID, again.ProviderMessageID, held[0].ID, held[1].ID)
	}
}
