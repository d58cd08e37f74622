package migration_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/migration"
	"github.com/mailsvc/mailsvc/core"
	_ "github.com/mailsvc/mailsvc/drivers/all"
)

// fakeSource is a source with fixed candidates and n log rows.
type fakeSource struct {
	id    string
	found bool
	setup migration.Setup
	rows  int
}

func (f *fakeSource) ID() string   { return f.id }
func (f *fakeSource) Name() string { return "Fake " + f.id }
func (f *fakeSource) Detect(context.Context, migration.Site) (migration.Detection, error) {
	return migration.Detection{Found: f.found}, nil
}
func (f *fakeSource) Connections(context.Context, migration.Site) (*migration.Setup, error) {
	s := f.setup
	return &s, nil
}
func (f *fakeSource) Logs() migration.LogSource { return f }
func (f *fakeSource) Available(context.Context, migration.Site) (bool, string, error) {
	return true, "", nil
}
func (f *fakeSource) EstimateLogs(context.Context, migration.Site) (int64, error) {
	return int64(f.rows), nil
}
func (f *fakeSource) CountLogs(_ context.Context, _ migration.Site, since time.Time) (int64, error) {
	n := int64(0)
	for i := 1; i <= f.rows; i++ {
		if since.IsZero() || !f.time(i).Before(since) {
			n++
		}
	}
	return n, nil
}
func (f *fakeSource) time(i int) time.Time {
	return time.Now().UTC().Add(-time.Duration(f.rows-i) * time.Hour).Truncate(time.Second)
}
func (f *fakeSource) ReadLogs(_ context.Context, _ migration.Site, after int64, limit int) ([]migration.LogEntry, error) {
	var out []migration.LogEntry
	for i := int(after) + 1; i <= f.rows && len(out) < limit; i++ {
		st := core.StatusDelivered
		if i%3 == 0 {
			st = core.StatusQueued
		}
		out = append(out, migration.LogEntry{
			Position: int64(i), Time: f.time(i), Status: st,
			Message: core.Message{To: []core.Address{{Email: fmt.Sprintf("r%d@example.com", i)}}, Subject: fmt.Sprintf("s%d", i), Text: "b"},
		})
	}
	return out, nil
}

// importedLogs records ImportLogs and KeepBodies calls.
type importedLogs struct{ logs, kept []*core.Log }

func (m *importedLogs) ImportLogs(_ context.Context, logs []*core.Log) error {
	m.logs = append(m.logs, logs...)
	return nil
}

func (m *importedLogs) KeepBodies(_ context.Context, logs []*core.Log) error {
	m.kept = append(m.kept, logs...)
	return nil
}

type rig struct {
	engine *migration.Engine
	conns  *apptest.ConnectionStore
	sets   *apptest.SettingsStore
	logs   *importedLogs
}

// fakeSite stands for a WordPress site; the fake sources never read it.
type fakeSite struct{ migration.Site }

func newRig(srcs ...migration.Source) rig {
	conns, sets := apptest.NewConnectionStore(), apptest.NewSettingsStore()
	logs := &importedLogs{}
	c := &app.Connections{Store: conns, Cipher: apptest.Cipher{Key: "k"}, Hooks: &core.Hooks{}, Settings: sets}
	return rig{
		engine: &migration.Engine{Site: fakeSite{}, Connections: c, Settings: &app.Settings{Store: sets, Connections: conns}, State: sets, Logs: logs, Bodies: logs, Sources: srcs},
		conns:  conns, sets: sets, logs: logs,
	}
}

func smtpSource(rows int) *fakeSource {
	return &fakeSource{id: "fake", found: true, rows: rows, setup: migration.Setup{
		DefaultKey: "a", FallbackKey: "b",
		Candidates: []migration.Candidate{
			{Key: "a", Name: "SMTP", SourceSlug: "smtp", Driver: "smtp", Settings: map[string]any{"host": "mail.example.com", "port": int64(587), "encryption": "tls", "auth": true, "username": "u", "password": "hunter2"}},
			{Key: "b", Name: "SendGrid", SourceSlug: "sendgrid", Driver: "sendgrid", Settings: map[string]any{"api_key": "SG.secret"}},
			{Key: "c", Name: "Locked SMTP", SourceSlug: "smtp", Driver: "smtp", Settings: map[string]any{"host": "h", "auth": true, "username": "u"}, Missing: []string{"password"}},
			{Key: "d", Name: "Gmail", SourceSlug: "gmail", Driver: "gmail", Settings: map[string]any{"client_id": "id", "client_secret": "sec"}},
			{Key: "e", Name: "ToSend", SourceSlug: "tosend"},
		},
	}}
}

func TestImportConnections(t *testing.T) {
	ctx := context.Background()
	r := newRig(smtpSource(0))
	dry, err := r.engine.Import(ctx, migration.ImportRequest{Source: "fake", DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "ready", "b": "ready", "c": "needs_password", "d": "needs_authorization", "e": "unsupported"}
	for _, c := range dry.Connections {
		if c.Status != want[c.Key] {
			t.Errorf("dry run %s: status %s, want %s (issues %v)", c.Key, c.Status, want[c.Key], c.Issues)
		}
		if c.ConnectionID != nil {
			t.Errorf("dry run %s: connection_id set", c.Key)
		}
	}
	if _, n, _ := r.conns.FindConnections(ctx, core.ConnectionFilter{}); n != 0 {
		t.Fatalf("dry run wrote %d connections", n)
	}
	if strings.Contains(fmt.Sprint(dry.Connections), "hunter2") || strings.Contains(fmt.Sprint(dry.Connections), "SG.secret") {
		t.Fatal("a secret is in the response unmasked")
	}
	for round := 0; round < 2; round++ {
		res, err := r.engine.Import(ctx, migration.ImportRequest{Source: "fake"})
		if err != nil {
			t.Fatal(err)
		}
		if _, n, _ := r.conns.FindConnections(ctx, core.ConnectionFilter{}); n != 3 {
			t.Fatalf("round %d: %d connections, want 3 (a, b, d)", round, n)
		}
		got := map[string]*int64{}
		for _, c := range res.Connections {
			got[c.Key] = c.ConnectionID
		}
		if got["a"] == nil || got["b"] == nil || got["c"] != nil || got["e"] != nil {
			t.Fatalf("round %d: ids %v", round, got)
		}
		st, _ := r.sets.LoadSettings(ctx, core.ScopeFree)
		if id, _ := core.AsInt(st["default_connection_id"]); id != *got["a"] {
			t.Errorf("default_connection_id = %v, want %d", st["default_connection_id"], *got["a"])
		}
		if id, _ := core.AsInt(st["fallback_connection_id"]); id != *got["b"] {
			t.Errorf("fallback_connection_id = %v, want %d", st["fallback_connection_id"], *got["b"])
		}
	}
}

func TestImportLogsInChunks(t *testing.T) {
	ctx := context.Background()
	r := newRig(smtpSource(450))
	no := false
	req := migration.ImportRequest{Source: "fake", ImportLogs: true, ImportConnections: &no}
	var calls int
	for {
		res, err := r.engine.Import(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		calls++
		if res.Logs.Imported > migration.LogChunk {
			t.Fatalf("one call imported %d rows", res.Logs.Imported)
		}
		if res.Logs.Done {
			break
		}
		req.Cursor = res.Logs.Cursor
	}
	if calls != 3 || len(r.logs.logs) != 450 || len(r.logs.kept) != 450 {
		t.Fatalf("%d calls, %d logs (%d kept by the log body settings); want 3 calls, 450 logs", calls, len(r.logs.logs), len(r.logs.kept))
	}
	for _, l := range r.logs.logs {
		if l.Status != core.StatusDelivered && l.Status != core.StatusFailed || l.Source != "import:fake" {
			t.Fatalf("log %+v", l)
		}
	}
	// A second run without a cursor finds nothing new.
	res, err := r.engine.Import(ctx, migration.ImportRequest{Source: "fake", ImportLogs: true, ImportConnections: &no})
	if err != nil || res.Logs.Imported != 0 || !res.Logs.Done {
		t.Fatalf("re-import: %+v %v", res, err)
	}
	// restart walks again but skips what was imported.
	res, err = r.engine.Import(ctx, migration.ImportRequest{Source: "fake", ImportLogs: true, ImportConnections: &no, RestartLogs: true})
	if err != nil || res.Logs.Imported != 0 || res.Logs.Skipped != 200 || len(r.logs.logs) != 450 {
		t.Fatalf("restart: %+v %v (%d logs)", res.Logs, err, len(r.logs.logs))
	}
}

func TestImportMaxLogs(t *testing.T) {
	r := newRig(smtpSource(450))
	no := false
	max := int64(250)
	req := migration.ImportRequest{Source: "fake", ImportLogs: true, ImportConnections: &no, MaxLogs: &max}
	for i := 0; i < 10; i++ {
		res, err := r.engine.Import(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if res.Logs.Done {
			break
		}
		req.Cursor = res.Logs.Cursor
	}
	if len(r.logs.logs) != 250 {
		t.Fatalf("imported %d, want 250", len(r.logs.logs))
	}
}

func TestImportBadInput(t *testing.T) {
	other := &fakeSource{id: "other", found: true, rows: 300}
	absent := &fakeSource{id: "absent"}
	r := newRig(smtpSource(300), other, absent)
	no := false
	first, err := r.engine.Import(context.Background(), migration.ImportRequest{Source: "other", ImportLogs: true, ImportConnections: &no})
	if err != nil {
		t.Fatal(err)
	}
	r.logs.logs = nil
	big, neg := int64(20001), int64(-1)
	for _, tc := range []struct {
		name  string
		req   migration.ImportRequest
		field string
	}{
		{"no source", migration.ImportRequest{}, "source"},
		{"unknown source", migration.ImportRequest{Source: "nope"}, "source"},
		{"absent source", migration.ImportRequest{Source: "absent"}, "source"},
		{"max_logs too big", migration.ImportRequest{Source: "fake", MaxLogs: &big}, "max_logs"},
		{"max_logs negative", migration.ImportRequest{Source: "fake", MaxLogs: &neg}, "max_logs"},
		{"garbage cursor", migration.ImportRequest{Source: "fake", ImportLogs: true, Cursor: "!!"}, "cursor"},
		{"cursor of another source", migration.ImportRequest{Source: "fake", ImportLogs: true, Cursor: first.Logs.Cursor}, "cursor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.engine.Import(context.Background(), tc.req)
			if core.ErrorCode(err) != core.EINVALID || core.ErrorFields(err)[tc.field] == "" {
				t.Fatalf("err = %v (fields %v), want a validation error on %s", err, core.ErrorFields(err), tc.field)
			}
			if _, n, _ := r.conns.FindConnections(context.Background(), core.ConnectionFilter{}); n != 0 || len(r.logs.logs) != 0 {
				t.Fatal("bad input wrote something")
			}
		})
	}
}

func TestDryRunRetention(t *testing.T) {
	r := newRig(smtpSource(100)) // one row per hour: 100 hours
	days := int64(2)
	res, err := r.engine.Import(context.Background(), migration.ImportRequest{Source: "fake", DryRun: true, ImportLogs: true, RetentionDays: &days})
	if err != nil {
		t.Fatal(err)
	}
	if res.Logs.Total != 100 || res.Logs.InRetention == nil || *res.Logs.InRetention < 47 || *res.Logs.InRetention > 49 || len(r.logs.logs) != 0 {
		t.Fatalf("logs %+v (in retention %v), %d written", res.Logs, res.Logs.InRetention, len(r.logs.logs))
	}
}

// TestStandaloneEngine: without a WordPress site (standalone mode) the
// scan finds nothing, in its normal shape, and every import, dry run or
// not, is refused as an unavailable source; an unknown source is still
// named as unknown.
func TestStandaloneEngine(t *testing.T) {
	e := &migration.Engine{}
	list, err := e.Scan(context.Background(), true)
	if err != nil || list == nil || len(list) != 0 {
		t.Fatalf("scan = %#v, %v; want an empty list", list, err)
	}
	for _, tc := range []struct {
		name string
		req  migration.ImportRequest
		want string
	}{
		{"known source", migration.ImportRequest{Source: "fluent-smtp"}, "standalone"},
		{"known source, dry run", migration.ImportRequest{Source: "wp-mail-smtp", DryRun: true, ImportLogs: true}, "standalone"},
		{"unknown source", migration.ImportRequest{Source: "nope"}, "Unknown source"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := e.Import(context.Background(), tc.req)
			if res != nil || core.ErrorCode(err) != core.EINVALID || !strings.Contains(core.ErrorFields(err)["source"], tc.want) {
				t.Fatalf("import = %v, %v (fields %v); want a validation error on source saying %q", res, err, core.ErrorFields(err), tc.want)
			}
		})
	}
}
