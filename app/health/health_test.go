package health_test

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

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/health"
	"github.com/mailsvc/mailsvc/core"
)

// behaviour is what the fake driver does for one connection.
type behaviour struct {
	mu       sync.Mutex
	script   []error       // Verify results in turn; nil passes; after the script it passes
	delay    time.Duration // how long each Verify takes
	noVerify bool          // build a transport without Verify
	buildErr error
	verifies int
	closed   int
	inFlight *atomic.Int64 // shared counter of concurrent Verify calls, when set
	maxSeen  *atomic.Int64
}

var (
	fakeMu     sync.Mutex
	behaviours = map[int64]*behaviour{}
	register   sync.Once
)

type plainTransport struct{ b *behaviour }

func (t *plainTransport) Send(context.Context, *core.Message) (core.Receipt, error) {
	return core.Receipt{}, errors.New("a health check must not send")
}

func (t *plainTransport) Close() error {
	t.b.mu.Lock()
	defer t.b.mu.Unlock()
	t.b.closed++
	return nil
}

type verifyingTransport struct{ plainTransport }

func (t *verifyingTransport) Verify(ctx context.Context) error {
	b := t.b
	if b.inFlight != nil {
		n := b.inFlight.Add(1)
		defer b.inFlight.Add(-1)
		for {
			m := b.maxSeen.Load()
			if n <= m || b.maxSeen.CompareAndSwap(m, n) {
				break
			}
		}
	}
	b.mu.Lock()
	b.verifies++
	var err error
	if len(b.script) > 0 {
		err, b.script = b.script[0], b.script[1:]
	}
	delay := b.delay
	b.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return core.Temporary(ctx.Err())
		}
	}
	return err
}

func registerFake() {
	register.Do(func() {
		core.Register(core.Driver{
			Slug: "healthfake", Name: "Health fake",
			Fields: []core.Field{{Key: "password", Type: core.FieldPassword}},
			New: func(c *core.Connection, _ core.DriverEnv) (core.Transport, error) {
				fakeMu.Lock()
				b := behaviours[c.ID]
				fakeMu.Unlock()
				if b == nil {
					return nil, errors.New("no behaviour")
				}
				if b.buildErr != nil {
					return nil, b.buildErr
				}
				if b.noVerify {
					return &plainTransport{b: b}, nil
				}
				return &verifyingTransport{plainTransport{b: b}}, nil
			},
		})
	})
}

type fixture struct {
	store   *apptest.ConnectionStore
	checker *health.Checker
	alerts  *apptest.AlertRecorder
	cipher  apptest.Cipher
}

func newFixture() *fixture {
	registerFake()
	f := &fixture{store: apptest.NewConnectionStore(), alerts: &apptest.AlertRecorder{}, cipher: apptest.Cipher{Key: "k"}}
	f.checker = &health.Checker{
		Connections:   &app.Connections{Store: f.store, Cipher: f.cipher},
		State:         f.store,
		Alerts:        f.alerts,
		Logger:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		SlowThreshold: time.Hour,
		Timeout:       10 * time.Second,
	}
	return f
}

// add stores a healthfake connection with an encrypted password and the
// given behaviour.
func (f *fixture) add(t *testing.T, name string, b *behaviour, edit func(*core.Connection)) *core.Connection {
	t.Helper()
	enc, _ := f.cipher.Encrypt("s3cret-pw")
	c := &core.Connection{Name: name, Driver: "healthfake", IsActive: true, HealthStatus: core.HealthUnknown,
		Settings: core.Settings{"password": enc}}
	if edit != nil {
		edit(c)
	}
	if err := f.store.CreateConnection(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	fakeMu.Lock()
	behaviours[c.ID] = b
	fakeMu.Unlock()
	return c
}

// The fake driver's behaviour table is keyed by connection id, and every
// fixture's ids start at 1, so these tests do not run in parallel.

func TestCheckVerdicts(t *testing.T) {
	tests := []struct {
		name       string
		b          *behaviour
		edit       func(*core.Connection)
		slow       time.Duration
		timeout    time.Duration
		wantStatus string // "" when the connection must be left untouched
		wantErr    string
		verifies   int
	}{
		{name: "passes: healthy", b: &behaviour{}, wantStatus: core.HealthHealthy, verifies: 1},
		{name: "slower than the threshold: degraded", b: &behaviour{delay: 5 * time.Millisecond}, slow: time.Millisecond,
			wantStatus: core.HealthDegraded, verifies: 1},
		{name: "rejected: down with the reason", b: &behaviour{script: []error{core.Permanent(errors.New("535 5.7.8 authentication failed"))}},
			wantStatus: core.HealthDown, wantErr: "535 5.7.8 authentication failed", verifies: 1},
		{name: "unreachable: down", b: &behaviour{script: []error{core.Temporary(errors.New("dial tcp: connection refused"))}},
			wantStatus: core.HealthDown, wantErr: "connection refused", verifies: 1},
		{name: "no answer in time: down", b: &behaviour{delay: time.Hour}, timeout: 20 * time.Millisecond,
			wantStatus: core.HealthDown, wantErr: "no answer within 20ms", verifies: 1},
		{name: "secret echoed by the driver is scrubbed", b: &behaviour{script: []error{errors.New("bad password s3cret-pw for user")}},
			wantStatus: core.HealthDown, wantErr: "bad password ******** for user", verifies: 1},
		{name: "transport cannot be built: down", b: &behaviour{buildErr: errors.New("host is required")},
			wantStatus: core.HealthDown, wantErr: "build healthfake transport: host is required"},
		{name: "secrets unreadable: down", b: &behaviour{}, edit: func(c *core.Connection) {
			c.Settings["password"], _ = apptest.Cipher{Key: "old"}.Encrypt("x")
		}, wantStatus: core.HealthDown, wantErr: "cannot be decrypted"},
		{name: "unknown driver: down", b: &behaviour{}, edit: func(c *core.Connection) { c.Driver = "nosuchdriver" },
			wantStatus: core.HealthDown, wantErr: `unknown driver "nosuchdriver"`},
		{name: "no Verify: unknown, checked", b: &behaviour{noVerify: true}, wantStatus: core.HealthUnknown},
		{name: "inactive: untouched", b: &behaviour{}, edit: func(c *core.Connection) { c.IsActive = false }},
		{name: "OAuth pending: untouched", b: &behaviour{}, edit: func(c *core.Connection) { c.OAuthStatus = core.OAuthPending }},
		{name: "OAuth needs authorization: untouched", b: &behaviour{},
			edit: func(c *core.Connection) {
				c.OAuthStatus = core.OAuthNeedsAuthorization
				c.HealthStatus = core.HealthHealthy
			}},
		{name: "OAuth authorized: checked", b: &behaviour{}, edit: func(c *core.Connection) { c.OAuthStatus = core.OAuthAuthorized },
			wantStatus: core.HealthHealthy, verifies: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture()
			if tt.slow > 0 {
				f.checker.SlowThreshold = tt.slow
			}
			if tt.timeout > 0 {
				f.checker.Timeout = tt.timeout
			}
			c := f.add(t, "c", tt.b, tt.edit)
			before := time.Now().UTC()
			if err := f.checker.CheckAll(context.Background()); err != nil {
				t.Fatalf("CheckAll: %v", err)
			}
			got := f.store.Raw(c.ID)
			if tt.wantStatus == "" {
				if got.HealthStatus != c.HealthStatus || got.LastCheckedAt != nil || tt.b.verifies != 0 {
					t.Fatalf("skipped connection touched: status %q, checked %v, %d verifies", got.HealthStatus, got.LastCheckedAt, tt.b.verifies)
				}
				return
			}
			if got.HealthStatus != tt.wantStatus || got.LastCheckedAt == nil || got.LastCheckedAt.Before(before) {
				t.Fatalf("status %q checked %v; want %q, checked now", got.HealthStatus, got.LastCheckedAt, tt.wantStatus)
			}
			if (tt.wantErr == "") != (got.LastError == "") || !strings.Contains(got.LastError, tt.wantErr) {
				t.Fatalf("last_error %q, want it to say %q", got.LastError, tt.wantErr)
			}
			if strings.Contains(got.LastError, "s3cret-pw") {
				t.Fatalf("last_error leaks the password: %q", got.LastError)
			}
			tt.b.mu.Lock()
			defer tt.b.mu.Unlock()
			if tt.b.verifies != tt.verifies {
				t.Fatalf("%d Verify calls, want %d", tt.b.verifies, tt.verifies)
			}
			if tt.b.buildErr == nil && tt.b.closed != 1 && tt.verifies > 0 {
				t.Fatalf("transport closed %d times, want 1", tt.b.closed)
			}
		})
	}
}

func TestAlertsOnTransitionsOnly(t *testing.T) {
	f := newFixture()
	f.checker.SlowThreshold = time.Millisecond
	fail := core.Temporary(errors.New("dial tcp 127.0.0.1:25: connection refused"))
	b := &behaviour{}
	c := f.add(t, "Primary", b, nil)
	steps := []struct {
		result     error
		slow       bool
		wantStatus string
		wantEvents []string
	}{
		{nil, false, core.HealthHealthy, nil},                                     // unknown → healthy
		{fail, false, core.HealthDown, []string{core.EventConnectionDown}},        // healthy → down
		{fail, false, core.HealthDown, nil},                                       // still down: nothing
		{fail, false, core.HealthDown, nil},                                       // still down: nothing
		{nil, false, core.HealthHealthy, []string{core.EventConnectionRecovered}}, // recovered
		{nil, false, core.HealthHealthy, nil},                                     // still healthy
		{nil, true, core.HealthDegraded, nil},                                     // healthy → degraded: no alert
		{fail, false, core.HealthDown, []string{core.EventConnectionDown}},        // degraded → down
		{nil, true, core.HealthDegraded, []string{core.EventConnectionRecovered}}, // down → degraded is a recovery
	}
	for i, st := range steps {
		b.mu.Lock()
		b.script = []error{st.result}
		b.delay = 0
		if st.slow {
			b.delay = 5 * time.Millisecond
		}
		b.mu.Unlock()
		if err := f.checker.CheckAll(context.Background()); err != nil {
			t.Fatalf("step %d: CheckAll: %v", i, err)
		}
		if got := f.store.Raw(c.ID).HealthStatus; got != st.wantStatus {
			t.Fatalf("step %d: status %q, want %q", i, got, st.wantStatus)
		}
		alerts := f.alerts.Take()
		var events []string
		for _, a := range alerts {
			events = append(events, a.Event)
			if a.ConnectionID != c.ID || a.ConnectionName != "Primary" || a.Title == "" || a.At.IsZero() {
				t.Errorf("step %d: alert %+v does not name the connection", i, a)
			}
			if a.Event == core.EventConnectionDown && !strings.Contains(a.Message, "connection refused") {
				t.Errorf("step %d: down alert %q does not say why", i, a.Message)
			}
			if strings.Contains(a.Message+a.Title, "s3cret-pw") {
				t.Errorf("step %d: alert leaks the password", i)
			}
		}
		if !slices.Equal(events, st.wantEvents) {
			t.Fatalf("step %d: alerts %v, want %v", i, events, st.wantEvents)
		}
	}
}

func TestChecksRunConcurrentlyWithinTheBound(t *testing.T) {
	f := newFixture()
	f.checker.Concurrency = 3
	var inFlight, maxSeen atomic.Int64
	var bs []*behaviour
	for i := range 10 {
		b := &behaviour{delay: 10 * time.Millisecond, inFlight: &inFlight, maxSeen: &maxSeen}
		bs = append(bs, b)
		f.add(t, fmt.Sprint(i), b, nil)
	}
	if err := f.checker.CheckAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i, b := range bs {
		if b.verifies != 1 {
			t.Fatalf("connection %d verified %d times, want 1", i, b.verifies)
		}
	}
	if m := maxSeen.Load(); m > 3 {
		t.Fatalf("%d checks ran at once, the bound is 3", m)
	}
	if inFlight.Load() != 0 {
		t.Fatalf("CheckAll returned with %d checks still running", inFlight.Load())
	}
}

func TestCheckAllReportsAListFailure(t *testing.T) {
	f := newFixture()
	f.checker.Connections = failingList{}
	err := f.checker.CheckAll(context.Background())
	if err == nil || !strings.Contains(err.Error(), "list connections") {
		t.Fatalf("CheckAll = %v, want the list error", err)
	}
}

type failingList struct{}

func (failingList) List(context.Context, int, int) ([]*core.Connection, int, error) {
	return nil, 0, errors.New("database is down")
}

func (failingList) Effective(context.Context, int64) (*core.Connection, error) {
	return nil, errors.New("database is down")
}
