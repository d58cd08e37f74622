// Package testenv decides what a test does when a tool or service it needs
// is missing: on a developer's machine it skips with the reason; in CI
// (the CI environment variable set), where scripts/install-deps.sh
// provides PHP, WordPress and MariaDB, it fails, so nothing CI can run is
// skipped silently.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// Missing skips t (or fails it under CI) because something it needs is
// absent; the message says what.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (CI provides it through scripts/install-deps.sh, so this is a failure)", msg)
	}
	t.Skipf("%s; run scripts/install-deps.sh to enable this test", msg)
}

// PHP returns the path of php-cli, or calls Missing.
func PHP(t testing.TB) string {
	t.Helper()
	php, err := exec.LookPath("php")
	if err != nil {
		Missing(t, "php-cli is not installed")
	}
	return php
}

// WordPressFile returns path when the Debian wordpress package provides
// it, or calls Missing.
func WordPressFile(t testing.TB, path string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		Missing(t, "WordPress source %s is not installed (Debian package wordpress)", path)
	}
	return path
}
