package delivery

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/core"
)

// listed is a suppression list of fixed addresses; err, when set, is
// what every check returns.
type listed struct {
	emails []string
	err    error
}

func (f listed) Suppressed(_ context.Context, emails []string) ([]string, error) {
	if f.err != nil {
		return nil, f.err
	}
	var out []string
	for _, e := range emails {
		for _, l := range f.emails {
			if strings.EqualFold(e, l) {
				out = append(out, l)
			}
		}
	}
	return out, nil
}

func TestSuppressedRecipientsAreNotSent(t *testing.T) {
	tests := []struct {
		name      string
		list      SuppressionList
		to, cc    string
		status    string
		calls     int
		errSubstr string
	}{
		{"no list", nil, "gone@example.com", "", core.StatusDelivered, 1, ""},
		{"not listed", listed{emails: []string{"gone@example.com"}}, "ok@example.com", "", core.StatusDelivered, 1, ""},
		{"listed To", listed{emails: []string{"gone@example.com"}}, "Gone@Example.com", "", core.StatusFailed, 0, "gone@example.com is on the suppression list"},
		{"listed Cc fails the whole message", listed{emails: []string{"gone@example.com"}}, "ok@example.com", "gone@example.com", core.StatusFailed, 0, "gone@example.com is on the suppression list"},
		{"unreadable list sends anyway", listed{err: errors.New("database down")}, "gone@example.com", "", core.StatusDelivered, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The fallback connection is set: a suppressed message must
			// not move on to it.
			e := newEnv(t, fakeSettings{"fallback_connection_id": int64(2)}, nil)
			e.svc.o.Suppressions = tt.list
			m := msg("hello")
			m.To = []core.Address{{Email: tt.to}}
			if tt.cc != "" {
				m.Cc = []core.Address{{Email: tt.cc}}
			}
			id := e.enqueue(t, &core.Log{Message: m})
			e.drain(t)
			l, err := e.logs.FindLogByID(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			calls1, _ := e.tr[1].stats()
			calls2, _ := e.tr[2].stats()
			if l.Status != tt.status || calls1 != tt.calls || calls2 != 0 {
				t.Fatalf("status %s, sends %d+%d; want %s, %d+0", l.Status, calls1, calls2, tt.status, tt.calls)
			}
			if tt.errSubstr != "" {
				if !strings.Contains(l.LastError, tt.errSubstr) || len(l.History) != 1 || l.History[0].Outcome != core.OutcomePermanent || !strings.Contains(l.History[0].Error, tt.errSubstr) {
					t.Fatalf("last error %q, history %+v", l.LastError, l.History)
				}
			}
		})
	}
}
