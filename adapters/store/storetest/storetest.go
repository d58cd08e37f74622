// Package storetest is the contract test suite of the store: the same
// behaviour checked against every implementation. Run takes a Factory
// that makes fresh, empty stores: package store's over SQLite or MariaDB
// (SQL gives it), or another implementation of the log store, such as the
// in-memory one of app/apptest, which runs the log and queue contract.
// Each subtest gets its own store (package store's: its own table
// prefix), so subtests never see each other's rows. Its exported helpers
// (OpenDialect, EachDSN, Open, Prefixes, Message, Enqueue, Claim and the
// checks RecordOutcomesAndClaim, CompactRollupsKeepsSums and
// CompactRollupsConcurrent) are shared with the tests of package store
// and of the Pro module's store (adapters/pro/store), which run the
// checks again with its own tables linked.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/core"
)

// LogStore is the log and queue contract every implementation passes:
// the queue port, the body rewriting port, log imports and the outcome
// roll-ups they grow.
type LogStore interface {
	core.LogStore
	core.LogBodyStore
	// ImportLogs inserts logs as they are (all or none) and sets their
	// IDs (store.LogService.ImportLogs).
	ImportLogs(ctx context.Context, logs []*core.Log) error
	// OutcomeBuckets returns the outcome roll-ups of [from, to)
	// (store.LogService.OutcomeBuckets).
	OutcomeBuckets(ctx context.Context, from, to time.Time) ([]core.OutcomeBucket, error)
}

// Store is one fresh, empty store under test.
type Store struct {
	// Logs is its log store and queue; required.
	Logs LogStore
	// Reopen, when set, returns a second handle on the same data, as a
	// second process would hold (claims must stay exclusive across
	// handles); nil means the store has one handle.
	Reopen func(t *testing.T) LogStore
	// DB is package store's handle, and DSN the database it was opened
	// on; nil and "" for another implementation. The tests of what only
	// package store has (opening and migrating, table prefixes, the
	// other services, the rows written) run only when DB is set.
	DB  *store.DB
	DSN string
}

// Factory returns a fresh, empty store for the test t; whatever it opens
// is closed when t ends.
type Factory func(t *testing.T) Store

// SQL returns the Factory of package store over the database named by dsn
// (a DSN as store.Open takes it): each store gets a table prefix of its
// own.
func SQL(dsn string) Factory {
	next := Prefixes("f%02d_")
	return func(t *testing.T) Store {
		t.Helper()
		prefix := next()
		db := Open(t, dsn, prefix)
		return Store{
			Logs:   db.Logs(),
			Reopen: func(t *testing.T) LogStore { return Open(t, dsn, prefix).Logs() },
			DB:     db,
			DSN:    dsn,
		}
	}
}

// Open opens and migrates the database named by dsn under prefix,
// logging to t; it is closed when t ends.
func Open(t *testing.T, dsn, prefix string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), dsn, prefix, testLogger(t))
	if err != nil {
		t.Fatalf("Open(prefix %q): %v", prefix, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Run runs the contract tests against the stores f makes: every test for
// package store's, the log and queue contract for another implementation.
func Run(t *testing.T, f Factory) {
	s := &suite{factory: f, prefix: Prefixes("t%02d_")}
	if probe := f(t); probe.DB == nil {
		for _, tt := range s.logContractTests() {
			t.Run(tt.name, tt.fn)
		}
		return
	} else {
		s.dsn = probe.DSN
	}
	tests := []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"OpenRejectsBadInput", s.testOpenRejectsBadInput},
		{"ConnectionCRUD", s.testConnectionCRUD},
		{"ConnectionNotFound", s.testConnectionNotFound},
		{"ConnectionPagination", s.testConnectionPagination},
		{"DeleteConnectionsCount", s.testDeleteConnections},
		{"SettingsUpsertMerge", s.testSettingsUpsertMerge},
		{"SettingsValidation", s.testSettingsValidation},
		{"ValueRoundTrip", s.testValueRoundTrip},
		{"MigrateIdempotent", s.testMigrateIdempotent},
		{"ConcurrentMigrate", s.testConcurrentMigrate},
		{"PrefixIsolation", s.testPrefixIsolation},
		{"ClosedDBReturnsErrors", s.testClosed},
	}
	tests = append(tests, s.logContractTests()...)
	tests = append(tests, s.logTests()...)
	tests = append(tests, s.connectionStateTests()...)
	tests = append(tests, s.notificationTests()...)
	tests = append(tests, s.jobTests()...)
	tests = append(tests, s.oauthTests()...)
	tests = append(tests, s.webhookTests()...)
	tests = append(tests, s.rollupCompactTests()...)
	tests = append(tests, s.privacyTests()...)
	tests = append(tests, s.hostHookTests()...)
	tests = append(tests, s.emailControlTests()...)
	tests = append(tests, s.alertHistoryTests()...)
	tests = append(tests, s.captureTests()...)
	tests = append(tests, s.floodTests()...)
	for _, tt := range tests {
		t.Run(tt.name, tt.fn)
	}
}

type suite struct {
	factory Factory
	// dsn is package store's database, for the tests that open it
	// themselves; "" for another implementation.
	dsn string
	// prefix returns a table prefix no other subtest of this run uses.
	prefix func() string
}

// logs returns the log store of a fresh store.
func (s *suite) logs(t *testing.T) LogStore { return s.factory(t).Logs }

// Prefixes returns a source of table prefixes for the subtests of a run
// that share one database: format (with one verb, such as "t%02d_")
// applied to 1, 2, 3 and on, one number a call, safe for concurrent use.
func Prefixes(format string) func() string {
	var mu sync.Mutex
	n := 0
	return func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf(format, n)
	}
}

func (s *suite) open(t *testing.T, prefix string) *store.DB {
	t.Helper()
	return Open(t, s.dsn, prefix)
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// WantCode fails t unless err carries the error code.
func WantCode(t *testing.T, err error, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", code)
	}
	if got := core.ErrorCode(err); got != code {
		t.Fatalf("error %v has code %q, want %q", err, got, code)
	}
}

func (s *suite) testOpenRejectsBadInput(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name, dsn, prefix, want string
	}{
		{"dash in prefix", s.dsn, "wp-", "table prefix"},
		{"injection in prefix", s.dsn, "wp_; DROP TABLE x;", "table prefix"},
		{"unknown scheme", "postgres://localhost/db", "wp_", "unsupported DSN scheme"},
		{"no scheme", "just-a-path.db", "wp_", "DSN must be"},
		{"empty sqlite path", "sqlite:", "wp_", "DSN must be"},
		{"mysql without database", "mysql:root:secretpw@tcp(127.0.0.1:3306)/", "wp_", "names no database"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, err := store.Open(ctx, tt.dsn, tt.prefix, testLogger(t))
			if err == nil {
				db.Close()
				t.Fatalf("Open(%q, %q) succeeded, want error", tt.dsn, tt.prefix)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q does not mention %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "secretpw") {
				t.Fatalf("error %q leaks the password", err)
			}
		})
	}
	t.Run("dialect", func(t *testing.T) {
		db := s.open(t, s.prefix())
		want, _, _ := strings.Cut(s.dsn, ":")
		if db.Dialect() != want {
			t.Fatalf("Dialect() = %q, want %q", db.Dialect(), want)
		}
		if err := db.Ping(ctx); err != nil {
			t.Fatalf("Ping: %v", err)
		}
	})
}

func (s *suite) testConnectionCRUD(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())

	c := &core.Connection{
		Name:     "Primary SMTP",
		Driver:   "smtp",
		IsActive: true,
		Settings: core.Settings{"host": "smtp.example.com", "port": int64(587), "password": "enc:v1:abc"},
	}
	before := time.Now().UTC().Add(-time.Second)
	if err := db.Connections().CreateConnection(ctx, c); err != nil {
		t.Fatalf("CreateConnection: %v", err)
	}
	if c.ID <= 0 {
		t.Fatalf("CreateConnection set ID %d, want > 0", c.ID)
	}
	if c.CreatedAt.Before(before) || !c.UpdatedAt.Equal(c.CreatedAt) {
		t.Fatalf("CreatedAt %v / UpdatedAt %v not set to now", c.CreatedAt, c.UpdatedAt)
	}
	if c.HealthStatus != core.HealthUnknown {
		t.Fatalf("HealthStatus = %q, want %q", c.HealthStatus, core.HealthUnknown)
	}

	got, err := db.Connections().FindConnectionByID(ctx, c.ID)
	if err != nil {
		t.Fatalf("FindConnectionByID: %v", err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Fatalf("read back\n%+v\nwant\n%+v", got, c)
	}

	second := &core.Connection{Name: "Backup", Driver: "sendgrid", Settings: nil, HealthStatus: core.HealthHealthy}
	if err := db.Connections().CreateConnection(ctx, second); err != nil {
		t.Fatalf("CreateConnection second: %v", err)
	}
	if second.ID == c.ID {
		t.Fatalf("two connections got the same id %d", c.ID)
	}
	got2, err := db.Connections().FindConnectionByID(ctx, second.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got2.IsActive || got2.HealthStatus != core.HealthHealthy || got2.Settings == nil || len(got2.Settings) != 0 {
		t.Fatalf("second read back %+v: want inactive, healthy, empty non-nil settings", got2)
	}

	time.Sleep(2 * time.Millisecond) // so UpdatedAt visibly moves
	upd := &core.Connection{
		ID:           c.ID,
		Name:         "Renamed",
		Driver:       "ses",
		IsActive:     false,
		Settings:     core.Settings{"region": "eu-west-1"},
		HealthStatus: core.HealthDown,
	}
	if err := db.Connections().UpdateConnection(ctx, upd); err != nil {
		t.Fatalf("UpdateConnection: %v", err)
	}
	if !upd.UpdatedAt.After(c.UpdatedAt) {
		t.Fatalf("UpdatedAt %v did not move past %v", upd.UpdatedAt, c.UpdatedAt)
	}
	got, err = db.Connections().FindConnectionByID(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	want := &core.Connection{
		ID: c.ID, Name: "Renamed", Driver: "ses", IsActive: false,
		Settings:     core.Settings{"region": "eu-west-1"},
		HealthStatus: core.HealthDown,
		CreatedAt:    c.CreatedAt,
		UpdatedAt:    upd.UpdatedAt,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("after update\n%+v\nwant\n%+v", got, want)
	}

	// Updating with identical values is not "not found" (MySQL reports 0
	// changed rows when nothing changes).
	same := *got
	for range 3 {
		if err := db.Connections().UpdateConnection(ctx, &same); err != nil {
			t.Fatalf("UpdateConnection with unchanged values: %v", err)
		}
	}

	// The other connection is untouched.
	got2b, err := db.Connections().FindConnectionByID(ctx, second.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got2b, got2) {
		t.Fatalf("second connection changed: %+v, was %+v", got2b, got2)
	}

	n, err := db.Connections().DeleteConnections(ctx, []int64{c.ID})
	if err != nil || n != 1 {
		t.Fatalf("DeleteConnections = %d, %v; want 1, nil", n, err)
	}
	_, err = db.Connections().FindConnectionByID(ctx, c.ID)
	WantCode(t, err, core.ENOTFOUND)
}

func (s *suite) testConnectionNotFound(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	existing := &core.Connection{Name: "x", Driver: "smtp"}
	if err := db.Connections().CreateConnection(ctx, existing); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{0, -1, existing.ID + 1, 1 << 40} {
		t.Run(fmt.Sprint(id), func(t *testing.T) {
			_, err := db.Connections().FindConnectionByID(ctx, id)
			WantCode(t, err, core.ENOTFOUND)
			err = db.Connections().UpdateConnection(ctx, &core.Connection{ID: id, Name: "y", Driver: "smtp"})
			WantCode(t, err, core.ENOTFOUND)
		})
	}
	// The failed updates created nothing.
	_, total, err := db.Connections().FindConnections(ctx, core.ConnectionFilter{})
	if err != nil || total != 1 {
		t.Fatalf("FindConnections total = %d, %v; want 1", total, err)
	}
}

func (s *suite) testConnectionPagination(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	drivers := []string{"smtp", "sendgrid", "smtp", "mailgun", "smtp", "sendgrid", "smtp"}
	var ids []int64
	byDriver := map[string][]int64{}
	for i, d := range drivers {
		c := &core.Connection{Name: fmt.Sprintf("c%d", i), Driver: d, IsActive: i%2 == 0}
		if err := db.Connections().CreateConnection(ctx, c); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
		byDriver[d] = append(byDriver[d], c.ID)
	}
	smtp := byDriver["smtp"]
	tests := []struct {
		name      string
		f         core.ConnectionFilter
		wantIDs   []int64
		wantTotal int
	}{
		{"all", core.ConnectionFilter{}, ids, 7},
		{"first page", core.ConnectionFilter{Limit: 3}, ids[:3], 7},
		{"second page", core.ConnectionFilter{Offset: 3, Limit: 3}, ids[3:6], 7},
		{"last partial page", core.ConnectionFilter{Offset: 6, Limit: 3}, ids[6:], 7},
		{"past the end", core.ConnectionFilter{Offset: 20, Limit: 3}, nil, 7},
		{"offset without limit", core.ConnectionFilter{Offset: 5}, ids[5:], 7},
		{"negative offset is zero", core.ConnectionFilter{Offset: -3, Limit: 2}, ids[:2], 7},
		{"driver", core.ConnectionFilter{Driver: "smtp"}, smtp, 4},
		{"driver paged", core.ConnectionFilter{Driver: "smtp", Offset: 1, Limit: 2}, smtp[1:3], 4},
		{"driver single", core.ConnectionFilter{Driver: "mailgun"}, byDriver["mailgun"], 1},
		{"unknown driver", core.ConnectionFilter{Driver: "nope"}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, total, err := db.Connections().FindConnections(ctx, tt.f)
			if err != nil {
				t.Fatalf("FindConnections: %v", err)
			}
			if total != tt.wantTotal {
				t.Errorf("total = %d, want %d", total, tt.wantTotal)
			}
			gotIDs := make([]int64, 0, len(got))
			for _, c := range got {
				gotIDs = append(gotIDs, c.ID)
				if tt.f.Driver != "" && c.Driver != tt.f.Driver {
					t.Errorf("connection %d has driver %q, filter %q", c.ID, c.Driver, tt.f.Driver)
				}
			}
			if !slices.Equal(gotIDs, tt.wantIDs) && !(len(gotIDs) == 0 && len(tt.wantIDs) == 0) {
				t.Errorf("ids = %v, want %v", gotIDs, tt.wantIDs)
			}
		})
	}
}

func (s *suite) testDeleteConnections(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	var ids []int64
	for i := range 5 {
		c := &core.Connection{Name: fmt.Sprint(i), Driver: "smtp"}
		if err := db.Connections().CreateConnection(ctx, c); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	tests := []struct {
		name      string
		del       []int64
		wantN     int
		wantLeft  []int64
		wantTotal int
	}{
		{"none", nil, 0, ids, 5},
		{"missing only", []int64{ids[4] + 100}, 0, ids, 5},
		{"two plus missing plus duplicate", []int64{ids[0], ids[2], ids[4] + 100, ids[0]}, 2, []int64{ids[1], ids[3], ids[4]}, 3},
		{"again", []int64{ids[0], ids[2]}, 0, []int64{ids[1], ids[3], ids[4]}, 3},
		{"rest", []int64{ids[4], ids[3], ids[1]}, 3, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := db.Connections().DeleteConnections(ctx, tt.del)
			if err != nil {
				t.Fatalf("DeleteConnections: %v", err)
			}
			if n != tt.wantN {
				t.Errorf("deleted %d, want %d", n, tt.wantN)
			}
			got, total, err := db.Connections().FindConnections(ctx, core.ConnectionFilter{})
			if err != nil {
				t.Fatal(err)
			}
			var left []int64
			for _, c := range got {
				left = append(left, c.ID)
			}
			if total != tt.wantTotal || !slices.Equal(left, tt.wantLeft) {
				t.Errorf("left %v (total %d), want %v (total %d)", left, total, tt.wantLeft, tt.wantTotal)
			}
		})
	}
}

func (s *suite) testSettingsUpsertMerge(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())

	empty, err := db.Settings().LoadSettings(ctx, core.ScopeFree)
	if err != nil {
		t.Fatalf("LoadSettings on empty store: %v", err)
	}
	if len(empty) != 0 {
		t.Fatalf("empty store has settings %v", empty)
	}

	steps := []struct {
		scope string
		save  map[string]any
		want  map[string]any // the scope's full content afterwards
	}{
		{core.ScopeFree, map[string]any{"from_name": "Site", "log_retention_days": int64(30)},
			map[string]any{"from_name": "Site", "log_retention_days": int64(30)}},
		{core.ScopeFree, map[string]any{"log_retention_days": int64(0), "log_emails": false},
			map[string]any{"from_name": "Site", "log_retention_days": int64(0), "log_emails": false}},
		{core.ScopeFree, map[string]any{},
			map[string]any{"from_name": "Site", "log_retention_days": int64(0), "log_emails": false}},
		{core.ScopeFree, map[string]any{"default_connection_id": nil, "from_name": "Other"},
			map[string]any{"from_name": "Other", "log_retention_days": int64(0), "log_emails": false, "default_connection_id": nil}},
		{core.ScopePro, map[string]any{"max_retries": int64(5), "from_name": "pro scope"},
			map[string]any{"max_retries": int64(5), "from_name": "pro scope"}},
	}
	for i, st := range steps {
		if err := db.Settings().SaveSettings(ctx, st.scope, st.save); err != nil {
			t.Fatalf("step %d: SaveSettings: %v", i, err)
		}
		got, err := db.Settings().LoadSettings(ctx, st.scope)
		if err != nil {
			t.Fatalf("step %d: LoadSettings: %v", i, err)
		}
		if !reflect.DeepEqual(got, st.want) {
			t.Fatalf("step %d: scope %q = %#v, want %#v", i, st.scope, got, st.want)
		}
	}
	// The pro save did not touch the free scope.
	got, err := db.Settings().LoadSettings(ctx, core.ScopeFree)
	if err != nil {
		t.Fatal(err)
	}
	if got["from_name"] != "Other" || len(got) != 4 {
		t.Fatalf("free scope changed by a pro save: %#v", got)
	}

	// Concurrent saves of overlapping keys all succeed and leave one of
	// the written values.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			errs <- db.Settings().SaveSettings(ctx, "concurrent", map[string]any{"a": int64(i), "b": int64(i), "c": "x"})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent SaveSettings: %v", err)
		}
	}
	got, err = db.Settings().LoadSettings(ctx, "concurrent")
	if err != nil {
		t.Fatal(err)
	}
	a, aok := got["a"].(int64)
	if !aok || a < 0 || a > 7 || got["c"] != "x" || len(got) != 3 {
		t.Fatalf("after concurrent saves: %#v", got)
	}
}

func (s *suite) testSettingsValidation(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	tests := []struct {
		name   string
		scope  string
		values map[string]any
		code   string
	}{
		{"empty scope", "", map[string]any{"a": 1}, core.EINVALID},
		{"long scope", strings.Repeat("s", 65), map[string]any{"a": 1}, core.EINVALID},
		{"empty key", core.ScopeFree, map[string]any{"": 1}, core.EINVALID},
		{"long key", core.ScopeFree, map[string]any{strings.Repeat("k", 192): 1}, core.EINVALID},
		{"unencodable value", core.ScopeFree, map[string]any{"ok": 1, "bad": make(chan int)}, core.EINTERNAL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			WantCode(t, db.Settings().SaveSettings(ctx, tt.scope, tt.values), tt.code)
		})
	}
	// Nothing was written by the failed saves (one transaction).
	got, err := db.Settings().LoadSettings(ctx, core.ScopeFree)
	if err != nil || len(got) != 0 {
		t.Fatalf("after failed saves: %#v, %v; want empty", got, err)
	}
}

func (s *suite) testValueRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	tests := []struct {
		name     string
		in, want any
	}{
		{"int64", int64(42), int64(42)},
		{"int", 7, int64(7)},
		{"zero", int64(0), int64(0)},
		{"negative", int64(-15), int64(-15)},
		{"max int64", int64(1<<63 - 1), int64(1<<63 - 1)},
		{"beyond float precision", int64(1<<53 + 1), int64(1<<53 + 1)},
		{"integral float", float64(3), int64(3)},
		{"fraction", 1.5, 1.5},
		{"true", true, true},
		{"false", false, false},
		{"null", nil, nil},
		{"empty string", "", ""},
		{"string", "héllo ✉ \"quoted\" \\ <b>", "héllo ✉ \"quoted\" \\ <b>"},
		{"numeric string stays string", "587", "587"},
		{"emoji 4-byte utf8", "📨", "📨"},
		{"list", []any{int64(1), "two", 3.5, nil}, []any{int64(1), "two", 3.5, nil}},
		{"object", map[string]any{"n": int64(2), "deep": map[string]any{"x": int64(1 << 40)}},
			map[string]any{"n": int64(2), "deep": map[string]any{"x": int64(1 << 40)}}},
		{"string list", []string{"a", "b"}, []any{"a", "b"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := fmt.Sprintf("k%02d", i)
			if err := db.Settings().SaveSettings(ctx, "roundtrip", map[string]any{key: tt.in}); err != nil {
				t.Fatalf("SaveSettings: %v", err)
			}
			got, err := db.Settings().LoadSettings(ctx, "roundtrip")
			if err != nil {
				t.Fatalf("LoadSettings: %v", err)
			}
			v, ok := got[key]
			if !ok {
				t.Fatalf("key %s missing after save", key)
			}
			if !reflect.DeepEqual(v, tt.want) {
				t.Fatalf("setting = %#v (%T), want %#v (%T)", v, v, tt.want, tt.want)
			}

			c := &core.Connection{Name: "rt", Driver: "smtp", Settings: core.Settings{"v": tt.in}}
			if err := db.Connections().CreateConnection(ctx, c); err != nil {
				t.Fatalf("CreateConnection: %v", err)
			}
			rc, err := db.Connections().FindConnectionByID(ctx, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(rc.Settings["v"], tt.want) {
				t.Fatalf("connection setting = %#v (%T), want %#v (%T)", rc.Settings["v"], rc.Settings["v"], tt.want, tt.want)
			}
		})
	}
}

func (s *suite) testMigrateIdempotent(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	want := make([]int, 0, store.LatestVersion())
	for v := 1; v <= store.LatestVersion(); v++ {
		want = append(want, v)
	}
	c := &core.Connection{Name: "keep me", Driver: "smtp", Settings: core.Settings{"a": int64(1)}}
	if err := db.Connections().CreateConnection(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := db.Settings().SaveSettings(ctx, core.ScopeFree, map[string]any{"from_name": "kept"}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if i > 0 {
			if err := db.Migrate(ctx); err != nil {
				t.Fatalf("Migrate #%d: %v", i, err)
			}
		}
		got, err := db.Schema().AppliedVersions(ctx)
		if err != nil {
			t.Fatalf("AppliedVersions: %v", err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("after %d extra Migrate calls: versions %v, want %v", i, got, want)
		}
	}
	// Re-opening migrates again (a no-op) and keeps the data.
	db2 := s.open(t, db.Prefix())
	got, err := db2.Connections().FindConnectionByID(ctx, c.ID)
	if err != nil || got.Name != "keep me" {
		t.Fatalf("connection after re-open: %+v, %v", got, err)
	}
	st, err := db2.Settings().LoadSettings(ctx, core.ScopeFree)
	if err != nil || st["from_name"] != "kept" {
		t.Fatalf("settings after re-open: %#v, %v", st, err)
	}
	for _, table := range []string{"connections", "settings", "migrations"} {
		if !db2.Gorm().Migrator().HasTable(db2.TableName(table)) {
			t.Errorf("table %s missing", db2.TableName(table))
		}
	}
}

func (s *suite) testConcurrentMigrate(t *testing.T) {
	prefix := s.prefix()
	const n = 4
	var wg sync.WaitGroup
	dbs := make([]*store.DB, n)
	errs := make([]error, n)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			dbs[i], errs[i] = store.Open(context.Background(), s.dsn, prefix, testLogger(t))
		})
	}
	close(start)
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Errorf("concurrent Open/Migrate #%d: %v", i, errs[i])
			continue
		}
		t.Cleanup(func() { dbs[i].Close() })
	}
	if t.Failed() {
		return
	}
	// Explicit Migrate calls at once too.
	var mwg sync.WaitGroup
	merrs := make([]error, n)
	for i := range n {
		mwg.Go(func() { merrs[i] = dbs[i].Migrate(context.Background()) })
	}
	mwg.Wait()
	if err := errors.Join(merrs...); err != nil {
		t.Fatalf("concurrent Migrate: %v", err)
	}
	got, err := dbs[0].Schema().AppliedVersions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != store.LatestVersion() || got[len(got)-1] != store.LatestVersion() {
		t.Fatalf("applied versions %v after concurrent migrations, want 1..%d once each", got, store.LatestVersion())
	}
	// The schema works from every handle.
	for i, db := range dbs {
		if err := db.Connections().CreateConnection(context.Background(), &core.Connection{Name: fmt.Sprint(i), Driver: "smtp"}); err != nil {
			t.Fatalf("CreateConnection via handle %d: %v", i, err)
		}
	}
	_, total, err := dbs[0].Connections().FindConnections(context.Background(), core.ConnectionFilter{})
	if err != nil || total != n {
		t.Fatalf("total = %d, %v; want %d", total, err, n)
	}
}

func (s *suite) testPrefixIsolation(t *testing.T) {
	ctx := context.Background()
	pa, pb := s.prefix(), s.prefix()
	a, b := s.open(t, pa), s.open(t, pb)
	if a.Prefix() != pa || b.Prefix() != pb {
		t.Fatalf("Prefix() = %q, %q; want %q, %q", a.Prefix(), b.Prefix(), pa, pb)
	}
	if got, want := a.TableName("connections"), pa+"mailsvc_connections"; got != want {
		t.Fatalf("TableName = %q, want %q", got, want)
	}
	for _, name := range []string{"A1", "A2"} {
		if err := a.Connections().CreateConnection(ctx, &core.Connection{Name: name, Driver: "smtp"}); err != nil {
			t.Fatal(err)
		}
	}
	cb := &core.Connection{Name: "B1", Driver: "ses"}
	if err := b.Connections().CreateConnection(ctx, cb); err != nil {
		t.Fatal(err)
	}
	if err := a.Settings().SaveSettings(ctx, core.ScopeFree, map[string]any{"from_name": "site A"}); err != nil {
		t.Fatal(err)
	}

	listA, totalA, err := a.Connections().FindConnections(ctx, core.ConnectionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	listB, totalB, err := b.Connections().FindConnections(ctx, core.ConnectionFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if totalA != 2 || totalB != 1 || listB[0].Name != "B1" || listA[0].Name != "A1" {
		t.Fatalf("prefix %s sees %d (%v), prefix %s sees %d (%v)", pa, totalA, listA, pb, totalB, listB)
	}
	// Ids are per table: B's first id also exists in A, and deleting it
	// through B leaves A's row alone.
	if n, err := b.Connections().DeleteConnections(ctx, []int64{cb.ID}); err != nil || n != 1 {
		t.Fatalf("delete via B = %d, %v", n, err)
	}
	if _, total, _ := a.Connections().FindConnections(ctx, core.ConnectionFilter{}); total != 2 {
		t.Fatalf("A has %d connections after deleting from B, want 2", total)
	}
	sb, err := b.Settings().LoadSettings(ctx, core.ScopeFree)
	if err != nil || len(sb) != 0 {
		t.Fatalf("prefix %s sees settings %#v, %v; want none", pb, sb, err)
	}
}

func (s *suite) testClosed(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, s.dsn, s.prefix(), testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	calls := []struct {
		name string
		call func() error
	}{
		{"Ping", func() error { return db.Ping(ctx) }},
		{"Migrate", func() error { return db.Migrate(ctx) }},
		{"FindConnections", func() error { _, _, err := db.Connections().FindConnections(ctx, core.ConnectionFilter{}); return err }},
		{"FindConnectionByID", func() error { _, err := db.Connections().FindConnectionByID(ctx, 1); return err }},
		{"CreateConnection", func() error {
			return db.Connections().CreateConnection(ctx, &core.Connection{Name: "x", Driver: "smtp"})
		}},
		{"UpdateConnection", func() error { return db.Connections().UpdateConnection(ctx, &core.Connection{ID: 1, Name: "x"}) }},
		{"DeleteConnections", func() error { _, err := db.Connections().DeleteConnections(ctx, []int64{1}); return err }},
		{"LoadSettings", func() error { _, err := db.Settings().LoadSettings(ctx, core.ScopeFree); return err }},
		{"SaveSettings", func() error { return db.Settings().SaveSettings(ctx, core.ScopeFree, map[string]any{"a": 1}) }},
		{"AppliedVersions", func() error { _, err := db.Schema().AppliedVersions(ctx); return err }},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			if err == nil {
				t.Fatal("call on a closed store returned no error")
			}
			if code := core.ErrorCode(err); code == core.ENOTFOUND {
				t.Fatalf("closed store reported %v as not found", err)
			}
		})
	}
}
