// Package servicetest runs the built mailsvc binary for integration tests,
// as a user would: built once per test binary, started as a process with
// its own data directory and environment, called over HTTP, stopped with
// SIGTERM (or killed).
package servicetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
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

// AllowCustomEndpoints is the environment entry that lets connections
// point their endpoint settings (base_url, oauth_base_url, SES
// custom_endpoint and imds_endpoint) at the local fakes of test/fakes
// instead of the providers' own hosts.
const AllowCustomEndpoints = "MAILSVC_ALLOW_CUSTOM_ENDPOINTS=true"

// Binary is the path of the mailsvc binary that Main built.
var Binary string

// Main builds the mailsvc binary, runs the package's tests and removes the
// binary. Call it from TestMain.
func Main(m *testing.M) { MainPackage(m, "github.com/mailsvc/mailsvc/cmd/mailsvc") }

// MainPackage is Main for another main package: a custom build of mailsvc
// (cli.Main with other drivers).
func MainPackage(m *testing.M, pkg string) {
	dir, err := os.MkdirTemp("", "mailsvc-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	Binary = filepath.Join(dir, "mailsvc")
	build := exec.Command("go", "build", "-o", Binary, pkg)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build mailsvc:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Environ returns the test's environment without any MAILSVC_, MAIL_SVC_
// or WP_ variable (so nothing leaks in from the developer's shell), with
// MAILSVC_DATA_DIR in dir and MAILSVC_ENV_FILE empty (the host's
// /etc/mailsvc/mailsvc.env is not read), and extra appended.
func Environ(dir string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "MAILSVC_") || strings.HasPrefix(kv, "MAIL_SVC_") || strings.HasPrefix(kv, "WP_") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "MAILSVC_DATA_DIR="+filepath.Join(dir, "data"), "MAILSVC_ENV_FILE=")
	return append(env, extra...)
}

// Buffer is a bytes.Buffer safe for a process writing while a test reads.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write implements io.Writer.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Service is one running `mailsvc serve`.
type Service struct {
	Dir    string   // working directory
	Env    []string // its whole environment
	Addr   string   // host:port of the REST API
	Base   string   // http://host:port/wp-json/mailsvc/v1
	Stdout *Buffer
	Stderr *Buffer
	cmd    *exec.Cmd
	exited chan struct{} // closed when the process has exited
	err    error         // its Wait error, set before exited closes
}

// FreeAddr returns a loopback address with a port free at the time of the call.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Start runs `mailsvc serve` in dir with Environ(dir, extra...) and waits
// until it prints that it is serving. The service is stopped when the
// test ends.
func Start(t testing.TB, dir string, extra ...string) *Service {
	t.Helper()
	return StartEnv(t, dir, Environ(dir, extra...))
}

// StartEnv is Start with the whole environment given.
func StartEnv(t testing.TB, dir string, env []string) *Service {
	t.Helper()
	addr := FreeAddr(t)
	s := &Service{Dir: dir, Env: env, Addr: addr, Base: "http://" + addr + "/wp-json/mailsvc/v1",
		Stdout: &Buffer{}, Stderr: &Buffer{}, exited: make(chan struct{})}
	s.cmd = exec.Command(Binary, "serve", "--addr", addr)
	s.cmd.Dir, s.cmd.Env = dir, env
	s.cmd.Stdout, s.cmd.Stderr = s.Stdout, s.Stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.err = s.cmd.Wait(); close(s.exited) }()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(s.Stdout.String(), "mailsvc is serving") {
		select {
		case <-s.exited:
			t.Fatalf("mailsvc exited at start: %v\nstdout:\n%s\nstderr:\n%s", s.err, s.Stdout, s.Stderr)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("mailsvc did not start within 60s\nstderr:\n%s", s.Stderr)
		}
	}
	t.Cleanup(func() { s.Stop(t) })
	return s
}

// Stop sends SIGTERM and requires a clean exit with the shutdown logged.
// Stopping a stopped service does nothing.
func (s *Service) Stop(t testing.TB) {
	if !s.Running() {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
		if s.err != nil {
			t.Errorf("mailsvc exited with %v after SIGTERM\nstderr:\n%s", s.err, s.Stderr)
		}
		if !strings.Contains(s.Stderr.String(), "stopped") {
			t.Errorf("no graceful shutdown logged:\n%s", s.Stderr)
		}
	case <-time.After(60 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
		t.Errorf("mailsvc did not stop within 60s of SIGTERM\nstderr:\n%s", s.Stderr)
	}
}

// Wait waits up to timeout for the service to exit by itself and returns
// its exit error (nil for exit code 0); it fails the test when the service
// is still running then.
func (s *Service) Wait(t testing.TB, timeout time.Duration) error {
	t.Helper()
	select {
	case <-s.exited:
		return s.err
	case <-time.After(timeout):
		t.Fatalf("mailsvc still running after %s\nstderr:\n%s", timeout, s.Stderr)
		return nil
	}
}

// Pid returns the process id of the service.
func (s *Service) Pid() int { return s.cmd.Process.Pid }

// Kill ends the service with SIGKILL, as a crash would.
func (s *Service) Kill() {
	if !s.Running() {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.exited
}

// Running reports whether the process has not exited.
func (s *Service) Running() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// firstRunPassword matches the application password a standalone first
// start prints on a line of its own.
var firstRunPassword = regexp.MustCompile(`(?m)^\s+([A-Za-z0-9]{24})\s*$`)

// AdminPassword returns the application password of the administrator a
// standalone first start created, or "" when it printed none.
func (s *Service) AdminPassword() string {
	if m := firstRunPassword.FindStringSubmatch(s.Stdout.String()); m != nil {
		return m[1]
	}
	return ""
}

// MustAdminPassword is AdminPassword, failing the test when the first
// start printed no password.
func (s *Service) MustAdminPassword(tb testing.TB) string {
	tb.Helper()
	pw := s.AdminPassword()
	if pw == "" {
		tb.Fatalf("no first-run password:\n%s", s.Stdout)
	}
	return pw
}

// Result is what a finished command printed and its exit code.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// LastLine returns the last non-empty line of standard output.
func (r Result) LastLine() string {
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// Run runs a mailsvc subcommand in dir with env, stdin as its input.
func Run(dir string, env []string, stdin string, args ...string) Result {
	cmd := exec.Command(Binary, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		code = -1
		errb.WriteString(err.Error())
	}
	return Result{Stdout: out.String(), Stderr: errb.String(), Code: code}
}

// Run runs a mailsvc subcommand with the service's directory and environment.
func (s *Service) Run(stdin string, args ...string) Result {
	return Run(s.Dir, s.Env, stdin, args...)
}

// Response is an HTTP reply.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Code returns the spec error code of an error response, or "".
func (r Response) Code() string {
	var e struct{ Code string }
	_ = json.Unmarshal(r.Body, &e)
	return e.Code
}

// JSON decodes the body into v, failing the test when it cannot.
func (r Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %d %s: %v", r.Status, r.Body, err)
	}
}

// Call makes a request with an optional JSON body; auth, when set, adds
// credentials or headers.
func Call(t testing.TB, method, url, body string, auth func(*http.Request)) Response {
	t.Helper()
	contentType := ""
	if body != "" {
		contentType = "application/json"
	}
	return send(t, http.DefaultClient, method, url, contentType, body, auth)
}

// noFollow is a client that returns redirects instead of following them.
var noFollow = &http.Client{
	Timeout:       30 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// Hop makes one request without following a redirect (its Location is in
// the Header), with an optional body of contentType.
func Hop(t testing.TB, method, url, contentType, body string, auth func(*http.Request)) Response {
	t.Helper()
	return send(t, noFollow, method, url, contentType, body, auth)
}

// send makes a request with client: an optional body of contentType;
// auth, when set, adds credentials or headers.
func send(t testing.TB, client *http.Client, method, url, contentType, body string, auth func(*http.Request)) Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if auth != nil {
		auth(req)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return Response{resp.StatusCode, resp.Header, b}
}

// Basic returns request credentials for HTTP Basic authentication.
func Basic(user, pass string) func(*http.Request) {
	return func(r *http.Request) { r.SetBasicAuth(user, pass) }
}
