// Package wpsite installs a real WordPress site for tests: Debian's
// WordPress package (/usr/share/wordpress, 6.1) or the WordPress that
// MAILSVC_TEST_WORDPRESS_DIR names (CI's second run: 7.1 in
// /opt/wordpress-7.1/), php-cli and a fresh MariaDB database per site. It drives WordPress only and knows nothing of mailsvc,
// so any test package can use it to compare mailsvc with WordPress itself.
//
// The site gets its own wp-config.php in a temporary directory and never
// goes through Debian's dispatcher WordPressDir/wp-config.php:
// PHP code run by the harness requires the site's wp-config.php directly,
// which defines ABSPATH and requires wp-settings.php.
//
// Application passwords are accepted by WordPress only when is_ssl() is
// true or the environment type is "local" (wp_is_application_passwords_supported).
// Install a site with Options.EnvironmentType "local", or set
// $_SERVER['HTTPS'] = 'on' in the PHP code before authenticating.
//
// Typical use:
//
//	site := wpsite.Install(t, wpsite.Options{EnvironmentType: "local"})
//	id := site.CreateUser(t, "sue", "sue@example.com", "editor", "secret")
//	appPW := site.CreateApplicationPassword(t, "sue", "mailsvc")
//	cookie := site.LoginCookie(t, "sue")
//	nonce := site.RESTNonce(t, "sue", cookie)
//	base := site.StartPHPServer(t) // WordPress itself at site.SiteURL
//
// site.WPConfigPath, site.DSN, site.Prefix and site.Salts are what a
// program sharing the site (mailsvc) is configured with.
//
// Each Install takes about a second and each PHP call a few hundred
// milliseconds: share one site between the cases of a table test.
//
// Where WordPress releases differ (application password hashing, filters'
// arguments, the admin's look), a test states what it expects of each with
// Version, Release or AtLeast.
//
// When php-cli, WordPressDir or MariaDB on 127.0.0.1:3306 is
// missing, Install skips the test, except when the environment variable CI
// is set: then it fails, because CI installs them with
// scripts/install-deps.sh.
package wpsite

import (
	"github.com/mailsvc/mailsvc/internal/testenv"

	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	// The MariaDB driver used to create and drop the site's database.
	_ "github.com/go-sql-driver/mysql"
)

// WordPressDir is ABSPATH, with a trailing slash: the WordPress under test,
// Debian 12's package in /usr/share/wordpress/ unless the environment
// variable MAILSVC_TEST_WORDPRESS_DIR names another (testenv.WordPressDir).
var WordPressDir = testenv.WordPressDir()

// Version returns $wp_version of the WordPress under test ("6.1.9",
// "7.1.4").
func Version(t testing.TB) string {
	t.Helper()
	return testenv.WordPressVersion(t)
}

// Release returns the major release under test ("6.1", "7.1"), for
// expectations written per release.
func Release(t testing.TB) string {
	t.Helper()
	return testenv.WordPressRelease(t)
}

// AtLeast reports whether the WordPress under test is release min ("6.8")
// or newer.
func AtLeast(t testing.TB, min string) bool {
	t.Helper()
	return testenv.WordPressAtLeast(t, min)
}

// DBAddr is the MariaDB server the sites are created on; root has no
// password there.
const DBAddr = "127.0.0.1:3306"

// SaltNames are the eight secret keys and salts of wp-config.php, in the
// order wp-config-sample.php lists them.
var SaltNames = []string{
	"AUTH_KEY", "SECURE_AUTH_KEY", "LOGGED_IN_KEY", "NONCE_KEY",
	"AUTH_SALT", "SECURE_AUTH_SALT", "LOGGED_IN_SALT", "NONCE_SALT",
}

// Options configures a site. The zero value is a usable default.
type Options struct {
	// Prefix is $table_prefix; default "wp_".
	Prefix string
	// EnvironmentType, when not empty, is defined as WP_ENVIRONMENT_TYPE
	// ("local", "development", "staging", "production"). "local" lets
	// application passwords work over plain HTTP.
	EnvironmentType string
	// SiteURL is the siteurl and home option, without a trailing slash.
	// Default: http://127.0.0.1:<a free port>, so that StartPHPServer can
	// serve the site at exactly that address.
	SiteURL string
	// URLConstants also defines WP_SITEURL and WP_HOME in wp-config.php
	// (the options hold the same value either way).
	URLConstants bool
	// ExtraConfig is PHP code appended to wp-config.php before
	// wp-settings.php is required (e.g. define('COOKIEHASH', '...');).
	ExtraConfig string
}

// Site is an installed WordPress site.
type Site struct {
	// Dir is the site's temporary directory (wp-config.php, content, scripts).
	Dir string
	// WPConfigPath is the site's own wp-config.php.
	WPConfigPath string
	// DBName is the site's MariaDB database, dropped when the test ends.
	DBName string
	// Prefix is the table prefix.
	Prefix string
	// SiteURL is the siteurl and home of the site, without trailing slash.
	SiteURL string
	// ContentDir is WP_CONTENT_DIR; it holds mu-plugins/, plugins/ and a
	// themes link to Debian's themes.
	ContentDir string
	// DSN is a github.com/go-sql-driver/mysql DSN to the site's database.
	DSN string
	// EnvironmentType is WP_ENVIRONMENT_TYPE, or "" when not defined.
	EnvironmentType string
	// Salts maps each name of SaltNames to its value, byte for byte as
	// PHP sees it (values contain quotes and backslashes on purpose).
	Salts map[string]string
	// AdminLogin, AdminEmail and AdminPassword are the administrator that
	// the installer created.
	AdminLogin    string
	AdminEmail    string
	AdminPassword string

	mu        sync.Mutex
	serverURL string
}

// toolsMissing skips the test, or fails it when running in CI.
func toolsMissing(t testing.TB, format string, args ...any) {
	t.Helper()
	testenv.Missing(t, "wpsite: "+format, args...)
}

// randomHex returns n random bytes as lowercase hex.
func randomHex(t testing.TB, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("wpsite: random bytes: %v", err)
	}
	return hex.EncodeToString(b)
}

// saltAlphabet is the set of characters salts are drawn from. It includes
// both quotes, the backslash and the dollar sign so that wp-config.php
// parsers meet every escape of PHP's single-quoted strings.
const saltAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789" +
	"!@#%^&*()-_[]{}<>~`+=,.;:/?|'\"\\$"

// newSalts returns random salts; some end in a backslash or start with a
// quote, the cases a parser most easily gets wrong.
func newSalts(t testing.TB) map[string]string {
	t.Helper()
	salts := make(map[string]string, len(SaltNames))
	for i, name := range SaltNames {
		b := make([]byte, 64)
		if _, err := rand.Read(b); err != nil {
			t.Fatalf("wpsite: random salt: %v", err)
		}
		for j := range b {
			b[j] = saltAlphabet[int(b[j])%len(saltAlphabet)]
		}
		s := string(b)
		switch i % 4 {
		case 0:
			s = s[:62] + `\'`
		case 1:
			s = `'` + s[1:62] + `\\`
		case 2:
			s = s[:30] + `"$x\n` + s[35:]
		}
		salts[name] = s
	}
	return salts
}

var prefixPattern = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// freeLoopbackPort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freeLoopbackPort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("wpsite: find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Install creates a fresh database and a WordPress site in it, runs
// WordPress's installer (administrator "admin") and sets pretty permalinks
// so that /wp-json/ routes work. Everything is removed when the test ends.
func Install(t testing.TB, opts Options) *Site {
	t.Helper()
	if _, err := exec.LookPath("php"); err != nil {
		toolsMissing(t, "php-cli is not installed")
	}
	if _, err := os.Stat(filepath.Join(WordPressDir, "wp-settings.php")); err != nil {
		toolsMissing(t, "WordPress is not installed in %s", WordPressDir)
	}
	if opts.Prefix == "" {
		opts.Prefix = "wp_"
	}
	if !prefixPattern.MatchString(opts.Prefix) {
		t.Fatalf("wpsite: table prefix %q must match [A-Za-z0-9_]+", opts.Prefix)
	}
	if opts.SiteURL == "" {
		opts.SiteURL = fmt.Sprintf("http://127.0.0.1:%d", freeLoopbackPort(t))
	}
	opts.SiteURL = strings.TrimRight(opts.SiteURL, "/")
	if u, err := url.Parse(opts.SiteURL); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		t.Fatalf("wpsite: site URL %q is not an absolute http(s) URL", opts.SiteURL)
	}

	s := &Site{
		Dir:             t.TempDir(),
		DBName:          "mailsvc_wp_" + randomHex(t, 6),
		Prefix:          opts.Prefix,
		SiteURL:         opts.SiteURL,
		EnvironmentType: opts.EnvironmentType,
		Salts:           newSalts(t),
		AdminLogin:      "admin",
		AdminEmail:      "admin@example.com",
		AdminPassword:   "Adm1n-" + randomHex(t, 8),
	}
	s.WPConfigPath = filepath.Join(s.Dir, "wp-config.php")
	s.ContentDir = filepath.Join(s.Dir, "wp-content")
	s.DSN = fmt.Sprintf("root@tcp(%s)/%s", DBAddr, s.DBName)

	s.createDatabase(t)
	s.createContentDir(t)
	if err := os.WriteFile(s.WPConfigPath, []byte(s.wpConfig(opts)), 0o644); err != nil {
		t.Fatalf("wpsite: write wp-config.php: %v", err)
	}
	s.install(t)
	return s
}

// createDatabase creates the site's database and drops it at cleanup.
func (s *Site) createDatabase(t testing.TB) {
	t.Helper()
	db, err := sql.Open("mysql", fmt.Sprintf("root@tcp(%s)/?timeout=5s", DBAddr))
	if err != nil {
		t.Fatalf("wpsite: open MariaDB: %v", err)
	}
	if err := db.Ping(); err != nil {
		db.Close()
		toolsMissing(t, "MariaDB does not answer on %s as root without password: %v", DBAddr, err)
	}
	if _, err := db.Exec("CREATE DATABASE `" + s.DBName + "` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_520_ci"); err != nil {
		db.Close()
		t.Fatalf("wpsite: create database %s: %v", s.DBName, err)
	}
	t.Cleanup(func() {
		defer db.Close()
		if _, err := db.Exec("DROP DATABASE IF EXISTS `" + s.DBName + "`"); err != nil {
			t.Errorf("wpsite: drop database %s: %v", s.DBName, err)
		}
	})
}

// createContentDir makes WP_CONTENT_DIR with mu-plugins/ and plugins/, and
// links Debian's bundled themes so that the site has its default theme.
func (s *Site) createContentDir(t testing.TB) {
	t.Helper()
	for _, d := range []string{"mu-plugins", "plugins", "uploads"} {
		if err := os.MkdirAll(filepath.Join(s.ContentDir, d), 0o755); err != nil {
			t.Fatalf("wpsite: create content dir: %v", err)
		}
	}
	themes := filepath.Join(WordPressDir, "wp-content", "themes")
	if _, err := os.Stat(themes); err == nil {
		if err := os.Symlink(themes, filepath.Join(s.ContentDir, "themes")); err != nil {
			t.Fatalf("wpsite: link themes: %v", err)
		}
	}
}

// wpConfig renders the site's wp-config.php.
func (s *Site) wpConfig(opts Options) string {
	var b strings.Builder
	b.WriteString("<?php\n// wp-config.php of a test site made by mailsvc's test/wpsite.\n")
	define := func(name, value string) {
		fmt.Fprintf(&b, "define( '%s', %s );\n", name, PHPString(value))
	}
	define("DB_NAME", s.DBName)
	define("DB_USER", "root")
	define("DB_PASSWORD", "")
	define("DB_HOST", DBAddr)
	define("DB_CHARSET", "utf8mb4")
	define("DB_COLLATE", "")
	b.WriteString("\n")
	for _, name := range SaltNames {
		define(name, s.Salts[name])
	}
	fmt.Fprintf(&b, "\n$table_prefix = %s;\n\n", PHPString(s.Prefix))
	define("WP_CONTENT_DIR", s.ContentDir)
	define("WP_CONTENT_URL", s.SiteURL+"/wp-content")
	if opts.URLConstants {
		define("WP_SITEURL", s.SiteURL)
		define("WP_HOME", s.SiteURL)
	}
	if opts.EnvironmentType != "" {
		define("WP_ENVIRONMENT_TYPE", opts.EnvironmentType)
	}
	b.WriteString(`define( 'WP_DEBUG', false );
define( 'DISABLE_WP_CRON', true );
define( 'AUTOMATIC_UPDATER_DISABLED', true );
define( 'WP_HTTP_BLOCK_EXTERNAL', true );
define( 'WP_DISABLE_FATAL_ERROR_HANDLER', true );
`)
	if opts.ExtraConfig != "" {
		b.WriteString("\n// Options.ExtraConfig\n")
		b.WriteString(strings.TrimPrefix(strings.TrimSpace(opts.ExtraConfig), "<?php"))
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "\nif ( ! defined( 'ABSPATH' ) ) {\n\tdefine( 'ABSPATH', %s );\n}\nrequire_once ABSPATH . 'wp-settings.php';\n", PHPString(WordPressDir))
	return b.String()
}

// install runs WordPress's installer and sets the site URL and permalinks.
func (s *Site) install(t testing.TB) {
	t.Helper()
	prelude := `define( 'WP_INSTALLING', true );
// The installer mails the new administrator; tests have no mail server.
function wp_new_blog_notification() {}
`
	code := fmt.Sprintf(`require_once ABSPATH . 'wp-admin/includes/upgrade.php';
$result = wp_install( 'mailsvc test site', %s, %s, true, '', %s );
if ( empty( $result['user_id'] ) ) {
	wpsite_fail( 'wp_install created no administrator' );
}
update_option( 'siteurl', %s );
update_option( 'home', %s );
update_option( 'permalink_structure', '/%%postname%%/' );
// WordPress regenerates the rewrite rules on the first request.
delete_option( 'rewrite_rules' );
echo (int) $result['user_id'];
`, PHPString(s.AdminLogin), PHPString(s.AdminEmail), PHPString(s.AdminPassword),
		PHPString(s.SiteURL), PHPString(s.SiteURL))
	out := s.runPHP(t, prelude, code)
	if strings.TrimSpace(out) != "1" {
		t.Fatalf("wpsite: installer returned administrator id %q, want 1", out)
	}
}
