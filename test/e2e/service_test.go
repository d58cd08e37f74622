// Package e2e drives the built mailsvc binary as a user would: started as a
// process, configured through its environment, called over HTTP.
package e2e

import (
	"bytes"
	"encoding/json"
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

// binary is the mailsvc binary built once for the package.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mailsvc-e2e-")
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

// service is one running `mailsvc serve`.
type service struct {
	t      *testing.T
	cmd    *exec.Cmd
	dir    string
	env    []string
	Base   string // http://host:port/wp-json/mailsvc/v1
	stdout *syncBuffer
	stderr *syncBuffer
	done   chan error
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

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// baseEnv is the environment of every command: the test's own, less any
// MAILSVC_ or WordPress variable that would leak in.
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

// startService starts `mailsvc serve` in dir with extra environment and
// waits until it answers HTTP.
func startService(t *testing.T, dir string, extra ...string) *service {
	t.Helper()
	addr := freeAddr(t)
	s := &service{t: t, dir: dir, env: baseEnv(dir, extra...), stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan error, 1)}
	s.cmd = exec.Command(binary, "serve", "--addr", addr)
	s.cmd.Dir = dir
	s.cmd.Env = s.env
	s.cmd.Stdout, s.cmd.Stderr = s.stdout, s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	s.Base = "http://" + addr + "/wp-json/mailsvc/v1"
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-s.done:
			t.Fatalf("mailsvc exited at start: %v\nstdout:\n%s\nstderr:\n%s", err, s.stdout, s.stderr)
		default:
		}
		if strings.Contains(s.stdout.String(), "mailsvc is serving") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("mailsvc did not listen within 30s\nstderr:\n%s", s.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Cleanup(func() { s.stop() })
	return s
}

// stop sends SIGTERM and requires a clean exit.
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
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		s.t.Errorf("mailsvc did not stop within 20s of SIGTERM")
	}
}

// run runs a mailsvc subcommand with the service's environment.
func (s *service) run(args ...string) (string, error) {
	cmd := exec.Command(binary, args...)
	cmd.Dir, cmd.Env = s.dir, s.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		return out.String() + errb.String(), err
	}
	return out.String(), nil
}

// response is an HTTP reply.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r response) code() string {
	var e struct{ Code string }
	_ = json.Unmarshal(r.Body, &e)
	return e.Code
}

// call makes a request; auth mutates it (credentials, headers).
func call(t *testing.T, method, url string, body string, auth func(*http.Request)) response {
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
	return response{resp.StatusCode, resp.Header, b}
}

func basic(user, pass string) func(*http.Request) {
	return func(r *http.Request) { r.SetBasicAuth(user, pass) }
}

var firstRunPassword = regexp.MustCompile(`(?m)^\s+([A-Za-z0-9]{24})\s*$`)
