package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
)

// TestTestEmailThroughSMTPSink sends a real test email through the built
// binary into a local SMTP server, then reads it back from the logs, checks
// the credentials with a right and a wrong password, and finds the SMTP
// transcript (AUTH masked) and the HTTP debug lines on disk.
func TestTestEmailThroughSMTPSink(t *testing.T) {
	sink := smtpsink.Start(t, smtpsink.WithAuth("mailer", "s3cret-pass"))
	dir := t.TempDir()
	logDir := filepath.Join(dir, "debug")
	svc, pw := adminOf(t, dir, "MAIL_SVC_DEBUG_LOG_DIR="+logDir, "MAIL_SVC_DEBUG_REQUEST=true", "MAIL_SVC_DEBUG_MAILER=true")
	admin := basic("admin", pw)

	create := func(password string) int64 {
		body := fmt.Sprintf(`{"name":"sink","driver":"smtp","settings":{"host":%q,"port":%d,"encryption":"none","auth":true,"username":"mailer","password":%q,"from_email":"site@example.com"}}`,
			sink.Host(), sink.Port(), password)
		r := call(t, "POST", svc.Base+"/connections", body, admin)
		var c struct{ ID int64 }
		if err := json.Unmarshal(r.Body, &c); err != nil || r.Status != 201 {
			t.Fatalf("create connection: %d %s", r.Status, r.Body)
		}
		return c.ID
	}
	good, bad := create("s3cret-pass"), create("wrong-pass")

	r := call(t, "POST", svc.Base+"/test-email", fmt.Sprintf(`{"to":"rcpt@example.com","connection_id":%d,"subject":"E2E test"}`, good), admin)
	var res struct {
		Success           bool
		LogID             int64  `json:"log_id"`
		Status            string `json:"status"`
		ProviderMessageID string `json:"provider_message_id"`
	}
	if err := json.Unmarshal(r.Body, &res); err != nil || r.Status != 200 || !res.Success || res.Status != "delivered" || res.ProviderMessageID == "" {
		t.Fatalf("POST /test-email: %d %s", r.Status, r.Body)
	}
	msgs, err := sink.WaitFor(1, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs[0].To) != 1 || msgs[0].To[0] != "rcpt@example.com" || !strings.Contains(string(msgs[0].Data), "Subject: E2E test") || msgs[0].Username != "mailer" {
		t.Fatalf("sink got %+v", msgs[0])
	}

	r = call(t, "GET", svc.Base+"/logs?status=delivered", "", admin)
	var logs []struct {
		ID                int64  `json:"id"`
		Status            string `json:"status"`
		ProviderMessageID string `json:"provider_message_id"`
	}
	if err := json.Unmarshal(r.Body, &logs); err != nil || r.Status != 200 || len(logs) != 1 || logs[0].ID != res.LogID || logs[0].ProviderMessageID != res.ProviderMessageID {
		t.Fatalf("GET /logs: %d %s", r.Status, r.Body)
	}
	if r := call(t, "GET", svc.Base+"/logs/queue/stats", "", admin); !strings.Contains(string(r.Body), `"delivered":1`) {
		t.Fatalf("stats %s", r.Body)
	}

	for _, tc := range []struct {
		id   int64
		want bool
	}{{good, true}, {bad, false}} {
		r := call(t, "POST", fmt.Sprintf("%s/connections/%d/verify-credentials", svc.Base, tc.id), "", admin)
		var v struct{ Success bool }
		if err := json.Unmarshal(r.Body, &v); err != nil || r.Status != 200 || v.Success != tc.want {
			t.Fatalf("verify %d: %d %s", tc.id, r.Status, r.Body)
		}
		if strings.Contains(string(r.Body), "pass") && strings.Contains(string(r.Body), "s3cret") {
			t.Fatalf("secret in %s", r.Body)
		}
	}
	if r := call(t, "POST", fmt.Sprintf("%s/connections/%d/verify-api-credentials", svc.Base, good), "", admin); r.Status != 422 {
		t.Fatalf("verify-api-credentials on smtp: %d %s", r.Status, r.Body)
	}
	if r := call(t, "POST", svc.Base+"/test-email", `{"to":"bad address","connection_id":1}`, admin); r.Status != 422 {
		t.Fatalf("bad address: %d", r.Status)
	}

	r = call(t, "GET", svc.Base+"/tools/debug-logs?per_page=100", "", admin)
	if r.Status != 200 || !strings.Contains(string(r.Body), "AUTH") || strings.Contains(string(r.Body), "s3cret-pass") {
		t.Fatalf("debug logs: %d %.500s", r.Status, r.Body)
	}
	if entries, err := os.ReadDir(filepath.Join(logDir, "mail-svc-logs", "smtp-sessions")); err != nil || len(entries) == 0 {
		t.Fatalf("no transcripts under the relocated root: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(logDir, "mail-svc-logs", "debug.log"))
	if err != nil || !strings.Contains(string(b), "REQUEST PAYLOAD") || !strings.Contains(string(b), "MAILER") || strings.Contains(string(b), "s3cret-pass") {
		t.Fatalf("debug.log: %v\n%.800s", err, b)
	}
}

// TestTestEmailAPIDebug checks the raw diagnostics switch: off by default,
// on with MAIL_SVC_DEBUG_ATTACH_API_DEBUG, the provider's answer attached.
func TestTestEmailAPIDebug(t *testing.T) {
	sink := smtpsink.Start(t)
	for _, attach := range []bool{false, true} {
		t.Run(fmt.Sprintf("attach=%v", attach), func(t *testing.T) {
			dir := t.TempDir()
			svc, pw := adminOf(t, dir, fmt.Sprintf("MAIL_SVC_DEBUG_ATTACH_API_DEBUG=%v", attach))
			admin := basic("admin", pw)
			r := call(t, "POST", svc.Base+"/connections", fmt.Sprintf(`{"name":"sink","driver":"smtp","settings":{"host":%q,"port":%d,"encryption":"none","auth":false,"from_email":"site@example.com"}}`, sink.Host(), sink.Port()), admin)
			var c struct{ ID int64 }
			r.JSON(t, &c)
			r = call(t, "POST", svc.Base+"/test-email", fmt.Sprintf(`{"to":"rcpt@example.com","connection_id":%d}`, c.ID), admin)
			var res struct {
				Success  bool
				APIDebug []struct {
					Outcome  string `json:"outcome"`
					Response string `json:"response"`
				} `json:"api_debug"`
			}
			r.JSON(t, &res)
			if !res.Success {
				t.Fatalf("test email: %d %s", r.Status, r.Body)
			}
			if !attach && res.APIDebug != nil {
				t.Fatalf("api_debug attached while off: %s", r.Body)
			}
			if attach && (len(res.APIDebug) != 1 || res.APIDebug[0].Outcome != "delivered" || !strings.HasPrefix(res.APIDebug[0].Response, "250")) {
				t.Fatalf("api_debug = %s", r.Body)
			}
		})
	}
}
