package wpsite

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// serverStartTimeout bounds the wait for php -S to accept connections.
const serverStartTimeout = 30 * time.Second

// router is the php -S router script. It serves files of WordPress and of
// WP_CONTENT_DIR as they are, and sends every other request through
// WordPress's front controller (what index.php and wp-blog-header.php do)
// with the site's own wp-config.php. Other PHP entry points (wp-login.php,
// wp-admin/*.php) would load Debian's dispatcher through wp-load.php, so
// the router answers them 501.
const router = `<?php
$wpsite_path = rawurldecode( parse_url( $_SERVER['REQUEST_URI'], PHP_URL_PATH ) );
if ( str_contains( $wpsite_path, '..' ) ) {
	http_response_code( 400 );
	return true;
}
if ( str_starts_with( $wpsite_path, '/wp-content/' ) ) {
	$wpsite_file = %[1]s . substr( $wpsite_path, strlen( '/wp-content' ) );
	if ( is_file( $wpsite_file ) && ! str_ends_with( $wpsite_file, '.php' ) ) {
		$wpsite_types = array( 'css' => 'text/css', 'js' => 'application/javascript', 'json' => 'application/json', 'svg' => 'image/svg+xml', 'png' => 'image/png', 'txt' => 'text/plain' );
		$wpsite_ext = strtolower( pathinfo( $wpsite_file, PATHINFO_EXTENSION ) );
		header( 'Content-Type: ' . ( $wpsite_types[ $wpsite_ext ] ?? 'application/octet-stream' ) );
		readfile( $wpsite_file );
		return true;
	}
}
if ( '/' !== $wpsite_path && '/index.php' !== $wpsite_path ) {
	if ( str_ends_with( $wpsite_path, '.php' ) ) {
		http_response_code( 501 );
		header( 'Content-Type: text/plain' );
		echo "wpsite: only the front controller is routed, not $wpsite_path\n";
		return true;
	}
	if ( is_file( %[2]s . ltrim( $wpsite_path, '/' ) ) ) {
		return false;
	}
}
$_SERVER['SCRIPT_NAME'] = '/index.php';
$_SERVER['PHP_SELF'] = '/index.php';
$_SERVER['SCRIPT_FILENAME'] = %[2]s . 'index.php';
define( 'WP_USE_THEMES', true );
$wp_did_header = true;
require %[3]s;
wp();
require ABSPATH . WPINC . '/template-loader.php';
`

// StartPHPServer serves the site with PHP's built-in web server at the
// host and port of SiteURL (which must be http://127.0.0.1:<port> or
// similar, the default of Options.SiteURL) and returns that base URL. The
// server stops when the test ends; calling it again returns the same URL.
// REST routes work under /wp-json/ (pretty permalinks) and ?rest_route=.
func (s *Site) StartPHPServer(t testing.TB) (baseURL string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.serverURL != "" {
		return s.serverURL
	}
	u, err := url.Parse(s.SiteURL)
	if err != nil || u.Scheme != "http" || u.Port() == "" || u.Path != "" {
		t.Fatalf("wpsite: StartPHPServer needs a site URL of the form http://host:port, have %q", s.SiteURL)
	}
	routerPath := filepath.Join(s.Dir, "router.php")
	script := fmt.Sprintf(router, PHPString(s.ContentDir), PHPString(WordPressDir), PHPString(s.WPConfigPath))
	if err := os.WriteFile(routerPath, []byte(script), 0o644); err != nil {
		t.Fatalf("wpsite: write router: %v", err)
	}

	cmd := exec.Command("php", "-d", "display_errors=stderr", "-d", "log_errors=0",
		"-d", "html_errors=0", "-S", u.Host, "-t", WordPressDir, routerPath)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), "PHP_CLI_SERVER_WORKERS=4")
	// The workers are children of php -S; a process group lets cleanup
	// stop them all, and WaitDelay keeps Wait from hanging on their pipes.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	var logs lockedBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("wpsite: start php -S: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
		if t.Failed() {
			t.Logf("wpsite: php -S log:\n%s", logs.String())
		}
	})

	awaitListening(t, u.Host, &logs, exited)
	s.serverURL = s.SiteURL
	return s.serverURL
}

// awaitListening waits until the php -S started with its output in logs
// says it listens on addr. The answer of whatever listens at addr is not
// enough: when another server took the port first, php -S exits with
// "Failed to listen" and that other server would answer in its place.
// exited is closed when the process ends.
func awaitListening(t testing.TB, addr string, logs *lockedBuffer, exited <-chan struct{}) {
	t.Helper()
	started := "Development Server (http://" + addr + ") started"
	deadline := time.After(serverStartTimeout)
	for !strings.Contains(logs.String(), started) {
		select {
		case <-exited:
			t.Fatalf("wpsite: php -S on %s exited:\n%s", addr, logs.String())
		case <-deadline:
			t.Fatalf("wpsite: php -S did not listen on %s within %s:\n%s", addr, serverStartTimeout, logs.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for the server's output goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write implements io.Writer.
func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
