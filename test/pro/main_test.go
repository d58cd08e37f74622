// Package protest tests the Pro add-on through the built mailsvc binary:
// licence keys minted by `mailsvc license`, the licence routes with and
// without a licence server, the Pro settings, and Pro switched off.
package protest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/test/servicetest"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

// vendor is a key pair made by `mailsvc license keygen`, its private key
// in a file.
type vendor struct {
	public, keyFile string
}

func keygen(t *testing.T, dir string) vendor {
	t.Helper()
	r := servicetest.Run(dir, servicetest.Environ(dir), "", "license", "keygen")
	lines := strings.Split(strings.TrimRight(r.Stdout, "\n"), "\n")
	if r.Code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], "public_key: ") || !strings.HasPrefix(lines[1], "private_key: ") {
		t.Fatalf("license keygen: code %d, stdout %q, stderr %s", r.Code, r.Stdout, r.Stderr)
	}
	f, err := os.CreateTemp(dir, "vendor-*.key")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(strings.TrimPrefix(lines[1], "private_key: ") + "\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return vendor{public: strings.TrimPrefix(lines[0], "public_key: "), keyFile: f.Name()}
}

// issue mints a licence key with `mailsvc license issue`.
func (v vendor) issue(t *testing.T, dir, site, features, expires string) string {
	t.Helper()
	args := []string{"license", "issue", "--private-key", v.keyFile, "--site", site, "--expires", expires}
	if features != "" {
		args = append(args, "--features", features)
	}
	r := servicetest.Run(dir, servicetest.Environ(dir), "", args...)
	if r.Code != 0 {
		t.Fatalf("license issue: code %d, stderr %s", r.Code, r.Stderr)
	}
	return r.LastLine()
}

// start starts mailsvc standalone with extra environment and returns it
// with the first-run administrator's credentials. Connections may point
// at the local fakes (MAILSVC_ALLOW_CUSTOM_ENDPOINTS).
func start(t *testing.T, dir string, extra ...string) (*servicetest.Service, func(method, path, body string) servicetest.Response) {
	t.Helper()
	svc := servicetest.Start(t, dir, append([]string{servicetest.AllowCustomEndpoints}, extra...)...)
	pw := svc.MustAdminPassword(t)
	auth := servicetest.Basic("admin", pw)
	return svc, func(method, path, body string) servicetest.Response {
		t.Helper()
		return servicetest.Call(t, method, svc.Base+path, body, auth)
	}
}

func keyBody(key string) string {
	b, _ := json.Marshal(map[string]string{"license_key": key})
	return string(b)
}

// dbFiles returns the SQLite database files of a service's data directory.
func dbFiles(t *testing.T, dir string) []byte {
	t.Helper()
	var all []byte
	matches, _ := filepath.Glob(filepath.Join(dir, "data", "mailsvc.db*"))
	if len(matches) == 0 {
		t.Fatal("no database file")
	}
	for _, m := range matches {
		b, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	return all
}
