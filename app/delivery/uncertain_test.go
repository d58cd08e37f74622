package delivery

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// holder is a provider fake for uncertain attempts: each Send takes the
// message (it records its Message-ID) and then fails as scripted; Find
// reports whether it holds a Message-ID.
type holder struct {
	mu     sync.Mutex
	script []error
	sent   []string // Message-ID headers, in order
	finds  int
}

func (h *holder) Send(_ context.Context, msg *core.Message) (core.Receipt, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sent = append(h.sent, msg.MessageID())
	if len(h.script) > 0 {
		err := h.script[0]
		h.script = h.script[1:]
		if err != nil {
			return core.Receipt{}, err
		}
	}
	return core.Receipt{MessageID: "accepted-" + strings.Trim(msg.MessageID(), "<>"), Response: "250 ok"}, nil
}

func (h *holder) find(msg *core.Message, took func(id string) bool) (core.Receipt, bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.finds++
	id := msg.MessageID()
	for _, s := range h.sent {
		if s == id && took(id) {
			return core.Receipt{MessageID: "found-" + strings.Trim(id, "<>"), Response: "found"}, true, nil
		}
	}
	return core.Receipt{}, false, nil
}

func (h *holder) calls() (sent []string, finds int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.sent...), h.finds
}

// findingHolder is a holder whose provider can look messages up; took
// says whether an uncertain Send really left the message there.
type findingHolder struct {
	*holder
	took bool
}

func (f findingHolder) Find(_ context.Context, msg *core.Message) (core.Receipt, bool, error) {
	return f.find(msg, func(string) bool { return f.took })
}

// events is a ProviderEvents with the events of each log, oldest first.
type events struct {
	mu sync.Mutex
	m  map[int64][]ProviderEvent
}

func (e *events) LatestEventSince(_ context.Context, id int64, since time.Time) (ProviderEvent, bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	evs := e.m[id]
	for i := len(evs) - 1; i >= 0; i-- {
		if !evs[i].At.Before(since) {
			return evs[i], true, nil
		}
	}
	return ProviderEvent{}, false, nil
}

var (
	uncertainMu    sync.Mutex
	uncertainConns = map[int64]core.Transport{}
	uncertainOnce  sync.Once
)

// uncertainEnv is a test env whose default connection sends through tr.
func uncertainEnv(t *testing.T, tr core.Transport, settings fakeSettings) *env {
	t.Helper()
	uncertainOnce.Do(func() {
		core.Register(core.Driver{Slug: "uncertainfake", Name: "Fake", New: func(c *core.Connection, _ core.DriverEnv) (core.Transport, error) {
			uncertainMu.Lock()
			defer uncertainMu.Unlock()
			return uncertainConns[c.ID], nil
		}})
	})
	e := newEnv(t, settings, nil)
	id := *e.svc.mustSettings(t).defaultConn
	uncertainMu.Lock()
	uncertainConns[id] = tr
	uncertainMu.Unlock()
	e.conns.mu.Lock()
	e.conns.m[id].Driver = "uncertainfake"
	e.conns.mu.Unlock()
	return e
}

func (s *Service) mustSettings(t *testing.T) settings {
	t.Helper()
	st, err := s.loadSettings(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// runDue claims what is due and processes it; it reports how many logs
// it processed.
func (e *env) runDue(t *testing.T) int {
	t.Helper()
	ctx := context.Background()
	logs, err := e.logs.ClaimLogs(ctx, "test", e.svc.o.BatchSize, e.svc.o.Lease)
	if err != nil {
		t.Fatal(err)
	}
	e.svc.processBatch(ctx, "test", logs)
	return len(logs)
}

var lostAnswer = core.Uncertain(errors.New("read tcp: i/o timeout after the final dot"))

// TestUncertainAttempt: an attempt whose answer was lost is recorded as
// uncertain and the log waits out the grace; then the message is looked
// up (at the provider, or among its webhook events) and sent again, with
// the same Message-ID, only when it was not found.
func TestUncertainAttempt(t *testing.T) {
	tests := []struct {
		name string
		// transport builds the connection's transport around h.
		transport func(h *holder) core.Transport
		// event, when set, is a provider event received for the log
		// during the grace.
		event       *ProviderEvent
		ownID       string // the message's own Message-ID header
		wantStatus  string
		wantSends   int
		wantFinds   int
		wantOutcome []string
		wantPID     string // prefix of the log's provider message id
	}{
		{name: "no lookup: sent again after the grace, same Message-ID",
			transport:  func(h *holder) core.Transport { return h },
			wantStatus: core.StatusDelivered, wantSends: 2,
			wantOutcome: []string{core.OutcomeUncertain, core.OutcomeDelivered}, wantPID: "accepted-"},
		{name: "found by the provider's lookup: delivered, not sent again",
			transport:  func(h *holder) core.Transport { return findingHolder{holder: h, took: true} },
			wantStatus: core.StatusDelivered, wantSends: 1, wantFinds: 1,
			wantOutcome: []string{core.OutcomeUncertain, core.OutcomeDelivered}, wantPID: "found-"},
		{name: "not found by the lookup: sent again",
			transport:  func(h *holder) core.Transport { return findingHolder{holder: h, took: false} },
			wantStatus: core.StatusDelivered, wantSends: 2, wantFinds: 1,
			wantOutcome: []string{core.OutcomeUncertain, core.OutcomeDelivered}, wantPID: "accepted-"},
		{name: "a delivered webhook event meanwhile: delivered, not sent again",
			transport: func(h *holder) core.Transport { return h }, event: &ProviderEvent{Kind: "delivered"},
			wantStatus: core.StatusDelivered, wantSends: 1,
			wantOutcome: []string{core.OutcomeUncertain, core.OutcomeDelivered}, wantPID: "evt-"},
		{name: "a bounce webhook event meanwhile: failed, not sent again",
			transport: func(h *holder) core.Transport { return h }, event: &ProviderEvent{Kind: "bounced", Refused: true},
			wantStatus: core.StatusFailed, wantSends: 1,
			wantOutcome: []string{core.OutcomeUncertain, core.OutcomePermanent}, wantPID: "evt-"},
		{name: "the message's own Message-ID is the one looked up and resent",
			transport: func(h *holder) core.Transport { return h }, ownID: "<own.1@example.com>",
			wantStatus: core.StatusDelivered, wantSends: 2,
			wantOutcome: []string{core.OutcomeUncertain, core.OutcomeDelivered}, wantPID: "accepted-own.1@example.com"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := &holder{script: []error{lostAnswer}}
			e := uncertainEnv(t, tc.transport(h), fakeSettings{"uncertain_grace_minutes": int64(7)})
			evs := &events{m: map[int64][]ProviderEvent{}}
			e.svc.o.Events = evs
			m := msg("uncertain")
			if tc.ownID != "" {
				m.Headers = []core.Header{{Name: "message-id", Value: tc.ownID}}
			}
			id := e.enqueue(t, &core.Log{Message: m})
			before := time.Now().UTC()
			if n := e.runDue(t); n != 1 {
				t.Fatalf("processed %d logs, want 1", n)
			}

			l, err := e.logs.FindLogByID(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			sent, _ := h.calls()
			if l.Status != core.StatusQueued || len(l.History) != 1 || l.History[0].Outcome != core.OutcomeUncertain {
				t.Fatalf("after the uncertain attempt: status %s, attempts %v; want queued with one uncertain attempt", l.Status, outcomes(l))
			}
			if grace := l.NextAttemptAt.Sub(before); grace < 7*time.Minute || grace > 8*time.Minute {
				t.Errorf("next attempt %s after the attempt, want the 7 minutes of uncertain_grace_minutes", grace)
			}
			if sent[0] == "" || (tc.ownID != "" && sent[0] != tc.ownID) {
				t.Fatalf("the message went out with Message-ID %q, want a stable one (own: %q)", sent[0], tc.ownID)
			}
			if want := strings.Trim(sent[0], "<>"); l.ProviderMessageID != want || l.History[0].ProviderMessageID != want {
				t.Errorf("provider message id %q (attempt %q), want the Message-ID sent %q", l.ProviderMessageID, l.History[0].ProviderMessageID, want)
			}
			if n := e.runDue(t); n != 0 {
				t.Fatalf("the log was claimed again %d time(s) before the grace ended", n)
			}

			if tc.event != nil {
				ev := *tc.event
				ev.At, ev.MessageID = time.Now().UTC(), "evt-1"
				evs.m[id] = []ProviderEvent{ev}
			}
			e.logs.MakeDue(id) // the grace has passed
			if n := e.runDue(t); n != 1 {
				t.Fatalf("processed %d logs after the grace, want 1", n)
			}
			l, err = e.logs.FindLogByID(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			sent, finds := h.calls()
			if l.Status != tc.wantStatus || !equalStrings(outcomes(l), tc.wantOutcome) {
				t.Errorf("status %s, attempts %v; want %s, %v", l.Status, outcomes(l), tc.wantStatus, tc.wantOutcome)
			}
			if len(sent) != tc.wantSends || finds != tc.wantFinds {
				t.Errorf("sent %d time(s), looked up %d time(s); want %d and %d", len(sent), finds, tc.wantSends, tc.wantFinds)
			}
			if len(sent) == 2 && sent[1] != sent[0] {
				t.Errorf("resent with Message-ID %q, want the uncertain attempt's %q", sent[1], sent[0])
			}
			if !strings.HasPrefix(l.ProviderMessageID, tc.wantPID) {
				t.Errorf("provider message id %q, want %q...", l.ProviderMessageID, tc.wantPID)
			}
			if strings.HasPrefix(l.LastError, uncertainMark) {
				t.Errorf("last error still says uncertain: %q", l.LastError)
			}
		})
	}
}

// TestUncertainLastAttempt: an uncertain attempt that was the last its
// connection allowed is still looked up after the grace; not found, it
// is not resent there: the fallback connection takes over, or the log
// fails.
func TestUncertainLastAttempt(t *testing.T) {
	tests := []struct {
		name         string
		settings     fakeSettings
		wantStatus   string
		wantFallback int // sends through the fallback connection
	}{
		{name: "no fallback: failed", wantStatus: core.StatusFailed},
		{name: "the fallback takes over", settings: fakeSettings{"fallback_connection_id": int64(2)},
			wantStatus: core.StatusDelivered, wantFallback: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := &holder{script: []error{lostAnswer}}
			e := uncertainEnv(t, h, tc.settings)
			e.svc.o.MaxRetries = 0
			id := e.enqueue(t, &core.Log{Message: msg("last try")})
			e.drain(t)
			l, err := e.logs.FindLogByID(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			sent, _ := h.calls()
			fallback, _ := e.tr[2].stats()
			if l.Status != tc.wantStatus || len(sent) != 1 || fallback != tc.wantFallback {
				t.Fatalf("status %s, %d send(s) on the connection, %d on the fallback; want %s, 1, %d (history %v)",
					l.Status, len(sent), fallback, tc.wantStatus, tc.wantFallback, outcomes(l))
			}
			if l.History[0].Outcome != core.OutcomeUncertain || !strings.Contains(l.History[1].Error, "not found at the provider") {
				t.Errorf("history %+v, want the uncertain attempt and then the not-found record", l.History)
			}
		})
	}
}

// TestAttemptsCarryAMessageID: every attempt goes out with a Message-ID
// (a fresh one per attempt unless the message has its own or the last
// attempt was uncertain), so that an uncertain one can be looked up.
func TestAttemptsCarryAMessageID(t *testing.T) {
	h := &holder{script: []error{temp}}
	e := uncertainEnv(t, h, nil)
	e.enqueue(t, &core.Log{Message: msg("retried")})
	e.drain(t)
	sent, _ := h.calls()
	if len(sent) != 2 || sent[0] == "" || sent[1] == "" || sent[0] == sent[1] {
		t.Fatalf("Message-IDs sent %q: want two attempts, each with its own", sent)
	}
	if !strings.HasSuffix(sent[0], "@example.com>") {
		t.Errorf("Message-ID %q is not on the sender's domain", sent[0])
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
