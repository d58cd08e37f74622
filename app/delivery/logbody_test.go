package delivery

import (
	"context"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/core"
)

const (
	resetLink = "http://example.test/wp-login.php?action=rp&key=K3yK3yK3y&login=bob"
	resetKept = "http://example.test/wp-login.php?action=rp&key=[redacted]&login=bob"
)

// TestLogBodyModes checks that the log keeps the whole body while a
// message is queued for a retry, and only what its mode says once it is
// final, while every attempt sends the whole message.
func TestLogBodyModes(t *testing.T) {
	tests := []struct {
		name     string
		settings fakeSettings
		script   []error
		source   string
		status   string
		wantText string
		wantMode string
		wantN    int
	}{
		{"default redacts once delivered", nil, []error{temp}, "wp_mail", core.StatusDelivered, "Reset: " + resetKept, core.LogBodyRedacted, 1},
		{"redacted when failed for good", nil, []error{perm}, "wp_mail", core.StatusFailed, "Reset: " + resetKept, core.LogBodyRedacted, 1},
		{"full", fakeSettings{"log_body": "full"}, []error{temp}, "wp_mail", core.StatusDelivered, "Reset: " + resetLink, core.LogBodyFull, 0},
		{"none", fakeSettings{"log_body": "none"}, []error{temp}, "wp_mail", core.StatusDelivered, "", core.LogBodyNone, 0},
		{"a source override wins", fakeSettings{"log_body": "none", "log_body_sources": map[string]any{"my-plugin": "full"}},
			[]error{temp}, "my-plugin", core.StatusDelivered, "Reset: " + resetLink, core.LogBodyFull, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.settings, map[int64][]error{1: tt.script})
			ctx := context.Background()
			m := msg("reset")
			m.Text = "Reset: " + resetLink
			id := e.enqueue(t, &core.Log{Message: m, Source: tt.source})
			logs, err := e.logs.ClaimLogs(ctx, "test", 5, e.svc.o.Lease)
			if err != nil {
				t.Fatal(err)
			}
			e.svc.processBatch(ctx, "test", logs)
			if got, _ := e.logs.FindLogByID(ctx, id); got.Status == core.StatusQueued && (got.Message.Text != m.Text || got.BodyMode != "") {
				t.Fatalf("a message queued for a retry lost its body: %+v", got)
			}
			e.drain(t)
			got, err := e.logs.FindLogByID(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tt.status || got.Message.Text != tt.wantText || got.BodyMode != tt.wantMode || got.RedactedCount != tt.wantN {
				t.Errorf("stored log: status %s, mode %q, redacted %d, text %q", got.Status, got.BodyMode, got.RedactedCount, got.Message.Text)
			}
			e.tr[1].mu.Lock()
			sent := e.tr[1].texts
			e.tr[1].mu.Unlock()
			for _, text := range sent {
				if text != m.Text {
					t.Errorf("an attempt sent %q, want the whole message", text)
				}
			}
		})
	}
}

func TestSendNowKeepsRedactedLog(t *testing.T) {
	e := newEnv(t, nil, nil)
	base := e.svc.mustBase(t, e) - 1
	m := msg("test email")
	m.Text = "Reset: " + resetLink
	l, err := e.svc.SendNow(context.Background(), base+3, &m, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := e.logs.FindLogByID(context.Background(), l.ID)
	for _, got := range []*core.Log{l, stored} {
		if got.Message.Text != "Reset: "+resetKept || got.RedactedCount != 1 || got.Resendable() {
			t.Errorf("log = %q, %d redacted", got.Message.Text, got.RedactedCount)
		}
	}
	if _, acc := e.tr[3].stats(); len(acc) != 1 || !strings.Contains(e.tr[3].texts[0], "key=K3yK3yK3y") {
		t.Errorf("sent %q, want the working link", e.tr[3].texts)
	}
	if n, err := e.svc.Resend(context.Background(), []int64{l.ID}); err != nil || n != 0 {
		t.Errorf("Resend of a redacted log = %d, %v; want 0", n, err)
	}
}
