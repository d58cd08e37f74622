package migration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	// The MariaDB driver, to look at the site's tables directly.
	_ "github.com/go-sql-driver/mysql"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// migrationSite is a real WordPress site with a running `mailsvc serve`
// sharing its database, and an administrator's application password for
// the REST API.
type migrationSite struct {
	*wpsite.Site
	Svc   *servicetest.Service
	AppPW string
}

// sitePrefixes numbers the sites of one test binary, each with its own
// table prefix.
var sitePrefixes atomic.Int64

// newSite installs a WordPress site (its own database and table prefix),
// starts `mailsvc serve` against its wp-config.php behind a trusted proxy
// and creates an application password for the administrator. It skips in
// -short mode. Write the plugin's fixtures before or after: the service
// reads the site on every request.
func newSite(t *testing.T) *migrationSite {
	t.Helper()
	return newSiteConfig(t, "")
}

// newSiteConfig is newSite with extraConfig (PHP) added to wp-config.php:
// the plugin's own constants (define( 'WPMS_ON', true ); ...).
func newSiteConfig(t *testing.T, extraConfig string) *migrationSite {
	t.Helper()
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	site := wpsite.Install(t, wpsite.Options{Prefix: fmt.Sprintf("wpm%d_", sitePrefixes.Add(1)), ExtraConfig: extraConfig})
	dir := t.TempDir()
	env := servicetest.Environ(dir, "MAILSVC_WP_CONFIG="+site.WPConfigPath, "MAILSVC_TRUSTED_PROXIES=127.0.0.1")
	s := &migrationSite{Site: site}
	s.AppPW = site.CreateApplicationPassword(t, site.AdminLogin, "migration test")
	s.Svc = servicetest.StartEnv(t, dir, env)
	return s
}

// php runs PHP code with WordPress loaded and returns what it printed.
func (s *migrationSite) php(t *testing.T, code string) string {
	t.Helper()
	return s.PHP(t, code)
}

// setOption stores an option with update_option() from a PHP expression
// (an array literal as the plugin builds it), autoloaded as the plugin
// saves it.
func (s *migrationSite) setOption(t *testing.T, name, phpValue string) {
	t.Helper()
	s.php(t, fmt.Sprintf("delete_option( %[1]s );\nif ( ! update_option( %[1]s, %[2]s ) ) {\n\twpsite_fail( 'update_option returned false' );\n}\n",
		wpsite.PHPString(name), phpValue))
}

// setTimezone sets the site's timezone_string (and clears gmt_offset), as
// Settings → General saves a named zone.
func (s *migrationSite) setTimezone(t *testing.T, zone string) {
	t.Helper()
	s.php(t, fmt.Sprintf("update_option( 'timezone_string', %s );\nupdate_option( 'gmt_offset', '' );\n", wpsite.PHPString(zone)))
}

// activatePlugins sets the site's active_plugins option.
func (s *migrationSite) activatePlugins(t *testing.T, files ...string) {
	t.Helper()
	var lits []string
	for _, f := range files {
		lits = append(lits, wpsite.PHPString(f))
	}
	s.php(t, "update_option( 'active_plugins', array( "+strings.Join(lits, ", ")+" ) );")
}

// insertRows inserts rows into table (without prefix) with $wpdb->insert,
// as the plugins log. rowsPHP is a PHP expression evaluating to a list of
// rows (column => value arrays); it may use $i-free loops of its own, e.g.
//
//	array_map( function ( $i ) { return array( ... ); }, range( 1, 450 ) )
//
// It returns the number of rows inserted.
func (s *migrationSite) insertRows(t *testing.T, table, rowsPHP string) int {
	t.Helper()
	out := s.php(t, fmt.Sprintf(`global $wpdb;
$n = 0;
foreach ( %s as $row ) {
	if ( false === $wpdb->insert( $wpdb->prefix . %s, $row ) ) {
		wpsite_fail( 'insert: ' . $wpdb->last_error );
	}
	$n++;
}
echo $n;
`, rowsPHP, wpsite.PHPString(table)))
	var n int
	fmt.Sscan(strings.TrimSpace(out), &n)
	return n
}

// call makes a REST request (path under /wp-json/mailsvc/v1) as the
// administrator over the trusted proxy, with a JSON body when body is not
// "", and returns the status and body.
func (s *migrationSite) call(t *testing.T, method, path, body string) (int, []byte) {
	t.Helper()
	r := servicetest.Call(t, method, s.Svc.Base+path, body, func(req *http.Request) {
		req.SetBasicAuth(s.AdminLogin, s.AppPW)
		req.Header.Set("X-Forwarded-Proto", "https")
	})
	return r.Status, r.Body
}

// callJSON is call that requires want and decodes the answer into v.
func (s *migrationSite) callJSON(t *testing.T, method, path, body string, want int, v any) {
	t.Helper()
	status, b := s.call(t, method, path, body)
	if status != want {
		t.Fatalf("%s %s %s: status %d, want %d: %s", method, path, body, status, want, b)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, path, b, err)
		}
	}
}

// scanEntry is one source of GET /tools/migration/scan.
type scanEntry struct {
	Source           string   `json:"source"`
	Name             string   `json:"name"`
	Active           bool     `json:"active"`
	Version          string   `json:"version"`
	Connections      *int     `json:"connections"`
	LogsAvailable    bool     `json:"logs_available"`
	LogRows          *int64   `json:"log_rows"`
	LogRowsEstimated bool     `json:"log_rows_estimated"`
	Errors           []string `json:"errors"`
}

// scan calls GET /tools/migration/scan (with ?counts=false when counts is
// false) and returns the sources by id.
func (s *migrationSite) scan(t *testing.T, counts bool) map[string]scanEntry {
	t.Helper()
	path := "/tools/migration/scan"
	if !counts {
		path += "?counts=false"
	}
	var res struct {
		Sources []scanEntry `json:"sources"`
	}
	s.callJSON(t, "GET", path, "", http.StatusOK, &res)
	out := map[string]scanEntry{}
	for _, e := range res.Sources {
		out[e.Source] = e
	}
	return out
}

// importedConnection is one connection of an import answer.
type importedConnection struct {
	Key        string   `json:"key"`
	Name       string   `json:"name"`
	Status     string   `json:"status"`
	Missing    []string `json:"missing"`
	Issues     []string `json:"issues"`
	Conversion struct {
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"conversion"`
	WasDefault   bool           `json:"was_default"`
	WasFallback  bool           `json:"was_fallback"`
	ConnectionID *int64         `json:"connection_id"`
	Settings     map[string]any `json:"settings"`
	Updated      bool           `json:"updated"`
}

// importLogs is the logs object of an import answer.
type importLogs struct {
	Available     bool   `json:"available"`
	Reason        string `json:"reason"`
	Total         int64  `json:"total"`
	Imported      int    `json:"imported"`
	Skipped       int    `json:"skipped"`
	ImportedTotal int64  `json:"imported_total"`
	Cursor        string `json:"cursor"`
	Done          bool   `json:"done"`
	InRetention   *int64 `json:"in_retention"`
}

// importResult is the answer of POST /tools/migration/import.
type importResult struct {
	Source      string               `json:"source"`
	DryRun      bool                 `json:"dry_run"`
	Connections []importedConnection `json:"connections"`
	Logs        importLogs           `json:"logs"`
	Suggestions []string             `json:"suggestions"`
	Errors      []string             `json:"errors"`
}

// connection returns the imported connection with the given key, failing
// the test when there is none.
func (r *importResult) connection(t *testing.T, key string) importedConnection {
	t.Helper()
	for _, c := range r.Connections {
		if c.Key == key {
			return c
		}
	}
	t.Fatalf("no connection %q in the import answer: %+v", key, r.Connections)
	return importedConnection{}
}

// mustImport is importReq that requires a 200.
func (s *migrationSite) mustImport(t *testing.T, body string) *importResult {
	t.Helper()
	status, b := s.call(t, "POST", "/tools/migration/import", body)
	if status != http.StatusOK {
		t.Fatalf("import %s: status %d: %s", body, status, b)
	}
	var res importResult
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatalf("decode import answer %s: %v", b, err)
	}
	return &res
}

// importAnswer posts an import request (body) and returns the answer as
// it is, requiring a 200; what names the request in a failure.
func (s *migrationSite) importAnswer(t *testing.T, what, body string) []byte {
	t.Helper()
	status, b := s.call(t, "POST", "/tools/migration/import", body)
	if status != http.StatusOK {
		t.Fatalf("%s: %d %s", what, status, b)
	}
	return b
}

// importAllLogs imports source's log (connections left alone) chunk by
// chunk, following the cursor until logs.done, and returns every answer.
// extra is added to the request object (e.g. `"max_logs":300`).
func (s *migrationSite) importAllLogs(t *testing.T, source, extra string) []*importResult {
	t.Helper()
	var out []*importResult
	cursor := ""
	for i := 0; ; i++ {
		if i > 200 {
			t.Fatalf("import of %s logs not done after %d calls", source, i)
		}
		body := fmt.Sprintf(`{"source":%q,"import_connections":false,"import_logs":true,"cursor":%q`, source, cursor)
		if extra != "" {
			body += "," + extra
		}
		res := s.mustImport(t, body+"}")
		out = append(out, res)
		if res.Logs.Done {
			return out
		}
		if res.Logs.Cursor == "" || res.Logs.Cursor == cursor {
			t.Fatalf("import of %s logs: not done and no new cursor: %+v", source, res.Logs)
		}
		cursor = res.Logs.Cursor
		extra = strings.ReplaceAll(extra, `"restart_logs":true`, `"restart_logs":false`)
	}
}

// cli runs `mailsvc args...` with the service's directory and environment.
func (s *migrationSite) cli(t *testing.T, args ...string) servicetest.Result {
	t.Helper()
	return s.Svc.Run("", args...)
}

// connectionRecord is a connection as GET /connections lists it.
type connectionRecord struct {
	ID       int64          `json:"id"`
	Name     string         `json:"name"`
	Driver   string         `json:"driver"`
	IsActive bool           `json:"is_active"`
	Settings map[string]any `json:"settings"`
}

// connections lists the service's connections.
func (s *migrationSite) connections(t *testing.T) []connectionRecord {
	t.Helper()
	_, b := s.call(t, "GET", "/connections", "")
	return decodeList[connectionRecord](t, b)
}

// settings reads GET /settings.
func (s *migrationSite) settings(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	s.callJSON(t, "GET", "/settings", "", http.StatusOK, &v)
	return v
}

// log reads one log with its body (GET /logs/{id}).
func (s *migrationSite) log(t *testing.T, id int64) core.Log {
	t.Helper()
	var l core.Log
	s.callJSON(t, "GET", fmt.Sprintf("/logs/%d", id), "", http.StatusOK, &l)
	return l
}

// logs lists every log of the service (all pages, per_page 100).
func (s *migrationSite) logs(t *testing.T) []core.Log {
	t.Helper()
	var all []core.Log
	for page := 1; ; page++ {
		status, b := s.call(t, "GET", fmt.Sprintf("/logs?per_page=100&page=%d", page), "")
		if status != http.StatusOK {
			t.Fatalf("GET /logs: %d %s", status, b)
		}
		list := decodeList[core.Log](t, b)
		all = append(all, list...)
		if len(list) < 100 {
			return all
		}
	}
}

// decodeList decodes a list answer: a JSON array, or an object whose
// "items" or "data" field is the array.
func decodeList[T any](t *testing.T, b []byte) []T {
	t.Helper()
	var list []T
	if err := json.Unmarshal(b, &list); err == nil {
		return list
	}
	var wrapped map[string]json.RawMessage
	if err := json.Unmarshal(b, &wrapped); err != nil {
		t.Fatalf("decode list %s: %v", b, err)
	}
	for _, k := range []string{"items", "data", "logs", "connections"} {
		if raw, ok := wrapped[k]; ok {
			if err := json.Unmarshal(raw, &list); err == nil {
				return list
			}
		}
	}
	t.Fatalf("no list in %s", b)
	return nil
}

// apiError is the spec's error body.
type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Data    struct {
		Status int               `json:"status"`
		Errors map[string]string `json:"errors"`
	} `json:"data"`
}

// wantConn is what an import answer must say of one connection.
type wantConn struct {
	status, from, to string
	def, fallback    bool
}

// checkConns compares an import answer with want (by key) and returns
// the connection ids it reports. written says whether connections were
// written (not a dry run): then ready and needs_authorization ones have
// an id and the others none.
func checkConns(t *testing.T, res *importResult, want map[string]wantConn, written bool) map[string]int64 {
	t.Helper()
	if len(res.Connections) != len(want) {
		t.Fatalf("%d connections, want %d: %+v", len(res.Connections), len(want), res.Connections)
	}
	ids := map[string]int64{}
	for key, w := range want {
		c := res.connection(t, key)
		if c.Status != w.status || c.Conversion.From != w.from || c.Conversion.To != w.to {
			t.Errorf("%s: status %q conversion %q→%q, want %q %q→%q (missing %v, issues %v)",
				key, c.Status, c.Conversion.From, c.Conversion.To, w.status, w.from, w.to, c.Missing, c.Issues)
		}
		if c.WasDefault != w.def || c.WasFallback != w.fallback {
			t.Errorf("%s: was_default %v was_fallback %v, want %v %v", key, c.WasDefault, c.WasFallback, w.def, w.fallback)
		}
		creatable := w.status == "ready" || w.status == "needs_authorization"
		if got := c.ConnectionID != nil; got != (written && creatable) {
			t.Errorf("%s: connection_id %v, want one: %v", key, c.ConnectionID, written && creatable)
		}
		if c.ConnectionID != nil {
			ids[key] = *c.ConnectionID
		}
	}
	return ids
}

// noSecret fails when b shows one of the secrets unmasked.
func noSecret(t *testing.T, what string, b []byte, secrets ...string) {
	t.Helper()
	for _, sec := range secrets {
		if strings.Contains(string(b), sec) {
			t.Errorf("%s shows the secret %q unmasked", what, sec)
		}
	}
}

// sendThrough sends a test email through connection id and requires the
// sink to receive it authenticated as user: proof that the imported
// password is the real one.
func sendThrough(t *testing.T, s *migrationSite, sink *smtpsink.Sink, id int64, user string) {
	t.Helper()
	var res struct {
		Success bool   `json:"success"`
		Message string `json:"message"`
	}
	before := len(sink.Messages())
	s.callJSON(t, "POST", "/test-email", fmt.Sprintf(`{"to":"check@example.com","connection_id":%d}`, id), http.StatusOK, &res)
	if !res.Success {
		t.Fatalf("test email through connection %d failed: %s", id, res.Message)
	}
	msgs, err := sink.WaitFor(before+1, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := msgs[len(msgs)-1]; got.Username != user {
		t.Errorf("sink authenticated %q, want %q", got.Username, user)
	}
	if sink.AuthFailures() != 0 {
		t.Errorf("%d failed authentications at the sink", sink.AuthFailures())
	}
}

// importedLogs returns the logs imported from source, by subject.
func importedLogs(t *testing.T, s *migrationSite, source string) map[string]core.Log {
	t.Helper()
	out := map[string]core.Log{}
	for _, l := range s.logs(t) {
		if l.Source == "import:"+source {
			out[l.Message.Subject] = l
		}
	}
	return out
}

// importLogsInTwoChunks imports source's log of rows rows (more than 200,
// at most 400), requiring a chunk of 200 and one of the rest, and returns
// the imported logs by subject, requiring rows of them.
func importLogsInTwoChunks(t *testing.T, s *migrationSite, source string, rows int) map[string]core.Log {
	t.Helper()
	runs := s.importAllLogs(t, source, "")
	if len(runs) != 2 || runs[0].Logs.Imported != 200 || runs[1].Logs.Imported != rows-200 || !runs[1].Logs.Done {
		t.Fatalf("%d log chunks, last %+v; want 200 then %d", len(runs), runs[len(runs)-1].Logs, rows-200)
	}
	logs := importedLogs(t, s, source)
	if len(logs) != rows {
		t.Fatalf("%d imported logs, want %d", len(logs), rows)
	}
	return logs
}

// dryRunThenImport imports source's connections as a dry run, whose
// answer must show none of secrets, then for real; both must report want.
// It returns the ids of the connections written.
func dryRunThenImport(t *testing.T, s *migrationSite, source string, want map[string]wantConn, secrets ...string) map[string]int64 {
	t.Helper()
	dryRun := fmt.Sprintf(`{"source":%q,"dry_run":true}`, source)
	noSecret(t, "dry run", s.importAnswer(t, "dry run", dryRun), secrets...)
	checkConns(t, s.mustImport(t, dryRun), want, false)
	return checkConns(t, s.mustImport(t, fmt.Sprintf(`{"source":%q}`, source)), want, true)
}

// checkDefault requires the service's default (and fallback, when not 0)
// connection to be the given ids.
func checkDefault(t *testing.T, s *migrationSite, def, fallback int64) {
	t.Helper()
	st := s.settings(t)
	if fmt.Sprint(st["default_connection_id"]) != fmt.Sprint(def) {
		t.Errorf("default_connection_id %v, want %d", st["default_connection_id"], def)
	}
	if fallback != 0 && fmt.Sprint(st["fallback_connection_id"]) != fmt.Sprint(fallback) {
		t.Errorf("fallback_connection_id %v, want %d", st["fallback_connection_id"], fallback)
	}
}

// hasString reports whether one of list contains sub.
func hasString(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
