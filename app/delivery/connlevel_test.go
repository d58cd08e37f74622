package delivery

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/mailsvc/mailsvc/core"
)

func TestConnectionLevel(t *testing.T) {
	tests := []struct {
		text string
		want bool
	}{
		{"smtp: connect 127.0.0.1:2525: dial tcp 127.0.0.1:2525: connect: connection refused", true},
		{"smtp: connect smtp.example.com:587: 535 5.7.8 Authentication credentials invalid", true},
		{"smtp: reconnect smtp.example.com:587: 421 4.7.0 Try again later", true},
		{"ses smtp: smtp: connect email-smtp.us-east-1.amazonaws.com:587: i/o timeout", true},
		{`sendgrid: send: Post "https://api.sendgrid.com/v3/mail/send": dial tcp: lookup api.sendgrid.com: no such host`, true},
		{`postmark: send: Post "https://api.postmarkapp.com/email": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`, true},
		{"postmark: send: HTTP 401: the server token is invalid", true},
		{"Google answered HTTP 403 Forbidden (insufficientPermissions): denied", true},
		{"gmail: send: the provider refused the access token: HTTP 401", true},
		{"ses: send email: operation error SESv2: SendEmail, https response error StatusCode: 403, api error UnrecognizedClientException", true},
		// The message or a recipient, not the connection.
		{"smtp: send smtp.example.com:587: 550 5.1.1 <nobody@example.com>: Recipient address rejected", false},
		{"smtp: send smtp.example.com:587: 452 4.2.2 Mailbox full", false},
		{"postmark: send: HTTP 422: invalid 'To' address", false},
		{"sendgrid: send: provider answered HTTP 500: oops", false},
		{"smtp: waiting for a connection to smtp.example.com:587: context deadline exceeded", false},
		{"connection 7 is inactive", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := connectionLevel(tt.text); got != tt.want {
			t.Errorf("connectionLevel(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

// observingChooser chooses ids for every message and records the
// connection-level failures it hears of.
type observingChooser struct {
	ids    []int64
	mu     sync.Mutex
	failed []int64
}

func (c *observingChooser) Choose(context.Context, *core.Log) (Choice, error) {
	return Choice{ConnectionIDs: c.ids, Rule: "test group"}, nil
}

func (c *observingChooser) ConnectionFailed(_ context.Context, id int64, _ string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failed = append(c.failed, id)
}

func TestConnectionLevelFailureMovesOn(t *testing.T) {
	refused := core.Temporary(errors.New("smtp: connect 127.0.0.1:9: dial tcp 127.0.0.1:9: connect: connection refused"))
	tests := []struct {
		name     string
		list     []int64 // connections 1..3 of the env
		scripts  map[int64][]error
		status   string
		calls    map[int64]int
		observed []int64
	}{
		{name: "refused: the next member at once, observed", list: []int64{3, 2}, scripts: map[int64][]error{3: {refused}},
			status: core.StatusDelivered, calls: map[int64]int{3: 1, 2: 1}, observed: []int64{3}},
		{name: "an ordinary temporary failure is retried on the same member", list: []int64{3, 2}, scripts: map[int64][]error{3: {temp}},
			status: core.StatusDelivered, calls: map[int64]int{3: 2, 2: 0}},
		{name: "a recipient rejection is not observed", list: []int64{3, 2}, scripts: map[int64][]error{3: {perm}},
			status: core.StatusDelivered, calls: map[int64]int{3: 1, 2: 1}},
		{name: "the last member is retried as usual", list: []int64{3}, scripts: map[int64][]error{3: {refused, refused}},
			status: core.StatusFailed, calls: map[int64]int{3: 2}, observed: []int64{3, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, nil, tt.scripts)
			e.svc.o.MaxRetries = 1
			base := e.svc.mustBase(t, e) - 1
			ch := &observingChooser{}
			for _, n := range tt.list {
				ch.ids = append(ch.ids, base+n)
			}
			e.svc.o.Chooser = ch
			id := e.enqueue(t, &core.Log{Message: msg("grouped")})
			e.drain(t)
			got, err := e.logs.FindLogByID(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tt.status {
				t.Fatalf("status %s, want %s; history %+v", got.Status, tt.status, got.History)
			}
			for n, want := range tt.calls {
				if calls, _ := e.tr[n].stats(); calls != want {
					t.Errorf("connection %d: %d sends, want %d", n, calls, want)
				}
			}
			var want []int64
			for _, n := range tt.observed {
				want = append(want, base+n)
			}
			if !slices.Equal(ch.failed, want) {
				t.Errorf("observed failures of %v, want %v", ch.failed, want)
			}
		})
	}
}
