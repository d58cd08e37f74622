package email

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

type recordingMailer struct {
	connIDs []int64
	msgs    []*core.Message
	err     error
}

func (m *recordingMailer) SendAlertEmail(_ context.Context, connID int64, msg *core.Message) error {
	m.connIDs = append(m.connIDs, connID)
	m.msgs = append(m.msgs, msg)
	return m.err
}

func TestNotify(t *testing.T) {
	a := core.Alert{Event: core.EventConnectionDown, ConnectionID: 3, ConnectionName: "SES",
		Title: "SES is down", Message: "Health check failed.", At: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
	tests := []struct {
		name          string
		connID        int64
		mailErr       error
		wantSent      bool
		wantErr       string
		wantTemporary bool
	}{
		{"through another connection", 5, nil, true, "", false},
		{"never through the failing connection", 3, nil, false, "concerns connection #3", false},
		{"mailer failure keeps its class", 5, core.Temporary(errors.New("451 try later")), true, "451", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &recordingMailer{err: tt.mailErr}
			n, err := New(&core.NotificationChannel{Settings: core.Settings{KeyTo: "ops@example.com, ada@example.com", KeyConnectionID: tt.connID}},
				core.NotifierEnv{Mailer: m})
			if err != nil {
				t.Fatal(err)
			}
			answer, err := n.Notify(context.Background(), a)
			if (len(m.msgs) == 1) != tt.wantSent {
				t.Fatalf("sent %d messages", len(m.msgs))
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || core.IsTemporary(err) != tt.wantTemporary {
					t.Fatalf("err = %v, want %q temporary %v", err, tt.wantErr, tt.wantTemporary)
				}
				return
			}
			if err != nil || answer != "Sent through connection #5 to ops@example.com, ada@example.com." {
				t.Fatalf("Notify = %q, %v", answer, err)
			}
			msg := m.msgs[0]
			if m.connIDs[0] != 5 || msg.Subject != "[mailsvc] SES is down" || len(msg.To) != 2 || msg.To[1].Email != "ada@example.com" {
				t.Errorf("message %+v via %d", msg, m.connIDs[0])
			}
			wantText := "SES is down\nHealth check failed.\n\nEvent: Connection down\nConnection: SES (#3)\nTime: 2025-01-02T03:04:05Z\n"
			if msg.Text != wantText {
				t.Errorf("text %q, want %q", msg.Text, wantText)
			}
		})
	}
	if _, err := New(&core.NotificationChannel{Settings: core.Settings{KeyTo: "a@example.com", KeyConnectionID: 1}}, core.NotifierEnv{}); err == nil {
		t.Error("New without a mailer succeeded")
	}
}
