package cli

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/systemd"
)

// TestMigrationCounter checks that wp install's logger counts the store's
// migration lines instead of writing them and passes the others on.
func TestMigrationCounter(t *testing.T) {
	var buf bytes.Buffer
	c := newMigrationCounter(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}))
	log := slog.New(c).With("dialect", "sqlite")
	for range 3 {
		log.Info(migrationMessage, "version", 1)
	}
	log.Info("something else at INFO")
	log.Warn("a warning")
	if c.Steps() != 3 || strings.Contains(buf.String(), migrationMessage) || strings.Contains(buf.String(), "something else") || !strings.Contains(buf.String(), "a warning") {
		t.Errorf("steps %d, log:\n%s", c.Steps(), buf.String())
	}
	if got := migratedLine(42, 3); got != "Database: migrated to schema 42 (3 steps)" {
		t.Errorf("migratedLine = %q", got)
	}
	if got := migratedLine(42, 0); got != "Database: schema 42, up to date" {
		t.Errorf("migratedLine = %q", got)
	}
}

// TestNextStep checks wp install's closing line: systemctl for the
// package's binary with its unit, mailsvc serve otherwise.
func TestNextStep(t *testing.T) {
	unit := filepath.Join(t.TempDir(), "mailsvc.service")
	if err := os.WriteFile(unit, systemd.Unit(), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "none.service")
	for _, tc := range []struct {
		exe   string
		units []string
		want  bool
	}{
		{systemd.Executable, []string{missing, unit}, true},
		{systemd.Executable, []string{missing}, false},
		{"/home/me/mailsvc/bin/mailsvc", []string{unit}, false},
	} {
		if got := installedByPackage(tc.exe, tc.units...); got != tc.want {
			t.Errorf("installedByPackage(%s, %v) = %v, want %v", tc.exe, tc.units, got, tc.want)
		}
	}
	if s := nextStep(true); !strings.Contains(s, "sudo systemctl enable --now mailsvc") || strings.Contains(s, "mailsvc serve") {
		t.Errorf("nextStep(package) = %q", s)
	}
	if s := nextStep(false); !strings.Contains(s, "`mailsvc serve`") || strings.Contains(s, "systemctl") {
		t.Errorf("nextStep(no package) = %q", s)
	}
}
