package debuglog_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/debuglog"
	"github.com/mailsvc/mailsvc/core"
)

// hostRecorder is a core.HostHooks listening to everything and keeping
// what it records.
type hostRecorder struct{ recorded []core.HostHook }

func (h *hostRecorder) Listens(context.Context, string) bool { return true }
func (h *hostRecorder) Record(_ context.Context, hooks []core.HostHook) error {
	h.recorded = append(h.recorded, hooks...)
	return nil
}

// TestHostMailer: with the mailer channel on, each mail_svc_api_debug
// payload reaches the host as (driver, request, response), its secrets
// redacted with the debug visibility; with the channel off, nothing.
func TestHostMailer(t *testing.T) {
	payload := map[string]any{"log_id": 4, "connection_id": 2, "driver": "sendgrid", "from": "site@example.com",
		"recipients": []string{"a@example.com"}, "subject": "Hi", "attachments": 0,
		"outcome": "delivered", "response": "250 ok", "api_key": "SG.secret", "error": "", "provider_message_id": "pm", "duration_ms": 12}
	for _, on := range []bool{true, false} {
		l := debuglog.New(debuglog.Options{Root: t.TempDir(), Mailer: on, Visibility: "full"})
		hooks := &core.Hooks{}
		host := &hostRecorder{}
		l.RegisterHostMailer(hooks, host)
		hooks.DoAction(core.HookAPIDebug, payload)
		if !on {
			if len(host.recorded) != 0 {
				t.Fatalf("recorded with the channel off: %v", host.recorded)
			}
			continue
		}
		if len(host.recorded) != 1 || host.recorded[0].Name != core.HookAPIDebug || len(host.recorded[0].Args) != 3 {
			t.Fatalf("recorded %+v", host.recorded)
		}
		raw, _ := json.Marshal(host.recorded[0].Args)
		a := host.recorded[0].Args
		req, _ := a[1].(map[string]any)
		resp, _ := a[2].(map[string]any)
		if a[0] != "sendgrid" || req["subject"] != "Hi" || req["from"] != "site@example.com" || resp["outcome"] != "delivered" ||
			strings.Contains(string(raw), "SG.secret") || !strings.Contains(string(raw), debuglog.Redacted) {
			t.Fatalf("args %s", raw)
		}
	}
}
