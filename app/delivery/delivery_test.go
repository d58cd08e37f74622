package delivery

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/core"
)

// scripted is a fake transport: each Send takes the next scripted result
// (nil: accepted); after the script it accepts.
type scripted struct {
	mu       sync.Mutex
	script   []error
	calls    int
	accepted []string // subjects accepted
	texts    []string // text bodies sent, accepted or not
	closed   atomic.Bool
	onSend   func() // called at the start of each Send, when set
}

func (s *scripted) Send(_ context.Context, msg *core.Message) (core.Receipt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.onSend != nil {
		s.onSend()
	}
	s.calls++
	s.texts = append(s.texts, msg.Text)
	if len(s.script) > 0 {
		err := s.script[0]
		s.script = s.script[1:]
		if err != nil {
			return core.Receipt{}, err
		}
	}
	s.accepted = append(s.accepted, msg.Subject)
	return core.Receipt{MessageID: fmt.Sprintf("pm-%d", s.calls), Response: "250 ok"}, nil
}

func (s *scripted) Close() error { s.closed.Store(true); return nil }

func (s *scripted) stats() (calls int, accepted []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls, slices.Clone(s.accepted)
}

// fakeDriver is registered once; its transports come from the test's
// table, keyed by connection id.
var (
	fakeMu      sync.Mutex
	fakeByConn  = map[int64]core.Transport{}
	fakeBuilds  atomic.Int64
	registerFun sync.Once
)

func registerFake() {
	registerFun.Do(func() {
		core.Register(core.Driver{Slug: "deliveryfake", Name: "Fake", New: func(c *core.Connection, _ core.DriverEnv) (core.Transport, error) {
			fakeBuilds.Add(1)
			fakeMu.Lock()
			defer fakeMu.Unlock()
			tr, ok := fakeByConn[c.ID]
			if !ok {
				return nil, errors.New("no fake transport for this connection")
			}
			return tr, nil
		}})
	})
}

type fakeConns struct {
	mu sync.Mutex
	m  map[int64]*core.Connection
}

func (f *fakeConns) Effective(_ context.Context, id int64) (*core.Connection, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.m[id]
	if !ok {
		return nil, core.Errorf(core.ENOTFOUND, "Connection %d not found.", id)
	}
	out := *c
	return &out, nil
}

type fakeSettings map[string]any

func (f fakeSettings) Get(context.Context) (map[string]any, error) {
	out := core.SettingsDefaults(core.FreeSettings)
	for k, v := range f {
		out[k] = v
	}
	return out, nil
}

// env is one test's service with fake connections 1 (default), 2
// (fallback) and 3.
type env struct {
	svc   *Service
	logs  *apptest.LogStore
	conns *fakeConns
	tr    map[int64]*scripted
}

var nextConnBase atomic.Int64

func newEnv(t *testing.T, settings fakeSettings, scripts map[int64][]error, inactive ...int64) *env {
	t.Helper()
	registerFake()
	// Connection ids are unique per test so the global fake table never
	// mixes tests.
	base := nextConnBase.Add(10) * 10
	e := &env{logs: apptest.NewLogStore(), conns: &fakeConns{m: map[int64]*core.Connection{}}, tr: map[int64]*scripted{}}
	for i := int64(1); i <= 3; i++ {
		id := base + i
		tr := &scripted{script: scripts[i]}
		e.tr[i] = tr
		fakeMu.Lock()
		fakeByConn[id] = tr
		fakeMu.Unlock()
		e.conns.m[id] = &core.Connection{ID: id, Driver: "deliveryfake", IsActive: !slices.Contains(inactive, i), UpdatedAt: time.Unix(1, 0)}
	}
	// Settings name connections 1..3; translate to this test's ids.
	s := fakeSettings{"from_email": "site@example.com", "from_name": "Site"}
	for k, v := range settings {
		if n, ok := v.(int64); ok && (k == "default_connection_id" || k == "fallback_connection_id") {
			v = base + n
		}
		s[k] = v
	}
	if _, ok := s["default_connection_id"]; !ok {
		s["default_connection_id"] = base + 1
	}
	e.svc = New(Options{
		Logs: e.logs, Connections: e.conns, Settings: s,
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		BackoffBase: time.Millisecond, BackoffMax: 4 * time.Millisecond,
		Workers: 2, BatchSize: 5, PollInterval: 5 * time.Millisecond, Lease: time.Minute,
	})
	return e
}

func msg(subject string) core.Message {
	return core.Message{To: []core.Address{{Email: "to@example.com"}}, Subject: subject, Text: "body"}
}

// drain processes the queue synchronously, making retries due at once,
// until no log is queued.
func (e *env) drain(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	for range 100 {
		queued, _, _ := e.logs.FindLogs(ctx, core.LogFilter{Status: core.StatusQueued})
		if len(queued) == 0 {
			return
		}
		for _, l := range queued {
			e.logs.MakeDue(l.ID)
		}
		logs, err := e.logs.ClaimLogs(ctx, "test", e.svc.o.BatchSize, e.svc.o.Lease)
		if err != nil {
			t.Fatal(err)
		}
		e.svc.processBatch(ctx, "test", logs)
	}
	t.Fatal("queue did not drain")
}

func (e *env) enqueue(t *testing.T, l *core.Log) int64 {
	t.Helper()
	id, err := e.svc.Enqueue(context.Background(), l)
	if err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	return id
}

func outcomes(l *core.Log) []string {
	var out []string
	for _, a := range l.History {
		out = append(out, a.Outcome)
	}
	return out
}

var (
	temp = core.Temporary(errors.New("451 try later"))
	perm = core.Permanent(errors.New("550 no such user"))
)

func TestDeliveryOutcomes(t *testing.T) {
	tests := []struct {
		name        string
		settings    fakeSettings
		scripts     map[int64][]error
		inactive    []int64
		explicit    int64 // explicit connection number, 0 for none
		maxRetries  int
		status      string
		outcomes    []string
		calls       map[int64]int // transport number → Send calls
		sentConn    int64
		fallback    bool
		simulated   bool
		providerID  string
		errContains string
	}{
		{
			name:    "temporary twice then delivered once",
			scripts: map[int64][]error{1: {temp, temp}},
			status:  core.StatusDelivered, outcomes: []string{core.OutcomeTemporary, core.OutcomeTemporary, core.OutcomeDelivered},
			calls: map[int64]int{1: 3}, sentConn: 1, providerID: "pm-3",
		},
		{
			name:    "permanent fails after one attempt",
			scripts: map[int64][]error{1: {perm}},
			status:  core.StatusFailed, outcomes: []string{core.OutcomePermanent},
			calls: map[int64]int{1: 1}, sentConn: 1, errContains: "550 no such user",
		},
		{
			name:     "retries exhausted then fallback delivers",
			settings: fakeSettings{"fallback_connection_id": int64(2)},
			scripts:  map[int64][]error{1: {temp, temp, temp, temp}},
			status:   core.StatusDelivered,
			outcomes: []string{core.OutcomeTemporary, core.OutcomeTemporary, core.OutcomeTemporary, core.OutcomeTemporary, core.OutcomeDelivered},
			calls:    map[int64]int{1: 4, 2: 1}, sentConn: 2, fallback: true, providerID: "pm-1",
		},
		{
			name:     "fallback gets a full try sequence then fails",
			settings: fakeSettings{"fallback_connection_id": int64(2)},
			scripts:  map[int64][]error{1: {perm}, 2: {temp, temp}},
			status:   core.StatusFailed, maxRetries: 1,
			outcomes: []string{core.OutcomePermanent, core.OutcomeTemporary, core.OutcomeTemporary},
			calls:    map[int64]int{1: 1, 2: 2}, sentConn: 2, fallback: true, errContains: "451",
		},
		{
			name:    "retry limit from the field",
			scripts: map[int64][]error{1: {temp, temp, temp}},
			status:  core.StatusFailed, maxRetries: -1,
			outcomes: []string{core.OutcomeTemporary},
			calls:    map[int64]int{1: 1}, sentConn: 1,
		},
		{
			name:     "inactive default is never used",
			inactive: []int64{1},
			status:   core.StatusFailed, outcomes: []string{core.OutcomePermanent},
			calls: map[int64]int{1: 0}, sentConn: 1, errContains: "inactive",
		},
		{
			name:     "inactive default hands over to the fallback",
			settings: fakeSettings{"fallback_connection_id": int64(2)},
			inactive: []int64{1},
			status:   core.StatusDelivered, outcomes: []string{core.OutcomePermanent, core.OutcomeDelivered},
			calls: map[int64]int{1: 0, 2: 1}, sentConn: 2, fallback: true, providerID: "pm-1",
		},
		{
			name:     "inactive fallback is never used",
			settings: fakeSettings{"fallback_connection_id": int64(2)},
			scripts:  map[int64][]error{1: {perm}},
			inactive: []int64{2},
			status:   core.StatusFailed, outcomes: []string{core.OutcomePermanent},
			calls: map[int64]int{1: 1, 2: 0}, sentConn: 1,
		},
		{
			name:     "explicit connection gets no fallback",
			settings: fakeSettings{"fallback_connection_id": int64(2)},
			scripts:  map[int64][]error{3: {perm}},
			explicit: 3,
			status:   core.StatusFailed, outcomes: []string{core.OutcomePermanent},
			calls: map[int64]int{1: 0, 2: 0, 3: 1}, sentConn: 3,
		},
		{
			name:     "no default connection fails clearly",
			settings: fakeSettings{"default_connection_id": nil},
			status:   core.StatusFailed, outcomes: []string{core.OutcomePermanent},
			calls: map[int64]int{1: 0}, errContains: "no default connection",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.settings, tt.scripts, tt.inactive...)
			if tt.maxRetries != 0 {
				e.svc.o.MaxRetries = max(tt.maxRetries, 0)
			}
			base := e.svc.mustBase(t, e) - 1
			l := &core.Log{Message: msg(tt.name)}
			if tt.explicit != 0 {
				id := base + tt.explicit
				l.ConnectionID = &id
			}
			id := e.enqueue(t, l)
			e.drain(t)
			got, err := e.logs.FindLogByID(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tt.status || !slices.Equal(outcomes(got), tt.outcomes) {
				t.Fatalf("status %s outcomes %v, want %s %v (last error %q)", got.Status, outcomes(got), tt.status, tt.outcomes, got.LastError)
			}
			if got.Attempts != len(tt.outcomes) {
				t.Errorf("attempts = %d, want %d", got.Attempts, len(tt.outcomes))
			}
			for n, want := range tt.calls {
				if calls, _ := e.tr[n].stats(); calls != want {
					t.Errorf("transport %d: %d sends, want %d", n, calls, want)
				}
			}
			delivered := 0
			for n := range e.tr {
				_, acc := e.tr[n].stats()
				delivered += len(acc)
			}
			if wantAcc := map[bool]int{true: 1, false: 0}[tt.status == core.StatusDelivered && !tt.simulated]; delivered != wantAcc {
				t.Errorf("accepted %d times in all, want %d", delivered, wantAcc)
			}
			if tt.sentConn != 0 && (got.SentConnectionID == nil || *got.SentConnectionID != base+tt.sentConn) {
				t.Errorf("sent connection = %v, want %d", got.SentConnectionID, base+tt.sentConn)
			}
			if got.UsedFallback != tt.fallback || got.Simulated != tt.simulated || got.ProviderMessageID != tt.providerID {
				t.Errorf("fallback %v simulated %v provider id %q; want %v %v %q", got.UsedFallback, got.Simulated, got.ProviderMessageID, tt.fallback, tt.simulated, tt.providerID)
			}
			if tt.errContains != "" && !strings.Contains(got.LastError, tt.errContains) {
				t.Errorf("last error %q does not contain %q", got.LastError, tt.errContains)
			}
			if tt.status == core.StatusDelivered && got.DeliveredAt == nil {
				t.Error("delivered without delivered_at")
			}
		})
	}
}

// mustBase returns the id of this env's connection 1.
func (s *Service) mustBase(t *testing.T, e *env) int64 {
	t.Helper()
	var lowest int64
	for id := range e.conns.m {
		if lowest == 0 || id < lowest {
			lowest = id
		}
	}
	return lowest
}

func TestLogEmailsOff(t *testing.T) {
	e := newEnv(t, fakeSettings{"log_emails": false}, map[int64][]error{1: {nil, perm}})
	ok := e.enqueue(t, &core.Log{Message: msg("kept?")})
	e.drain(t)
	bad := e.enqueue(t, &core.Log{Message: msg("fails")})
	e.drain(t)
	ctx := context.Background()
	if _, err := e.logs.FindLogByID(ctx, ok); core.ErrorCode(err) != core.ENOTFOUND {
		t.Fatalf("delivered log still stored (err %v)", err)
	}
	got, err := e.logs.FindLogByID(ctx, bad)
	if err != nil || got.Status != core.StatusFailed {
		t.Fatalf("failed log = %+v, %v; want it kept as failed", got, err)
	}
	if _, acc := e.tr[1].stats(); !slices.Equal(acc, []string{"kept?"}) {
		t.Fatalf("accepted %v", acc)
	}
}

func TestFromDefaults(t *testing.T) {
	tests := []struct {
		name     string
		settings fakeSettings
		from     core.Address
		want     core.Address
		invalid  bool
	}{
		{"settings fill a missing from", nil, core.Address{}, core.Address{Name: "Site", Email: "site@example.com"}, false},
		{"the message's own from wins", nil, core.Address{Name: "Me", Email: "me@example.com"}, core.Address{Name: "Me", Email: "me@example.com"}, false},
		{"no from anywhere is invalid", fakeSettings{"from_email": ""}, core.Address{}, core.Address{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.settings, nil)
			m := msg("from")
			m.From = tt.from
			id, err := e.svc.Enqueue(context.Background(), &core.Log{Message: m})
			if tt.invalid {
				if core.ErrorCode(err) != core.EINVALID || core.ErrorFields(err)["from"] == "" {
					t.Fatalf("Enqueue err = %v, want EINVALID on from", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := e.logs.FindLogByID(context.Background(), id)
			if got.Message.From != tt.want {
				t.Fatalf("from = %+v, want %+v", got.Message.From, tt.want)
			}
		})
	}
	e := newEnv(t, nil, nil)
	_, err := e.svc.Enqueue(context.Background(), &core.Log{Message: core.Message{Subject: "x", Text: "y"}})
	if core.ErrorFields(err)["to"] == "" {
		t.Fatalf("no recipients: err = %v, want a validation error on to", err)
	}
}

func TestBackoffGrowsWithBoundedJitter(t *testing.T) {
	s := New(Options{BackoffBase: time.Second, BackoffMax: 30 * time.Second})
	for n := 1; n <= 8; n++ {
		d := time.Second << (n - 1)
		if d > 30*time.Second {
			d = 30 * time.Second
		}
		seen := map[time.Duration]bool{}
		for range 50 {
			b := s.Backoff(n)
			if b < d/2 || b >= d {
				t.Fatalf("Backoff(%d) = %v, want in [%v, %v)", n, b, d/2, d)
			}
			seen[b] = true
		}
		if len(seen) < 10 {
			t.Fatalf("Backoff(%d) took only %d distinct values in 50 draws: no jitter", n, len(seen))
		}
	}
}

func TestPurgeHonoursRetentionFilter(t *testing.T) {
	tests := []struct {
		name     string
		days     int64
		filter   any // value the hook returns; nil for no hook
		wantLeft int
	}{
		{"90 days keeps a 30-day-old log", 90, nil, 2},
		{"10 days purges it", 10, nil, 1},
		{"the filter overrides the setting", 90, int64(5), 1},
		{"0 keeps forever", 0, nil, 2},
		{"the filter can keep forever", 10, int64(0), 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, fakeSettings{"log_retention_days": tt.days}, nil)
			if tt.filter != nil {
				e.svc.o.Hooks = &core.Hooks{}
				e.svc.o.Hooks.AddFilter(core.HookLogRetentionDays, func(v any, _ ...any) any { return tt.filter })
			}
			old := e.enqueue(t, &core.Log{Message: msg("old")})
			e.enqueue(t, &core.Log{Message: msg("new")})
			e.drain(t)
			e.logs.SetCreatedAt(old, time.Now().Add(-30*24*time.Hour))
			if _, err := e.svc.Purge(context.Background()); err != nil {
				t.Fatal(err)
			}
			_, total, _ := e.logs.FindLogs(context.Background(), core.LogFilter{})
			if total != tt.wantLeft {
				t.Fatalf("%d logs left, want %d", total, tt.wantLeft)
			}
		})
	}
}

func TestSendNow(t *testing.T) {
	e := newEnv(t, nil, map[int64][]error{3: {nil, perm}})
	base := e.svc.mustBase(t, e) - 1
	ctx := context.Background()
	m := msg("test email")
	l, err := e.svc.SendNow(ctx, base+3, &m, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	if l.Status != core.StatusDelivered || len(l.History) != 1 || l.ProviderMessageID != "pm-1" || l.Source != "test" {
		t.Fatalf("SendNow log = %+v", l)
	}
	stored, err := e.logs.FindLogByID(ctx, l.ID)
	if err != nil || stored.Status != core.StatusDelivered || len(stored.History) != 1 {
		t.Fatalf("stored = %+v, %v", stored, err)
	}
	m2 := msg("second")
	l, err = e.svc.SendNow(ctx, base+3, &m2, "test", nil)
	if err != nil || l.Status != core.StatusFailed || l.LastError == "" {
		t.Fatalf("failing SendNow = %+v, %v; want a failed log", l, err)
	}
	e.conns.m[base+3].IsActive = false
	if _, err := e.svc.SendNow(ctx, base+3, &m, "test", nil); core.ErrorFields(err)["connection_id"] == "" {
		t.Fatalf("inactive connection: err = %v, want EINVALID on connection_id", err)
	}
	if _, err := e.svc.SendNow(ctx, base+99, &m, "test", nil); core.ErrorFields(err)["connection_id"] == "" {
		t.Fatalf("missing connection: err = %v, want EINVALID on connection_id", err)
	}
}

func TestResendDeliversAgain(t *testing.T) {
	e := newEnv(t, nil, map[int64][]error{1: {perm}})
	id := e.enqueue(t, &core.Log{Message: msg("again")})
	e.drain(t)
	n, err := e.svc.Resend(context.Background(), []int64{id, id + 100})
	if err != nil || n != 1 {
		t.Fatalf("Resend = %d, %v", n, err)
	}
	e.drain(t)
	got, _ := e.logs.FindLogByID(context.Background(), id)
	if got.Status != core.StatusDelivered || got.Attempts != 1 || len(got.History) != 2 {
		t.Fatalf("resent log: status %s attempts %d history %v", got.Status, got.Attempts, outcomes(got))
	}
}

func TestTransportCacheReusesAndRebuilds(t *testing.T) {
	e := newEnv(t, nil, nil)
	base := e.svc.mustBase(t, e)
	conn := e.conns.m[base]
	before := fakeBuilds.Load()
	for range 3 {
		if _, err := e.svc.transports.get(conn); err != nil {
			t.Fatal(err)
		}
	}
	if got := fakeBuilds.Load() - before; got != 1 {
		t.Fatalf("built %d transports for one unchanged connection, want 1", got)
	}
	changed := *conn
	changed.UpdatedAt = conn.UpdatedAt.Add(time.Second)
	if _, err := e.svc.transports.get(&changed); err != nil {
		t.Fatal(err)
	}
	if got := fakeBuilds.Load() - before; got != 2 {
		t.Fatalf("built %d transports after an update, want 2", got)
	}
	if !e.tr[1].closed.Load() {
		t.Fatal("the replaced transport was not closed")
	}
}

func TestRunDeliversEachMessageOnce(t *testing.T) {
	e := newEnv(t, nil, map[int64][]error{1: {temp, nil, temp}})
	const n = 60
	for i := range n {
		e.enqueue(t, &core.Log{Message: msg(fmt.Sprintf("m%d", i))})
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.svc.Run(ctx); close(done) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, _ := e.logs.QueueStats(context.Background())
		if st.Delivered == n {
			break
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("stats %+v after 20s, want %d delivered", st, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	_, acc := e.tr[1].stats()
	slices.Sort(acc)
	if len(acc) != n || len(slices.Compact(acc)) != n {
		t.Fatalf("accepted %d messages (%d distinct), want %d each once", len(acc), len(slices.Compact(acc)), n)
	}
	if !e.tr[1].closed.Load() {
		t.Fatal("Run did not close cached transports on shutdown")
	}
}

func TestAPIDebugEventPerAttempt(t *testing.T) {
	e := newEnv(t, nil, map[int64][]error{1: {temp}})
	var payloads []map[string]any
	e.svc.o.Hooks = &core.Hooks{}
	e.svc.o.Hooks.AddAction(core.HookAPIDebug, func(args ...any) {
		payloads = append(payloads, args[0].(map[string]any))
	})
	id := e.enqueue(t, &core.Log{Message: msg("debugged")})
	e.drain(t)
	if len(payloads) != 2 {
		t.Fatalf("got %d payloads, want one per attempt (2): %v", len(payloads), payloads)
	}
	first, second := payloads[0], payloads[1]
	if first["log_id"] != id || first["outcome"] != core.OutcomeTemporary || first["error"] == "" || first["subject"] != "debugged" {
		t.Errorf("first attempt payload %v", first)
	}
	if second["outcome"] != core.OutcomeDelivered || second["driver"] != "deliveryfake" || fmt.Sprint(second["recipients"]) != "[to@example.com]" {
		t.Errorf("second attempt payload %v", second)
	}
}

func TestShutdownHandsBackUntriedMessages(t *testing.T) {
	e := newEnv(t, nil, nil)
	ctx := context.Background()
	for i := range 5 {
		e.enqueue(t, &core.Log{Message: msg(fmt.Sprintf("m%d", i))})
	}
	logs, err := e.logs.ClaimLogs(ctx, "test", 5, time.Minute)
	if err != nil || len(logs) != 5 {
		t.Fatalf("claim: %d, %v", len(logs), err)
	}
	// SIGTERM arrives while the first message is being sent; one send at
	// a time, so the others are still waiting their turn.
	conn := e.conns.m[e.svc.mustBase(t, e)]
	conn.Settings = core.Settings{core.SettingMaxConcurrency: int64(1)}
	stop, cancel := context.WithCancel(ctx)
	e.tr[1].onSend = cancel
	e.svc.processBatch(stop, "test", logs)
	calls, accepted := e.tr[1].stats()
	if calls != 1 || len(accepted) != 1 {
		t.Fatalf("sends after shutdown: calls %d, accepted %v", calls, accepted)
	}
	st, _ := e.logs.QueueStats(ctx)
	if st.Delivered != 1 || st.Queued != 4 || st.Sending != 0 {
		t.Fatalf("stats after shutdown = %+v, want 1 delivered and 4 handed back", st)
	}
	queued, _, _ := e.logs.FindLogs(ctx, core.LogFilter{Status: core.StatusQueued})
	for _, l := range queued {
		if got, _ := e.logs.FindLogByID(ctx, l.ID); got.Attempts != 0 || len(got.History) != 0 {
			t.Errorf("handed-back log %d has attempts %d / history %v", l.ID, got.Attempts, got.History)
		}
	}
	// The next process delivers them.
	e.tr[1].onSend = nil
	e.drain(t)
	if st, _ := e.logs.QueueStats(ctx); st.Delivered != 5 {
		t.Fatalf("after restart: %+v", st)
	}
}

// recordingAlerter keeps every alert raised.
type recordingAlerter struct {
	mu     sync.Mutex
	alerts []core.Alert
}

func (r *recordingAlerter) Raise(_ context.Context, a core.Alert) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.alerts = append(r.alerts, a)
}

func (r *recordingAlerter) all() []core.Alert {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.alerts)
}

func TestDeliveryAlerts(t *testing.T) {
	type want struct {
		event    string
		conn     int64 // connection number, 0 for none
		contains string
	}
	tests := []struct {
		name     string
		settings fakeSettings
		scripts  map[int64][]error
		inactive []int64
		want     []want
	}{
		{name: "delivered: no alert"},
		{name: "delivered after retries: no alert", scripts: map[int64][]error{1: {temp, temp}}},
		{
			name: "permanent failure: delivery_failed naming the connection", scripts: map[int64][]error{1: {perm}},
			want: []want{{core.EventDeliveryFailed, 1, "550 no such user"}},
		},
		{
			name: "retries exhausted: one delivery_failed", scripts: map[int64][]error{1: {temp, temp, temp, temp}},
			want: []want{{core.EventDeliveryFailed, 1, "after 4 attempt(s): temporary failure: 451 try later"}},
		},
		{
			name: "fallback delivers: fallback_used naming the failed connection", settings: fakeSettings{"fallback_connection_id": int64(2)},
			scripts: map[int64][]error{1: {perm}},
			want:    []want{{core.EventFallbackUsed, 1, "fallback connection"}},
		},
		{
			name: "fallback fails too: fallback_used then delivery_failed on the fallback", settings: fakeSettings{"fallback_connection_id": int64(2)},
			scripts: map[int64][]error{1: {perm}, 2: {perm}},
			want:    []want{{core.EventFallbackUsed, 1, "550"}, {core.EventDeliveryFailed, 2, "550 no such user"}},
		},
		{
			name: "no connection at all: delivery_failed without one", settings: fakeSettings{"default_connection_id": nil},
			want: []want{{core.EventDeliveryFailed, 0, "no default connection"}},
		},
		{
			name: "inactive default to fallback", settings: fakeSettings{"fallback_connection_id": int64(2)}, inactive: []int64{1},
			want: []want{{core.EventFallbackUsed, 1, "inactive"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.settings, tt.scripts, tt.inactive...)
			e.svc.o.MaxRetries = 3
			base := e.svc.mustBase(t, e) - 1
			for id, c := range e.conns.m {
				c.Name = fmt.Sprintf("conn-%d", id-base)
				c.Settings = core.Settings{"password": "s3cret-pw"}
			}
			rec := &recordingAlerter{}
			e.svc.o.Alerts = rec
			id := e.enqueue(t, &core.Log{Message: msg(tt.name)})
			e.drain(t)
			got := rec.all()
			if len(got) != len(tt.want) {
				t.Fatalf("alerts %+v, want %d", got, len(tt.want))
			}
			for i, w := range tt.want {
				a := got[i]
				wantConn, wantName := int64(0), ""
				if w.conn != 0 {
					wantConn, wantName = base+w.conn, fmt.Sprintf("conn-%d", w.conn)
				}
				if a.Event != w.event || a.LogID != id || a.ConnectionID != wantConn || a.ConnectionName != wantName {
					t.Errorf("alert %d = %+v; want event %s, log %d, connection %d %q", i, a, w.event, id, wantConn, wantName)
				}
				if !strings.Contains(a.Message, w.contains) || a.Title == "" || a.At.IsZero() {
					t.Errorf("alert %d message %q (title %q) does not say %q", i, a.Message, a.Title, w.contains)
				}
				if strings.Contains(a.Message+a.Title, "s3cret-pw") {
					t.Errorf("alert %d leaks a connection secret: %q", i, a.Message)
				}
			}
		})
	}
}

// A failure whose outcome the store skipped (the lease passed to another
// worker, which decides the message again) has not failed for good: no
// alert.
func TestDeliveryAlertsFollowTheRecord(t *testing.T) {
	e := newEnv(t, nil, map[int64][]error{1: {perm}})
	rec := &recordingAlerter{}
	e.svc.o.Alerts = rec
	e.enqueue(t, &core.Log{Message: msg("x")})
	logs, err := e.logs.ClaimLogs(context.Background(), "test", 5, time.Minute)
	if err != nil || len(logs) != 1 {
		t.Fatalf("claim = %d, %v", len(logs), err)
	}
	e.svc.processBatch(context.Background(), "other-owner-never-recorded", logs)
	if l, _ := e.logs.FindLogByID(context.Background(), logs[0].ID); l.Status != core.StatusSending {
		t.Fatalf("the log is %s; the test needs its outcome skipped", l.Status)
	}
	if got := rec.all(); len(got) != 0 {
		t.Fatalf("alerts %+v raised for an outcome that was not recorded", got)
	}
}
