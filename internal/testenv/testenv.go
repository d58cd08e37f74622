// Package testenv decides what a test does when a tool or service it needs
// is missing: on a developer's machine it skips with the reason; in CI
// (the CI environment variable set), where scripts/install-deps.sh
// provides PHP, WordPress and MariaDB, it fails, so nothing CI can run is
// skipped silently.
//
// It also says which WordPress the tests run against: WordPressDir, chosen
// with MAILSVC_TEST_WORDPRESS_DIR, and its version, so that a test can
// state what it expects of each release.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// WordPressDirEnv names the environment variable that chooses the
// WordPress the tests run against (its ABSPATH).
const WordPressDirEnv = "MAILSVC_TEST_WORDPRESS_DIR"

// DefaultWordPressDir is Debian 12's wordpress package: 6.1, the oldest
// release mailsvc supports. scripts/install-deps.sh also unpacks the newest
// supported one, Debian unstable's, in /opt/wordpress-7.1/, and make test
// runs the WordPress suites a second time with MAILSVC_TEST_WORDPRESS_DIR
// naming it.
const DefaultWordPressDir = "/usr/share/wordpress/"

// WordPressDir returns the directory of the WordPress under test, with a
// trailing slash: MAILSVC_TEST_WORDPRESS_DIR when set, else
// DefaultWordPressDir.
func WordPressDir() string {
	d := os.Getenv(WordPressDirEnv)
	if d == "" {
		return DefaultWordPressDir
	}
	return strings.TrimRight(d, "/") + "/"
}

var (
	versionOnce sync.Once
	version     string
	versionErr  error
)

var wpVersionLine = regexp.MustCompile(`(?m)^\$wp_version\s*=\s*'([^']+)';`)

// WordPressVersion returns $wp_version of the WordPress under test (e.g.
// "6.1.9", "7.1.4"), read from its wp-includes/version.php, or calls
// Missing.
func WordPressVersion(t testing.TB) string {
	t.Helper()
	versionOnce.Do(func() {
		path := filepath.Join(WordPressDir(), "wp-includes", "version.php")
		b, err := os.ReadFile(path)
		if err != nil {
			versionErr = err
			return
		}
		m := wpVersionLine.FindSubmatch(b)
		if m == nil {
			versionErr = fmt.Errorf("%s sets no $wp_version", path)
			return
		}
		version = string(m[1])
	})
	if versionErr != nil {
		Missing(t, "WordPress version: %v (Debian package wordpress)", versionErr)
	}
	return version
}

// WordPressRelease returns the major release of the WordPress under test,
// its version's first two parts ("6.1", "7.1"), for expectations that are
// written per release.
func WordPressRelease(t testing.TB) string {
	t.Helper()
	p := versionParts(WordPressVersion(t))
	for len(p) < 2 {
		p = append(p, 0)
	}
	return fmt.Sprintf("%d.%d", p[0], p[1])
}

// WordPressAtLeast reports whether the WordPress under test is release min
// ("6.8", "7.0") or newer. Pre-release suffixes ("7.1-RC1") count as the
// release.
func WordPressAtLeast(t testing.TB, min string) bool {
	t.Helper()
	return CompareVersions(WordPressVersion(t), min) >= 0
}

// CompareVersions compares two dotted WordPress versions numerically,
// missing parts counting as 0 and anything from the first character that
// is neither a digit nor a dot ignored: -1, 0 or +1.
func CompareVersions(a, b string) int {
	pa, pb := versionParts(a), versionParts(b)
	for i := 0; i < len(pa) || i < len(pb); i++ {
		var x, y int
		if i < len(pa) {
			x = pa[i]
		}
		if i < len(pb) {
			y = pb[i]
		}
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
	}
	return 0
}

func versionParts(v string) []int {
	if i := strings.IndexFunc(v, func(r rune) bool { return r != '.' && (r < '0' || r > '9') }); i >= 0 {
		v = v[:i]
	}
	var parts []int
	for _, p := range strings.Split(strings.Trim(v, "."), ".") {
		n, _ := strconv.Atoi(p)
		parts = append(parts, n)
	}
	return parts
}

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

// WordPressFile returns the path of rel (e.g. "wp-includes/pluggable.php")
// in the WordPress under test (WordPressDir), or calls Missing when it is
// absent.
func WordPressFile(t testing.TB, rel string) string {
	t.Helper()
	path := filepath.Join(WordPressDir(), rel)
	if _, err := os.Stat(path); err != nil {
		Missing(t, "WordPress source %s is not installed (Debian package wordpress)", path)
	}
	return path
}
