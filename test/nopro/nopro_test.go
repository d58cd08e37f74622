// Package nopro proves that Pro is one module: no free package imports
// it, and a build without it (freemailsvc: cmd/mailsvc without the blank
// import of cmd/mailsvc/pro) creates no Pro table and serves no Pro
// screen or route.
package nopro

import (
	"context"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/store/storetest"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

func TestMain(m *testing.M) {
	servicetest.MainPackage(m, "github.com/mailsvc/mailsvc/test/nopro/freemailsvc")
}

// proPackage matches the import paths of the Pro module.
var proPackage = regexp.MustCompile(`^github\.com/mailsvc/mailsvc/(app/pro|adapters/pro|adapters/http/pro|cmd/mailsvc/pro)(/|$)`)

// proTables are the tables the Pro module's schema history creates
// (adapters/pro/store), without the table prefix.
var proTables = []string{"mailsvc_pro_migrations", "mailsvc_routing_rules", "mailsvc_send_counts", "mailsvc_sender_groups", "mailsvc_suppressions",
	"mailsvc_log_events", "mailsvc_webhook_seen", "mailsvc_event_buckets", "mailsvc_event_repeats", "mailsvc_site_event_buckets",
	"mailsvc_source_buckets", "mailsvc_source_rollups", "mailsvc_site_rollups"}

// TestFreePackagesImportNoPro reads every package's imports: only the
// Pro module's own packages and the shipped command that joins it
// (cmd/mailsvc) import a Pro package, and the free build links none.
func TestFreePackagesImportNoPro(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "github.com/mailsvc/mailsvc/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := fields[0]
		if proPackage.MatchString(pkg) || pkg == "github.com/mailsvc/mailsvc/cmd/mailsvc" || strings.HasPrefix(pkg, "github.com/mailsvc/mailsvc/test/pro") {
			continue
		}
		checked++
		for _, imp := range fields[1:] {
			if proPackage.MatchString(imp) {
				t.Errorf("free package %s imports the Pro package %s", pkg, imp)
			}
		}
	}
	if checked < 50 {
		t.Fatalf("checked only %d packages", checked)
	}
	deps, err := exec.Command("go", "list", "-deps", "github.com/mailsvc/mailsvc/test/nopro/freemailsvc").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(deps)) {
		if proPackage.MatchString(dep) {
			t.Errorf("the free build links the Pro package %s", dep)
		}
	}
}

// TestFreeStoreCreatesNoProTable migrates a fresh database in a binary
// that does not link the Pro module, on both dialects: the service's
// tables are there, no Pro table is.
func TestFreeStoreCreatesNoProTable(t *testing.T) {
	storetest.EachDSN(t, func(t *testing.T, dialect, dsn string) {
		db, err := store.Open(context.Background(), dsn, "wp_", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		checkTables(t, db)
	})
}

// TestFreeBuildServesNoPro runs the free build: it serves the free
// screens and routes, no Pro screen, no /pro/ route, and its database
// has no Pro table.
func TestFreeBuildServesNoPro(t *testing.T) {
	dir := t.TempDir()
	svc := servicetest.Start(t, dir)
	admin := servicetest.Basic("admin", svc.AdminPassword())
	for path, want := range map[string]int{
		"/admin/js/app.js":           200,
		"/admin/js/dashboard.js":     200,
		"/admin/js/pro.js":           404,
		"/admin/js/pro-analytics.js": 404,
		"/admin/js/pro-rules.js":     404,
	} {
		resp, err := http.Get("http://" + svc.Addr + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
	// The screens' navigation lists no module's tab.
	if resp, err := http.Get("http://" + svc.Addr + "/admin/js/nav.js"); err != nil {
		t.Fatal(err)
	} else {
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || !strings.Contains(string(body), "export default [];") {
			t.Errorf("GET /admin/js/nav.js: %d %v %s, want no tab", resp.StatusCode, err, body)
		}
	}
	if r := servicetest.Call(t, "GET", svc.Base+"/settings", "", admin); r.Status != 200 {
		t.Errorf("GET /settings: %d %s", r.Status, r.Body)
	}
	for _, route := range []string{"/pro/license/status", "/pro/routing-rules", "/pro/analytics/overview"} {
		if r := servicetest.Call(t, "GET", svc.Base+route, "", admin); r.Status != 404 {
			t.Errorf("GET %s: %d %s, want 404", route, r.Status, r.Body)
		}
	}
	svc.Stop(t)
	db, err := store.OpenExisting(context.Background(), "sqlite:"+filepath.Join(dir, "data", "mailsvc.db"), "wp_", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	checkTables(t, db)
}

// checkTables fails t unless db holds the service's logs and connections
// tables and none of the Pro tables.
func checkTables(t *testing.T, db *store.DB) {
	t.Helper()
	tables, err := db.Installation().ServiceTables(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"wp_mailsvc_logs", "wp_mailsvc_connections", "wp_mailsvc_migrations"} {
		if !slices.Contains(tables, want) {
			t.Errorf("no %s among %v", want, tables)
		}
	}
	for _, pro := range proTables {
		if slices.Contains(tables, "wp_"+pro) {
			t.Errorf("the free build created the Pro table wp_%s", pro)
		}
	}
}
