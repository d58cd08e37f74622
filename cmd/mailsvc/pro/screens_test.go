package pro

import (
	"io/fs"
	"net/http/httptest"
	"strings"
	"testing"

	adminui "github.com/mailsvc/mailsvc/adapters/http/admin"
)

// TestScreensRegistered checks that joining the module serves the Pro
// screens (the Pro tab and one module per tab) under /admin/, lists the
// Pro tab in the navigation, and that
// everything the screens serve together stays within the admin
// package's transfer budget of 300 KB.
func TestScreensRegistered(t *testing.T) {
	h := adminui.Handler()
	for _, name := range []string{"pro.js", "pro-license.js", "pro-settings.js", "pro-groups.js", "pro-rules.js",
		"pro-analytics.js", "pro-domain.js", "pro-transfer.js", "pro-ses.js", "pro-webhooks.js", "pro-suppressions.js"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/admin/js/"+name, nil))
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), "export async function render") {
			t.Errorf("GET /admin/js/%s: %d, want 200 with the screen's render", name, rec.Code)
		}
	}
	// The Pro tab is in the navigation, after the built-in tabs.
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/admin/js/nav.js", nil))
	if want := `export default [{"slug":"pro","title":"Pro","module":"pro.js"}];`; rec.Code != 200 || !strings.Contains(rec.Body.String(), want) {
		t.Errorf("GET /admin/js/nav.js: %d %s, want the Pro tab %s", rec.Code, rec.Body, want)
	}
	const budget = 300 << 10
	total := 0
	served := adminui.Files()
	err := fs.WalkDir(served, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(served, path)
		total += len(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if total > budget {
		t.Errorf("the screens with Pro weigh %d bytes, over %d", total, budget)
	}
}
