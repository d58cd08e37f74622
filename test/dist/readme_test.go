package dist

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/systemd"
	"github.com/mailsvc/mailsvc/test/servicetest"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// rootShell is the environment of `sudo` in a fresh shell: nothing of
// mailsvc's, so every setting must come from /etc/mailsvc/mailsvc.env.
func rootShell() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=/root", "LANG=C.UTF-8"}
}

// mailsvc runs the installed binary in env and returns its output and
// exit code.
func mailsvc(env []string, args ...string) (stdout, stderr string, code int) {
	cmd := exec.Command(systemd.Executable, args...)
	cmd.Env, cmd.Dir = env, "/"
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = cmd.ProcessState.ExitCode()
	if err != nil && code == 0 {
		code = -1
	}
	return out.String(), errb.String(), code
}

// startAsTheUnitDoes runs the unit's ExecStart with the environment
// systemd gives it: the unit's Environment= and the variables of its
// EnvironmentFile=. (Without systemd running here, and as root: the
// mailsvc user cannot enter the test's temporary directories.) The
// service stops when the test ends.
func startAsTheUnitDoes(t *testing.T) *exec.Cmd {
	t.Helper()
	text, err := os.ReadFile(systemd.EnvPath)
	if err != nil {
		t.Fatal(err)
	}
	env := append(rootShell(), "MAILSVC_DATA_DIR="+systemd.StateDir)
	lines, problems := systemd.ParseEnv(string(text))
	if len(problems) > 0 {
		t.Errorf("%s: %v", systemd.EnvPath, problems)
	}
	for _, l := range lines {
		env = append(env, l.Key+"="+l.Value)
	}
	cmd := exec.Command(systemd.Executable, "serve")
	cmd.Env, cmd.Dir = env, "/"
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	serving := make(chan string, 1)
	go func() {
		var seen strings.Builder
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			seen.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "mailsvc is serving") {
				serving <- seen.String()
			}
		}
		close(serving)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	select {
	case _, ok := <-serving:
		if !ok {
			_ = cmd.Wait()
			t.Fatalf("mailsvc serve exited before serving:\n%s", logs.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("mailsvc serve did not start within 60 s:\n%s", logs.String())
	}
	return cmd
}

// readmeSteps follows the README's package steps on a WordPress site
// after `dpkg -i`, in a root shell with nothing of mailsvc's in its
// environment, and checks that they end with a `mailsvc doctor` that
// passes with no flags: every command reads /etc/mailsvc/mailsvc.env.
// The service listens on a port of its own, named where the bridge reads
// it (MAILSVC_SERVICE_URL in wp-config.php) and in the environment file
// (MAILSVC_ADDR), as docs/operations.md says for a service not on 8025.
func readmeSteps(t *testing.T) {
	serviceAddr, siteAddr := servicetest.FreeAddr(t), servicetest.FreeAddr(t)
	site := wpsite.Install(t, wpsite.Options{Prefix: "wpdist_", SiteURL: "http://" + siteAddr,
		ExtraConfig: fmt.Sprintf("define( 'MAILSVC_SERVICE_URL', 'http://%s' );\n", serviceAddr)})
	shell := rootShell()

	// sudo editor /etc/mailsvc/mailsvc.env
	env := strings.Replace(string(systemd.EnvFile()), "#MAILSVC_WP_CONFIG=/var/www/html/wp-config.php", "MAILSVC_WP_CONFIG="+site.WPConfigPath, 1)
	env = strings.Replace(env, "MAILSVC_ADDR=127.0.0.1:8025", "MAILSVC_ADDR="+serviceAddr, 1)
	if !strings.Contains(env, "MAILSVC_WP_CONFIG="+site.WPConfigPath) || !strings.Contains(env, "MAILSVC_ADDR="+serviceAddr) {
		t.Fatalf("the package's environment file changed shape:\n%s", systemd.EnvFile())
	}
	if err := os.WriteFile(systemd.EnvPath, []byte(env), 0o640); err != nil {
		t.Fatal(err)
	}

	// sudo mailsvc wp install --wp-path /var/www/html
	out, errs, code := mailsvc(shell, "wp", "install", "--wp-path", site.Dir)
	if code != 0 {
		t.Fatalf("mailsvc wp install: exit %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{"Database: migrated to schema ", "sudo systemctl enable --now mailsvc"} {
		if !strings.Contains(out, want) {
			t.Errorf("mailsvc wp install after the package does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "mailsvc serve") || strings.Contains(errs, "applied schema migration") {
		t.Errorf("mailsvc wp install after the package:\n%s%s", out, errs)
	}

	// sudo systemctl enable --now mailsvc
	startAsTheUnitDoes(t)
	// The site serves its pages (and the bridge forwards mailsvc/v1 to
	// the service); its first page load publishes its filters.
	site.StartPHPServer(t)
	site.PHP(t, `echo "the first page load runs the bridge";`)

	// sudo mailsvc doctor
	out, errs, code = mailsvc(shell, "doctor")
	if code != 0 {
		t.Fatalf("mailsvc doctor with no flags after the README's steps: exit %d\n%s%s", code, out, errs)
	}
	t.Logf("mailsvc doctor:\n%s", out)
	if !strings.Contains(out, "Answering at http://"+serviceAddr) {
		t.Errorf("the doctor did not look for the service where the bridge sends (%s):\n%s", serviceAddr, out)
	}
	if strings.Contains(out, "sqlite") {
		t.Errorf("the doctor fell back to SQLite:\n%s", out)
	}
	// mailsvc version
	if out, _, code := mailsvc(shell, "version"); code != 0 || out != "mailsvc "+version+"\n" {
		t.Errorf("mailsvc version = %q (exit %d)", out, code)
	}
}
