package app_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/core"
)

// outcomeSender answers SendNow with a log of status and records the host
// hooks the caller asks to record with that outcome.
type outcomeSender struct {
	status, lastError string
	hooks             []core.HostHook
	asked             bool
}

func (s *outcomeSender) SendNow(_ context.Context, connID int64, msg *core.Message, source string, hostHooks core.OutcomeHostHooks) (*core.Log, error) {
	out := core.LogOutcome{LogID: 9, Status: s.status, LastError: s.lastError}
	if hostHooks != nil {
		s.asked = true
		s.hooks = hostHooks(out)
	}
	return &core.Log{ID: 9, Status: s.status, LastError: s.lastError}, nil
}

type activeConnection struct{}

func (activeConnection) Effective(_ context.Context, id int64) (*core.Connection, error) {
	return &core.Connection{ID: id, IsActive: true, Driver: "smtp", Settings: core.Settings{"from_email": "site@example.com"}}, nil
}

// listeningHost is a host listening to the hooks it names.
type listeningHost map[string]bool

func (h listeningHost) Listens(_ context.Context, name string) bool   { return h[name] }
func (h listeningHost) Record(context.Context, []core.HostHook) error { return nil }

// TestConnectionTestHostHook: a connection test records
// mail_svc_test_email_sent with its outcome (connection id, recipient,
// subject, log id, success, error), accepted or refused, only while the
// host listens to it.
func TestConnectionTestHostHook(t *testing.T) {
	tests := []struct {
		name      string
		host      core.HostHooks
		status    string
		lastError string
		want      []core.HostHook
	}{
		{"delivered", listeningHost{core.HookTestEmailSent: true}, core.StatusDelivered, "",
			[]core.HostHook{{Name: core.HookTestEmailSent, Args: []any{int64(3), "to@example.com", "mailsvc test email", int64(9), true, ""}}}},
		{"refused", listeningHost{core.HookTestEmailSent: true}, core.StatusFailed, "550 mailbox unavailable",
			[]core.HostHook{{Name: core.HookTestEmailSent, Args: []any{int64(3), "to@example.com", "mailsvc test email", int64(9), false, "550 mailbox unavailable"}}}},
		{"not listening", listeningHost{}, core.StatusDelivered, "", nil},
		{"no host", nil, core.StatusDelivered, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sender := &outcomeSender{status: tt.status, lastError: tt.lastError}
			a := &app.ConnectionActions{Connections: activeConnection{}, Sender: sender, Hooks: &core.Hooks{}, HostHooks: tt.host}
			if _, err := a.TestConnection(context.Background(), 3, "to@example.com"); err != nil {
				t.Fatal(err)
			}
			if sender.asked != (tt.want != nil) || !reflect.DeepEqual(sender.hooks, tt.want) {
				t.Fatalf("host hooks %+v (asked %v), want %+v", sender.hooks, sender.asked, tt.want)
			}
		})
	}
}
