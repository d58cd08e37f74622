package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/systemd"
	"github.com/mailsvc/mailsvc/core"
)

// TestMain keeps the host's /etc/mailsvc/mailsvc.env out of every test of
// the package; a test that wants one sets MAILSVC_ENV_FILE itself.
func TestMain(m *testing.M) {
	os.Setenv(systemd.EnvFileName, "")
	os.Exit(m.Run())
}

// TestEnvFileConstantDocumented checks that the catalog's MAILSVC_ENV_FILE
// is the variable and the default the command line uses.
func TestEnvFileConstantDocumented(t *testing.T) {
	d, ok := core.LookupConstantDef(systemd.EnvFileName)
	if !ok || d.Default != systemd.EnvPath {
		t.Errorf("core's %s = %+v, %v; want default %s", systemd.EnvFileName, d, ok, systemd.EnvPath)
	}
}

// unsetenv unsets k for the rest of the test.
func unsetenv(t *testing.T, k string) {
	t.Setenv(k, "")
	os.Unsetenv(k)
}

// TestCommandsReadTheEnvFile checks that a command run without the
// service's settings in its environment takes them from the environment
// file, as the service takes them from its unit, and that the environment
// wins over the file.
func TestCommandsReadTheEnvFile(t *testing.T) {
	dir := t.TempDir()
	for _, k := range []string{"MAILSVC_WP_CONFIG", "MAILSVC_DB", "MAILSVC_DATA_DIR", "MAILSVC_TABLE_PREFIX", "MAILSVC_ADDR"} {
		unsetenv(t, k)
	}
	env := filepath.Join(dir, "mailsvc.env")
	text := "# as the package writes it\nMAILSVC_DB=\"sqlite:" + filepath.Join(dir, "from-env-file.db") + "\"\nMAILSVC_ADDR=127.0.0.1:9123\n"
	if err := os.WriteFile(env, []byte(text), 0o640); err != nil {
		t.Fatal(err)
	}
	t.Setenv(systemd.EnvFileName, env)
	t.Setenv("MAILSVC_ADDR", "127.0.0.1:9999")
	out, err := runCommand(t, strings.NewReader(""), "config")
	if err != nil {
		t.Fatalf("mailsvc config: %v\n%s", err, out)
	}
	if !strings.Contains(out, "from-env-file.db") {
		t.Errorf("mailsvc config does not use MAILSVC_DB of %s:\n%s", env, out)
	}
	if !strings.Contains(out, "127.0.0.1:9999") || strings.Contains(out, "127.0.0.1:9123") {
		t.Errorf("the environment's MAILSVC_ADDR did not win over the file's:\n%s", out)
	}
	if strings.Contains(out, filepath.Join("data", "mailsvc.db")) {
		t.Errorf("mailsvc config still names the default SQLite file:\n%s", out)
	}
}

// TestUnreadableEnvFileSaysSudo checks the hint of a command run without
// the rights to read the environment file, and that the service (whose
// environment holds its settings) and version are not stopped by it.
func TestUnreadableEnvFileSaysSudo(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads a file of mode 0000")
	}
	dir := t.TempDir()
	env := filepath.Join(dir, "mailsvc.env")
	if err := os.WriteFile(env, []byte("MAILSVC_DB=sqlite:/nowhere.db\n"), 0o000); err != nil {
		t.Fatal(err)
	}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "MAILSVC_") {
			unsetenv(t, k)
		}
	}
	t.Setenv(systemd.EnvFileName, env)
	out, err := runCommand(t, strings.NewReader(""), "config")
	if err == nil || !strings.Contains(err.Error(), "sudo") || !strings.Contains(err.Error(), env) {
		t.Errorf("mailsvc config with an unreadable %s: %v\n%s, want a hint to use sudo", env, err, out)
	}
	if out, err := runCommand(t, strings.NewReader(""), "version"); err != nil {
		t.Errorf("mailsvc version: %v\n%s", err, out)
	}
	if !hasOwnSettings([]string{"PATH=/bin", "MAILSVC_DATA_DIR=/var/lib/mailsvc"}) || hasOwnSettings([]string{"MAILSVC_ENV_FILE=/x"}) {
		t.Error("hasOwnSettings does not tell the service's environment from a shell's")
	}
}

func TestScreensBanner(t *testing.T) {
	const admin, screens = "https://site.example/wp-admin/admin.php?page=mailsvc", "http://127.0.0.1:8025/admin/"
	for _, tc := range []struct {
		standalone bool
		admin      string
		want       string
	}{
		{false, admin, "Open wp-admin → Mail (" + admin + ")"},
		{true, "", "The screens are at " + screens},
		{false, "", "The screens are at " + screens},
	} {
		if got := screensBanner(tc.standalone, tc.admin, screens); got != tc.want {
			t.Errorf("screensBanner(%v, %q) = %q, want %q", tc.standalone, tc.admin, got, tc.want)
		}
	}
}
