package app_test

import (
	"context"
	"testing"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/core"
)

// recordingSender answers SendNow with a log of the given status.
type recordingSender struct {
	status string
	err    error
	got    *core.Message
	source string
}

func (s *recordingSender) SendNow(_ context.Context, connID int64, msg *core.Message, source string, _ core.OutcomeHostHooks) (*core.Log, error) {
	s.got, s.source = msg, source
	if s.err != nil {
		return nil, s.err
	}
	return &core.Log{ID: 1, Status: s.status, LastError: "550 mailbox unavailable"}, nil
}

type oneConnection struct{ from string }

func (c oneConnection) Effective(_ context.Context, id int64) (*core.Connection, error) {
	return &core.Connection{ID: id, Settings: core.Settings{"from_email": c.from}}, nil
}

func TestAlertMailer(t *testing.T) {
	tests := []struct {
		name          string
		sender        *recordingSender
		from          string
		wantErr       bool
		wantTemporary bool
		wantFrom      string
	}{
		{"delivered", &recordingSender{status: core.StatusDelivered}, "", false, false, "alerts@example.com"},
		{"own sender kept", &recordingSender{status: core.StatusDelivered}, "me@example.com", false, false, "me@example.com"},
		{"provider refused: retried", &recordingSender{status: core.StatusFailed}, "", true, true, "alerts@example.com"},
		{"bad message: not retried", &recordingSender{err: core.InvalidField("to", "bad")}, "", true, false, "alerts@example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &app.AlertMailer{Sender: tt.sender, Connections: oneConnection{from: "alerts@example.com"}}
			msg := &core.Message{From: core.Address{Email: tt.from}, To: []core.Address{{Email: "ops@example.com"}}, Subject: "s", Text: "t"}
			err := m.SendAlertEmail(context.Background(), 3, msg)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil && core.IsTemporary(err) != tt.wantTemporary {
				t.Fatalf("err %v temporary = %v, want %v", err, core.IsTemporary(err), tt.wantTemporary)
			}
			if tt.sender.got.From.Email != tt.wantFrom || tt.sender.source != app.SourceAlert {
				t.Fatalf("sent from %q as %q, want %q as %q", tt.sender.got.From.Email, tt.sender.source, tt.wantFrom, app.SourceAlert)
			}
		})
	}
}
