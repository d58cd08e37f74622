package takeover

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/systemd"
	"github.com/mailsvc/mailsvc/test/servicetest"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// TestWPInstallSystemd runs `mailsvc wp install --systemd` on a real site
// with the unit and the environment file aimed at a temporary directory
// and fake getent and systemctl first on PATH (systemd "running", the
// mailsvc user present): the unit written is the package's, running this
// binary, the environment file names the site's wp-config.php, and
// systemd is reloaded and the service enabled and started.
func TestWPInstallSystemd(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	site := wpsite.Install(t, wpsite.Options{Prefix: "wsd_"})
	dir := t.TempDir()
	fakes := filepath.Join(dir, "bin")
	log := filepath.Join(dir, "commands.log")
	if err := os.Mkdir(fakes, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"getent":    "exit 0",
		"systemctl": `[ "$1" = is-system-running ] && echo running; exit 0`,
	} {
		script := "#!/bin/sh\necho \"" + name + " $*\" >> " + log + "\n" + body + "\n"
		if err := os.WriteFile(filepath.Join(fakes, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	unitPath := filepath.Join(dir, "systemd", "mailsvc.service")
	envPath := filepath.Join(dir, "etc", "mailsvc.env")
	env := environ(dir, "PATH="+fakes+string(os.PathListSeparator)+os.Getenv("PATH"))

	out, err := run(t, dir, env, "wp", "install", "--wp-path", site.Dir,
		"--systemd", "--systemd-unit", unitPath, "--systemd-env", envPath)
	if err != nil {
		t.Fatalf("wp install --systemd: %v\n%s", err, out)
	}
	exe, err := filepath.EvalSymlinks(servicetest.Binary)
	if err != nil {
		t.Fatal(err)
	}
	if unit, err := os.ReadFile(unitPath); err != nil || string(unit) != string(systemd.UnitFor(exe)) {
		t.Errorf("unit at %s is not the package's running %s (%v):\n%s", unitPath, exe, err, unit)
	}
	wpConfig, err := filepath.Abs(site.WPConfigPath)
	if err != nil {
		t.Fatal(err)
	}
	envFile, err := os.ReadFile(envPath)
	if err != nil || !slices.Contains(strings.Split(string(envFile), "\n"), "MAILSVC_WP_CONFIG="+wpConfig) {
		t.Errorf("environment file %s does not name %s (%v):\n%s", envPath, wpConfig, err, envFile)
	}
	commands, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	want := "getent passwd mailsvc\nsystemctl is-system-running\nsystemctl daemon-reload\nsystemctl enable --now mailsvc.service\n"
	if string(commands) != want {
		t.Errorf("commands run:\n%s\nwant:\n%s", commands, want)
	}
	for _, line := range []string{"Installed the wp_mail() bridge", "Wrote the systemd unit: " + unitPath, "Enabled and started mailsvc.service"} {
		if !strings.Contains(out, line) {
			t.Errorf("output lacks %q:\n%s", line, out)
		}
	}
}
