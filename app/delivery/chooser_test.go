package delivery

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/core"
)

// listChooser chooses connections by subject: "routed" → the list ids,
// anything else no opinion; fail makes it answer an error once.
type listChooser struct {
	ids   []int64
	fail  int
	calls int
}

func (c *listChooser) Choose(_ context.Context, l *core.Log) (Choice, error) {
	c.calls++
	if c.fail > 0 {
		c.fail--
		return Choice{}, errors.New("rules unreadable")
	}
	if l.Message.Subject != "routed" {
		return Choice{}, nil
	}
	return Choice{ConnectionIDs: c.ids, Rule: "test rule"}, nil
}

// ConnectionFailed implements ConnectionChooser: this chooser keeps no
// state of the connections.
func (c *listChooser) ConnectionFailed(context.Context, int64, string) {}

func TestChooserDecidesTheConnections(t *testing.T) {
	tests := []struct {
		name       string
		subject    string
		explicit   bool
		scripts    map[int64][]error
		chooseFail int
		status     string
		calls      map[int64]int
		sentConn   int64
		responses  string // every attempt's Response starts so ("" : none does)
	}{
		{name: "first of the list delivers", subject: "routed", status: core.StatusDelivered,
			calls: map[int64]int{3: 1, 2: 0, 1: 0}, sentConn: 3, responses: "chosen by test rule: "},
		{name: "permanent failure moves on to the next", subject: "routed", scripts: map[int64][]error{3: {perm}},
			status: core.StatusDelivered, calls: map[int64]int{3: 1, 2: 1, 1: 0}, sentConn: 2, responses: "chosen by test rule: "},
		{name: "retries on one, then the next with its own retries", subject: "routed",
			scripts: map[int64][]error{3: {temp, temp}, 2: {temp, temp}}, status: core.StatusFailed,
			calls: map[int64]int{3: 2, 2: 2, 1: 0}, sentConn: 2, responses: "chosen by test rule: "},
		{name: "an uncertain attempt stays on its connection and is resent there after the grace", subject: "routed",
			scripts: map[int64][]error{3: {lostAnswer}}, status: core.StatusDelivered,
			calls: map[int64]int{3: 2, 2: 0, 1: 0}, sentConn: 3, responses: "chosen by test rule: "},
		{name: "no opinion: the default connection", subject: "other", status: core.StatusDelivered,
			calls: map[int64]int{1: 1, 3: 0}, sentConn: 1},
		{name: "an explicit connection is kept", subject: "routed", explicit: true, status: core.StatusDelivered,
			calls: map[int64]int{1: 1, 3: 0}, sentConn: 1},
		{name: "a chooser error is a temporary failure, retried", subject: "routed", chooseFail: 1, status: core.StatusDelivered,
			calls: map[int64]int{3: 1}, sentConn: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, fakeSettings{"fallback_connection_id": int64(2)}, tt.scripts)
			e.svc.o.MaxRetries = 1
			base := e.svc.mustBase(t, e) - 1
			ch := &listChooser{ids: []int64{base + 3, base + 2}, fail: tt.chooseFail}
			e.svc.o.Chooser = ch
			l := &core.Log{Message: msg(tt.subject)}
			if tt.explicit {
				id := base + 1
				l.ConnectionID = &id
			}
			id := e.enqueue(t, l)
			e.drain(t)
			got, err := e.logs.FindLogByID(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tt.status || got.SentConnectionID == nil || *got.SentConnectionID != base+tt.sentConn {
				t.Fatalf("status %s via %v, want %s via %d; history %+v", got.Status, got.SentConnectionID, tt.status, base+tt.sentConn, got.History)
			}
			for n, want := range tt.calls {
				if calls, _ := e.tr[n].stats(); calls != want {
					t.Errorf("connection %d: %d sends, want %d", n, calls, want)
				}
			}
			for _, a := range got.History {
				if tt.responses != "" && !strings.HasPrefix(a.Response, tt.responses) {
					t.Errorf("attempt response %q does not name the rule", a.Response)
				}
				if tt.responses == "" && tt.chooseFail == 0 && strings.Contains(a.Response, "chosen by") {
					t.Errorf("attempt response %q names a rule", a.Response)
				}
			}
			if tt.chooseFail > 0 && !slices.ContainsFunc(got.History, func(a core.Attempt) bool {
				return a.Outcome == core.OutcomeTemporary && strings.Contains(a.Error, "rules unreadable")
			}) {
				t.Errorf("no temporary attempt for the chooser error: %+v", got.History)
			}
		})
	}
}
