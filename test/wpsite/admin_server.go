package wpsite

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// adminRouterHead is the start of a wp-admin router: a path with ".." is
// refused, load-styles.php and load-scripts.php (which need no
// configuration) and static files (CSS, JS) are served as they are. %[1]s
// is WordPress's directory.
const adminRouterHead = `<?php
$path = rawurldecode( parse_url( $_SERVER['REQUEST_URI'], PHP_URL_PATH ) );
if ( str_contains( $path, '..' ) ) { http_response_code( 400 ); return true; }
if ( in_array( $path, array( '/wp-admin/load-styles.php', '/wp-admin/load-scripts.php' ), true ) ) { return false; }
if ( ! str_ends_with( $path, '.php' ) && '/' !== $path && is_file( %[1]s . ltrim( $path, '/' ) ) ) { return false; }
`

// adminRouterTail is the end of a wp-admin router: everything else goes
// to the front controller. %[2]s is the path of wp-config.php.
const adminRouterTail = `$_SERVER['SCRIPT_NAME'] = $_SERVER['PHP_SELF'] = '/index.php';
define( 'WP_USE_THEMES', true );
require %[2]s;
wp();
require ABSPATH . WPINC . '/template-loader.php';
`

// ServeAdmin serves WordPress with wp-admin through php -S at addr (the
// PHP-FPM behind the web server of a real deployment) until the test ends,
// and waits until it answers. wpsite's own router (StartPHPServer) serves
// only the front controller: wp-admin/admin.php would load Debian's
// dispatcher through wp-load.php. routes is the PHP that serves the admin
// entry points the test needs, each block ending in "return true;": it
// boots WordPress with "require %[2]s;" (the path of configPath) and runs
// the entry point's source without its wp-load.php line; %[1]s is
// WordPress's directory. Static files and load-styles.php/load-scripts.php
// are served as they are, every other request goes to the front
// controller. dir holds the router script; env is added to the server's
// environment, for wp-config.php.
func ServeAdmin(t testing.TB, dir, configPath, addr, routes string, env ...string) {
	t.Helper()
	routerPath := filepath.Join(dir, "admin-router.php")
	script := fmt.Sprintf(adminRouterHead+routes+adminRouterTail, PHPString(WordPressDir), PHPString(configPath))
	if err := os.WriteFile(routerPath, []byte(script), 0o644); err != nil {
		t.Fatalf("wpsite: write admin router: %v", err)
	}
	cmd := exec.Command("php", "-d", "display_errors=stderr", "-d", "log_errors=0", "-d", "html_errors=0",
		"-S", addr, "-t", WordPressDir, routerPath)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "PHP_CLI_SERVER_WORKERS=4"), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	logs := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("php -S: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		<-exited
		if t.Failed() {
			t.Logf("php -S output:\n%s", logs)
		}
	})
	awaitListening(t, addr, logs, exited)
	deadline := time.Now().Add(serverStartTimeout)
	for {
		resp, err := http.Get("http://" + addr + "/wp-admin/load-styles.php")
		if err == nil {
			resp.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("php -S did not answer at %s: %v\n%s", addr, err, logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
