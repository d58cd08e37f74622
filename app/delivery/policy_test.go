package delivery

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/mailsvc/mailsvc/core"
)

// policyVar is a PolicySource whose answer a test changes between batches.
type policyVar struct {
	mu  sync.Mutex
	p   Policy
	err error
}

func (v *policyVar) DeliveryPolicy(context.Context) (Policy, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.p, v.err
}

func (v *policyVar) set(p Policy) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.p = p
}

func TestPolicyRetryLimit(t *testing.T) {
	tests := []struct {
		name       string
		maxRetries int
		wantCalls  int
	}{
		{"0 retries: one attempt", 0, 1},
		{"2 retries: three attempts", 2, 3},
		{"10 retries: eleven attempts", 10, 11},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The transport always fails temporarily.
			script := make([]error, 20)
			for i := range script {
				script[i] = temp
			}
			e := newEnv(t, nil, map[int64][]error{1: script})
			e.svc.o.MaxRetries = 5 // the policy, not the field, decides
			e.svc.o.Policy = &policyVar{p: Policy{MaxRetries: tt.maxRetries}}
			id := e.enqueue(t, &core.Log{Message: msg(tt.name)})
			e.drain(t)
			got, err := e.logs.FindLogByID(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			if calls, _ := e.tr[1].stats(); calls != tt.wantCalls {
				t.Errorf("%d sends, want %d", calls, tt.wantCalls)
			}
			if got.Status != core.StatusFailed || got.Attempts != tt.wantCalls {
				t.Errorf("status %s after %d attempts, want failed after %d", got.Status, got.Attempts, tt.wantCalls)
			}
		})
	}
}

func TestPolicyChangeAppliesToTheNextBatch(t *testing.T) {
	script := make([]error, 20)
	for i := range script {
		script[i] = temp
	}
	e := newEnv(t, nil, map[int64][]error{1: script})
	pv := &policyVar{p: Policy{MaxRetries: 0}}
	e.svc.o.Policy = pv
	e.enqueue(t, &core.Log{Message: msg("first")})
	e.drain(t)
	pv.set(Policy{MaxRetries: 1})
	e.enqueue(t, &core.Log{Message: msg("second")})
	e.drain(t)
	if calls, _ := e.tr[1].stats(); calls != 1+2 {
		t.Fatalf("%d sends, want 1 (limit 0) + 2 (limit 1)", calls)
	}
}

func TestPolicyUnloggedSources(t *testing.T) {
	e := newEnv(t, nil, map[int64][]error{1: {nil, nil, perm}})
	e.svc.o.Policy = &policyVar{p: Policy{MaxRetries: 3, UnloggedSources: []string{"woocommerce"}}}
	ctx := context.Background()
	dropped := e.enqueue(t, &core.Log{Message: msg("order"), Source: "woocommerce"})
	e.drain(t)
	kept := e.enqueue(t, &core.Log{Message: msg("form"), Source: "contact-form-7"})
	e.drain(t)
	failed := e.enqueue(t, &core.Log{Message: msg("order fails"), Source: "woocommerce"})
	e.drain(t)
	if _, err := e.logs.FindLogByID(ctx, dropped); core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("delivered log of an unlogged source still stored (err %v)", err)
	}
	if got, err := e.logs.FindLogByID(ctx, kept); err != nil || got.Status != core.StatusDelivered {
		t.Errorf("log of another source = %+v, %v; want it kept as delivered", got, err)
	}
	if got, err := e.logs.FindLogByID(ctx, failed); err != nil || got.Status != core.StatusFailed {
		t.Errorf("failed log of an unlogged source = %+v, %v; want it kept as failed", got, err)
	}
	if _, acc := e.tr[1].stats(); !slices.Equal(acc, []string{"order", "form"}) {
		t.Fatalf("accepted %v, want both delivered", acc)
	}

	// SendNow (test emails) follows the same rule.
	l, err := e.svc.SendNow(ctx, e.svc.mustBase(t, e), &core.Message{To: []core.Address{{Email: "a@example.com"}}, Subject: "now", Text: "x"}, "woocommerce", nil)
	if err != nil || l.Status != core.StatusDelivered {
		t.Fatalf("SendNow = %+v, %v", l, err)
	}
	if _, err := e.logs.FindLogByID(ctx, l.ID); core.ErrorCode(err) != core.ENOTFOUND {
		t.Errorf("SendNow log of an unlogged source still stored (err %v)", err)
	}
}

func TestPolicyErrorLeavesTheBatch(t *testing.T) {
	e := newEnv(t, nil, nil)
	id := e.enqueue(t, &core.Log{Message: msg("held")})
	e.svc.o.Policy = &policyVar{err: errors.New("database down")}
	logs, err := e.logs.ClaimLogs(context.Background(), "test", 5, e.svc.o.Lease)
	if err != nil || len(logs) != 1 {
		t.Fatalf("claim: %v, %d logs", err, len(logs))
	}
	e.svc.processBatch(context.Background(), "test", logs)
	got, _ := e.logs.FindLogByID(context.Background(), id)
	if calls, _ := e.tr[1].stats(); calls != 0 || got.Status != core.StatusSending {
		t.Fatalf("with the policy unreadable: %d sends, status %s; want none, left sending under its lease", calls, got.Status)
	}
}
