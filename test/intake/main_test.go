// Package intake tests the ways mail enters mailsvc other than the
// WordPress bridge — `mailsvc sendmail` and the SMTP submission listener —
// and the site tools route GET /tools/plugins, all through the built
// binary.
package intake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binary is the mailsvc binary built once for the package.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mailsvc-intake-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "mailsvc")
	build := exec.Command("go", "build", "-o", binary, "github.com/mailsvc/mailsvc/cmd/mailsvc")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build mailsvc:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// service is one running `mailsvc serve`.
type service struct {
	t      *testing.T
	cmd    *exec.Cmd
	dir    string
	env    []string
	Base   string
	stdout *syncBuffer
	stderr *syncBuffer
	done   chan error
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// baseEnv is the test's environment less any MAILSVC_, MAIL_SVC_ or WP_
// variable, with a data directory in dir.
func baseEnv(dir string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "MAILSVC_") || strings.HasPrefix(kv, "MAIL_SVC_") || strings.HasPrefix(kv, "WP_") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "MAILSVC_DATA_DIR="+filepath.Join(dir, "data"))
	return append(env, extra...)
}

// startService starts `mailsvc serve` and waits until it serves HTTP.
func startService(t *testing.T, dir string, extra ...string) *service {
	t.Helper()
	addr := freeAddr(t)
	s := &service{t: t, dir: dir, env: baseEnv(dir, extra...), stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan error, 1)}
	s.cmd = exec.Command(binary, "serve", "--addr", addr)
	s.cmd.Dir, s.cmd.Env = dir, s.env
	s.cmd.Stdout, s.cmd.Stderr = s.stdout, s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	s.Base = "http://" + addr + "/wp-json/mailsvc/v1"
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(s.stdout.String(), "mailsvc is serving") {
		select {
		case err := <-s.done:
			t.Fatalf("mailsvc exited at start: %v\nstdout:\n%s\nstderr:\n%s", err, s.stdout, s.stderr)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("mailsvc did not listen within 60s\nstderr:\n%s", s.stderr)
		}
	}
	t.Cleanup(s.stop)
	return s
}

// stop sends SIGTERM and requires a clean, logged exit.
func (s *service) stop() {
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		if err != nil {
			s.t.Errorf("mailsvc exited with %v after SIGTERM\nstderr:\n%s", err, s.stderr)
		}
		if !strings.Contains(s.stderr.String(), "stopped") {
			s.t.Errorf("no graceful shutdown logged:\n%s", s.stderr)
		}
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		s.t.Errorf("mailsvc did not stop within 30s of SIGTERM")
	}
}

// run runs a mailsvc subcommand with the service's environment and stdin,
// returning stdout, stderr and the exit status.
func (s *service) run(stdin string, args ...string) (string, string, int) {
	return runWith(s.dir, s.env, stdin, args...)
}

func runWith(dir string, env []string, stdin string, args ...string) (string, string, int) {
	cmd := exec.Command(binary, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		code = -1
	}
	return out.String(), errb.String(), code
}

var firstRunPassword = regexp.MustCompile(`(?m)^\s+([A-Za-z0-9]{24})\s*$`)

// adminPassword returns the application password that the first start
// printed for "admin".
func (s *service) adminPassword() string {
	s.t.Helper()
	m := firstRunPassword.FindStringSubmatch(s.stdout.String())
	if m == nil {
		s.t.Fatalf("no first-run password:\n%s", s.stdout)
	}
	return m[1]
}

// addUser creates a standalone user with a role and returns its
// application password.
func (s *service) addUser(login, role string) string {
	s.t.Helper()
	out, errOut, code := s.run("", "users", "add", login, "--role", role)
	m := regexp.MustCompile(`(?m)^([A-Za-z0-9]{24})$`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		s.t.Fatalf("users add %s: %d %s %s", login, code, out, errOut)
	}
	return m[1]
}

type response struct {
	Status int
	Body   []byte
}

func basic(user, pass string) func(*http.Request) {
	return func(r *http.Request) { r.SetBasicAuth(user, pass) }
}

func call(t *testing.T, method, url, body string, auth func(*http.Request)) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth != nil {
		auth(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{resp.StatusCode, b}
}

// callJSON makes a request that must answer want and decodes the body.
func callJSON(t *testing.T, method, url, body string, auth func(*http.Request), want int, v any) {
	t.Helper()
	r := call(t, method, url, body, auth)
	if r.Status != want {
		t.Fatalf("%s %s: %d %s", method, url, r.Status, r.Body)
	}
	if v != nil {
		if err := json.Unmarshal(r.Body, v); err != nil {
			t.Fatalf("%s %s: %v in %s", method, url, err, r.Body)
		}
	}
}

// useSink creates an smtp connection to the sink at host:port and makes
// it the default connection.
func useSink(t *testing.T, s *service, admin func(*http.Request), host string, port int) int64 {
	t.Helper()
	var c struct{ ID int64 }
	body := fmt.Sprintf(`{"name":"sink","driver":"smtp","settings":{"host":%q,"port":%d,"encryption":"none","auth":false}}`, host, port)
	callJSON(t, "POST", s.Base+"/connections", body, admin, 201, &c)
	callJSON(t, "PUT", s.Base+"/settings", fmt.Sprintf(`{"default_connection_id":%d,"from_email":"default@example.org","from_name":"Default Sender"}`, c.ID), admin, 200, nil)
	return c.ID
}

// logDetail is GET /logs/{id}.
type logDetail struct {
	ID      int64  `json:"id"`
	Status  string `json:"status"`
	Source  string `json:"source"`
	Message struct {
		From    address   `json:"from"`
		To      []address `json:"to"`
		Cc      []address `json:"cc"`
		Bcc     []address `json:"bcc"`
		Subject string    `json:"subject"`
		Text    string    `json:"text"`
		HTML    string    `json:"html"`
		Headers []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"headers"`
	} `json:"message"`
	Attachments []struct {
		Filename    string `json:"filename"`
		ContentType string `json:"content_type"`
		Size        int    `json:"size"`
		Inline      bool   `json:"inline"`
		ContentID   string `json:"content_id"`
	} `json:"attachments"`
}

type address struct {
	Name  string `json:"name"`
	Email string `json:"email"`
}

// findLog returns the log whose subject is subject.
func findLog(t *testing.T, s *service, admin func(*http.Request), subject string) logDetail {
	t.Helper()
	var list []struct {
		ID int64 `json:"id"`
	}
	callJSON(t, "GET", s.Base+"/logs?search="+url.QueryEscape(subject), "", admin, 200, &list)
	if len(list) != 1 {
		t.Fatalf("logs with subject %q: %d", subject, len(list))
	}
	var d logDetail
	callJSON(t, "GET", fmt.Sprintf("%s/logs/%d", s.Base, list[0].ID), "", admin, 200, &d)
	return d
}

func emails(list []address) []string {
	out := []string{}
	for _, a := range list {
		out = append(out, a.Email)
	}
	return out
}
