package http_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/app/migration"
	"github.com/mailsvc/mailsvc/core"
)

// fakeMigration records what the routes pass and answers with canned
// results or errors.
type fakeMigration struct {
	scans    []bool
	imports  []migration.ImportRequest
	scanErr  error
	importFn func(migration.ImportRequest) (*migration.ImportResult, error)
}

func (f *fakeMigration) Scan(_ context.Context, counts bool) ([]migration.ScanEntry, error) {
	f.scans = append(f.scans, counts)
	if f.scanErr != nil {
		return nil, f.scanErr
	}
	n, rows := 2, int64(450)
	e := migration.ScanEntry{Source: "fluent-smtp", Name: "FluentSMTP", Active: true, LogsAvailable: true, Errors: []string{}}
	if counts {
		e.Connections, e.LogRows = &n, &rows
	}
	return []migration.ScanEntry{e}, nil
}

func (f *fakeMigration) Import(_ context.Context, req migration.ImportRequest) (*migration.ImportResult, error) {
	f.imports = append(f.imports, req)
	if f.importFn != nil {
		return f.importFn(req)
	}
	id := int64(7)
	return &migration.ImportResult{Source: req.Source, DryRun: req.DryRun,
		Connections: []migration.ConnectionReport{{Key: "k", Name: "SMTP", Status: migration.StatusReady, Missing: []string{}, Issues: []string{},
			Conversion: migration.Conversion{From: "smtp", To: "smtp"}, WasDefault: true, ConnectionID: &id, Settings: core.Settings{"password": "********"}}},
		Logs:        migration.LogReport{Available: true, Total: 450, Imported: 200, Cursor: "abc", Done: false},
		Suggestions: []string{}, Errors: []string{}}, nil
}

func newMigrationServer(t *testing.T, f *fakeMigration) *httptest.Server {
	t.Helper()
	s, _ := newAPI()
	s.Migration = f
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts
}

func TestMigrationScanRoute(t *testing.T) {
	tests := []struct {
		query      string
		status     int
		wantCounts []bool
		field      string
	}{
		{"", 200, []bool{true}, ""},
		{"?counts=true", 200, []bool{true}, ""},
		{"?counts=1", 200, []bool{true}, ""},
		{"?counts=false", 200, []bool{false}, ""},
		{"?counts=0", 200, []bool{false}, ""},
		{"?counts=maybe", 422, nil, "counts"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			f := &fakeMigration{}
			ts := newMigrationServer(t, f)
			r := do(t, ts, "GET", ns+"/tools/migration/scan"+tt.query, "admin", nil)
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tt.status, r.Body)
			}
			if len(f.scans) != len(tt.wantCounts) || (len(f.scans) == 1 && f.scans[0] != tt.wantCounts[0]) {
				t.Errorf("Scan called with %v, want %v", f.scans, tt.wantCounts)
			}
			if tt.field != "" {
				code, st, fields := r.errorCode(t)
				if code != "validation_error" || st != 422 || fields[tt.field] == "" {
					t.Errorf("error %s %d %v, want validation_error on %s", code, st, fields, tt.field)
				}
				return
			}
			var body struct {
				Sources []struct {
					Source      string `json:"source"`
					Connections *int   `json:"connections"`
					LogRows     *int64 `json:"log_rows"`
				} `json:"sources"`
			}
			r.json(t, &body)
			if len(body.Sources) != 1 || body.Sources[0].Source != "fluent-smtp" {
				t.Fatalf("sources %+v", body.Sources)
			}
			if withCounts := body.Sources[0].Connections != nil && body.Sources[0].LogRows != nil; withCounts != tt.wantCounts[0] {
				t.Errorf("counts in the answer: %v, want %v: %s", withCounts, tt.wantCounts[0], r.Body)
			}
			if !tt.wantCounts[0] && !strings.Contains(string(r.Body), `"log_rows":null`) {
				t.Errorf("counts=false: log_rows not null: %s", r.Body)
			}
		})
	}
}

func TestMigrationImportRoute(t *testing.T) {
	f := &fakeMigration{}
	ts := newMigrationServer(t, f)
	r := do(t, ts, "POST", ns+"/tools/migration/import", "admin", strings.NewReader(
		`{"source":"fluent-smtp","dry_run":true,"import_connections":false,"import_logs":true,"max_logs":300,"restart_logs":true,"retention_days":30,"cursor":"xyz"}`))
	if r.Status != 200 {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	if len(f.imports) != 1 {
		t.Fatalf("Import called %d times", len(f.imports))
	}
	req := f.imports[0]
	if req.Source != "fluent-smtp" || !req.DryRun || req.ImportConnections == nil || *req.ImportConnections || !req.ImportLogs ||
		req.MaxLogs == nil || *req.MaxLogs != 300 || !req.RestartLogs || req.RetentionDays == nil || *req.RetentionDays != 30 || req.Cursor != "xyz" {
		t.Errorf("decoded request %+v", req)
	}
	var res struct {
		Connections []struct {
			Status       string         `json:"status"`
			Missing      []string       `json:"missing"`
			Issues       []string       `json:"issues"`
			Conversion   map[string]any `json:"conversion"`
			WasDefault   bool           `json:"was_default"`
			ConnectionID *int64         `json:"connection_id"`
			Settings     map[string]any `json:"settings"`
		} `json:"connections"`
		Logs        map[string]any `json:"logs"`
		Suggestions []string       `json:"suggestions"`
		Errors      []string       `json:"errors"`
	}
	r.json(t, &res)
	if len(res.Connections) != 1 || res.Connections[0].Status != "ready" || !res.Connections[0].WasDefault || res.Connections[0].ConnectionID == nil ||
		res.Connections[0].Missing == nil || res.Connections[0].Issues == nil || res.Connections[0].Conversion["to"] != "smtp" {
		t.Errorf("connections %+v", res.Connections)
	}
	for _, k := range []string{"available", "total", "imported", "skipped", "cursor", "done"} {
		if _, ok := res.Logs[k]; !ok {
			t.Errorf("logs lacks %q: %v", k, res.Logs)
		}
	}
	if res.Suggestions == nil || res.Errors == nil {
		t.Errorf("suggestions %v errors %v: want lists", res.Suggestions, res.Errors)
	}

	// Omitted optional fields stay nil, so the engine applies its defaults.
	do(t, ts, "POST", ns+"/tools/migration/import", "admin", strings.NewReader(`{"source":"wp-mail-smtp"}`))
	if req := f.imports[len(f.imports)-1]; req.ImportConnections != nil || req.MaxLogs != nil || req.RetentionDays != nil || req.DryRun || req.ImportLogs {
		t.Errorf("minimal request decoded as %+v", req)
	}
}

func TestMigrationImportErrors(t *testing.T) {
	invalid := func(req migration.ImportRequest) (*migration.ImportResult, error) {
		return nil, core.InvalidField("source", "Unknown source \"nope\".")
	}
	tests := []struct {
		name, body string
		fn         func(migration.ImportRequest) (*migration.ImportResult, error)
		token      string
		status     int
		code       string
		field      string
		calls      int
	}{
		{"malformed json", `{"source":`, nil, "admin", 400, "bad_request", "", 0},
		{"not an object", `["fluent-smtp"]`, nil, "admin", 400, "bad_request", "", 0},
		{"max_logs wrong type", `{"source":"fluent-smtp","max_logs":"many"}`, nil, "admin", 400, "bad_request", "max_logs", 0},
		{"dry_run wrong type", `{"source":"fluent-smtp","dry_run":"yes"}`, nil, "admin", 400, "bad_request", "dry_run", 0},
		{"engine validation", `{"source":"nope"}`, invalid, "admin", 422, "validation_error", "source", 1},
		{"engine failure", `{"source":"fluent-smtp"}`, func(migration.ImportRequest) (*migration.ImportResult, error) {
			return nil, errors.New("database is down")
		}, "admin", 500, "internal_error", "", 1},
		{"anonymous", `{"source":"fluent-smtp"}`, nil, "", 401, "rest_not_logged_in", "", 0},
		{"no capability", `{"source":"fluent-smtp"}`, nil, "editor", 403, "rest_forbidden", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeMigration{importFn: tt.fn}
			ts := newMigrationServer(t, f)
			r := do(t, ts, "POST", ns+"/tools/migration/import", tt.token, strings.NewReader(tt.body))
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tt.status, r.Body)
			}
			code, st, fields := r.errorCode(t)
			if code != tt.code || st != tt.status {
				t.Errorf("error %q data.status %d, want %q %d: %s", code, st, tt.code, tt.status, r.Body)
			}
			if tt.field != "" && fields[tt.field] == "" && !strings.Contains(string(r.Body), tt.field) {
				t.Errorf("error does not name %s: %s", tt.field, r.Body)
			}
			if len(f.imports) != tt.calls {
				t.Errorf("Import called %d times, want %d", len(f.imports), tt.calls)
			}
			if strings.Contains(string(r.Body), "database is down") {
				t.Errorf("internal error text leaked: %s", r.Body)
			}
		})
	}
}

func TestMigrationRoutesAbsentWithoutService(t *testing.T) {
	ts, _, _ := newServer(t)
	for _, p := range []struct{ method, path string }{{"GET", "/tools/migration/scan"}, {"POST", "/tools/migration/import"}} {
		r := do(t, ts, p.method, ns+p.path, "admin", strings.NewReader(`{"source":"fluent-smtp"}`))
		if r.Status != 404 {
			t.Errorf("%s %s without a migration service: %d, want 404", p.method, p.path, r.Status)
		}
	}
}

func TestMigrationScanError(t *testing.T) {
	f := &fakeMigration{scanErr: errors.New("site database unreachable")}
	ts := newMigrationServer(t, f)
	r := do(t, ts, "GET", ns+"/tools/migration/scan", "admin", nil)
	if code, st, _ := r.errorCode(t); r.Status != 500 || code != "internal_error" || st != 500 {
		t.Errorf("scan failure: %d %s", r.Status, r.Body)
	}
	if strings.Contains(string(r.Body), "unreachable") {
		t.Errorf("internal error text leaked: %s", r.Body)
	}
}
