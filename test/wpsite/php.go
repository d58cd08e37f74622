package wpsite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// phpTimeout bounds one php-cli run; it only stops a hung process.
const phpTimeout = 2 * time.Minute

// Markers the bootstrap writes to stderr.
const (
	markerError  = "WPSITE_PHP_ERROR: "
	markerNotice = "WPSITE_PHP_NOTICE: "
	markerFail   = "WPSITE_FAIL: "
)

// PHPString returns s as a PHP single-quoted string literal, so that any
// Go string can be put into PHP code: only \ and ' are escaped.
func PHPString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	return "'" + r.Replace(s) + "'"
}

// PHP runs code (PHP statements, without "<?php") in a fresh php-cli
// process after WordPress has been loaded through the site's wp-config.php,
// as a CLI request with $_SERVER describing a GET of the site's home from
// 127.0.0.1. It returns what the code printed. The test fails on a fatal
// error, an uncaught exception, a warning, a non-zero exit, or a call to
// wpsite_fail($message), a function the code may use to report a failure.
// Notices and deprecations are logged, not failures.
func (s *Site) PHP(t testing.TB, code string) string {
	t.Helper()
	return s.runPHP(t, "", code)
}

// PHPWithCookie is PHP with $_COOKIE[LOGGED_IN_COOKIE] set to the cookie's
// value (decoded as PHP decodes a Cookie header) before WordPress loads,
// so WordPress determines the current user from it as on a real request.
func (s *Site) PHPWithCookie(t testing.TB, cookie string, code string) string {
	t.Helper()
	value, err := url.PathUnescape(cookie)
	if err != nil {
		t.Fatalf("wpsite: cookie value is not percent-encoded correctly: %v", err)
	}
	// LOGGED_IN_COOKIE is defined while wp-settings.php runs, before
	// plugins_loaded; WordPress determines the current user later, in
	// WP::init. A hook registered through the pre-initialised $wp_filter
	// puts the cookie in place in between, as a browser request would have.
	prelude := fmt.Sprintf(`$wp_filter['plugins_loaded'][-1000][] = array(
	'function'      => function () {
		$_COOKIE[ LOGGED_IN_COOKIE ] = %s;
	},
	'accepted_args' => 0,
);
`, PHPString(value))
	return s.runPHP(t, prelude, code)
}

// bootstrap returns the PHP file that loads WordPress and runs code.
func (s *Site) bootstrap(prelude, code string) string {
	u, _ := url.Parse(s.SiteURL)
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	var b strings.Builder
	b.WriteString(`<?php
error_reporting( E_ALL );
set_error_handler( function ( $no, $msg, $file, $line ) {
	if ( ! ( error_reporting() & $no ) ) {
		return false;
	}
	$serious = E_WARNING | E_USER_ERROR | E_USER_WARNING | E_RECOVERABLE_ERROR | E_CORE_WARNING | E_COMPILE_WARNING;
	fwrite( STDERR, ( ( $no & $serious ) ? '` + markerError + `' : '` + markerNotice + `' ) . "$msg in $file:$line\n" );
	return true;
} );
set_exception_handler( function ( $e ) {
	fwrite( STDERR, '` + markerError + `uncaught ' . get_class( $e ) . ': ' . $e->getMessage() . ' in ' . $e->getFile() . ':' . $e->getLine() . "\n" );
	exit( 255 );
} );
register_shutdown_function( function () {
	$e = error_get_last();
	if ( $e && ( $e['type'] & ( E_ERROR | E_PARSE | E_CORE_ERROR | E_COMPILE_ERROR ) ) ) {
		fwrite( STDERR, '` + markerError + `fatal: ' . $e['message'] . ' in ' . $e['file'] . ':' . $e['line'] . "\n" );
	}
} );
function wpsite_fail( $msg ) {
	fwrite( STDERR, '` + markerFail + `' . $msg . "\n" );
	exit( 3 );
}
`)
	fmt.Fprintf(&b, `$_SERVER['HTTP_HOST'] = %s;
$_SERVER['SERVER_NAME'] = %s;
$_SERVER['SERVER_PORT'] = %s;
$_SERVER['REQUEST_URI'] = '/';
$_SERVER['REQUEST_METHOD'] = 'GET';
$_SERVER['SCRIPT_NAME'] = '/index.php';
$_SERVER['PHP_SELF'] = '/index.php';
$_SERVER['REMOTE_ADDR'] = '127.0.0.1';
$_SERVER['HTTP_USER_AGENT'] = 'mailsvc-wpsite';
`, PHPString(u.Host), PHPString(u.Hostname()), PHPString(port))
	if u.Scheme == "https" {
		b.WriteString("$_SERVER['HTTPS'] = 'on';\n")
	}
	b.WriteString(prelude)
	fmt.Fprintf(&b, "require %s;\n", PHPString(s.WPConfigPath))
	b.WriteString("// ---- test code ----\n")
	b.WriteString(strings.TrimPrefix(strings.TrimSpace(code), "<?php"))
	b.WriteString("\n")
	return b.String()
}

// runPHP writes the bootstrap with prelude (PHP run before WordPress
// loads) and code, runs it, and returns stdout.
func (s *Site) runPHP(t testing.TB, prelude, code string) string {
	t.Helper()
	f, err := os.CreateTemp(s.Dir, "run-*.php")
	if err != nil {
		t.Fatalf("wpsite: create PHP script: %v", err)
	}
	script := f.Name()
	defer os.Remove(script)
	if _, err := f.WriteString(s.bootstrap(prelude, code)); err != nil {
		f.Close()
		t.Fatalf("wpsite: write PHP script: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("wpsite: write PHP script: %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), phpTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "php",
		"-d", "display_errors=stderr", "-d", "log_errors=0", "-d", "html_errors=0",
		"-d", "memory_limit=512M", "-f", script)
	cmd.Dir = filepath.Dir(s.WPConfigPath)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()

	var problems, notices []string
	for _, line := range strings.Split(stderr.String(), "\n") {
		switch {
		case strings.HasPrefix(line, markerNotice):
			notices = append(notices, strings.TrimPrefix(line, markerNotice))
		case strings.TrimSpace(line) != "":
			problems = append(problems, line)
		}
	}
	if len(notices) > 0 {
		t.Logf("wpsite: PHP notices:\n%s", strings.Join(notices, "\n"))
	}
	var exitErr *exec.ExitError
	switch {
	case runErr != nil && !errors.As(runErr, &exitErr):
		t.Fatalf("wpsite: run php: %v", runErr)
	case runErr != nil:
		t.Fatalf("wpsite: php exited with %d:\n%s\nstdout:\n%s\ncode:\n%s",
			exitErr.ExitCode(), strings.Join(problems, "\n"), stdout.String(), code)
	case len(problems) > 0:
		t.Fatalf("wpsite: PHP reported errors:\n%s\ncode:\n%s", strings.Join(problems, "\n"), code)
	}
	return stdout.String()
}
