// Package takeover proves the WordPress takeover end to end: a real
// WordPress site (test/wpsite) with the wp_mail() bridge installed by the
// built `mailsvc wp install`, the service started against the site's
// wp-config.php, and the mail arriving at a local SMTP sink. Its benchmark
// compares the latency of wp_mail() with the bridge against WordPress's own
// wp_mail() sending through PHPMailer to the same sink.
package takeover

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/http"
	"net/mail"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binary is the mailsvc binary built once for the package.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mailsvc-takeover-")
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

// environ is the test's environment without any MAILSVC_, MAIL_SVC_ or
// WP_ variable, plus a private data directory and extra.
func environ(dir string, extra ...string) []string {
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

// service is one running `mailsvc serve`.
type service struct {
	cmd    *exec.Cmd
	base   string // http://127.0.0.1:port/wp-json/mailsvc/v1
	stdout *syncBuffer
	stderr *syncBuffer
	done   chan error
}

// startService runs `mailsvc serve` with env and waits until it serves.
func startService(t testing.TB, dir string, env []string) *service {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s := &service{stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan error, 1)}
	s.cmd = exec.Command(binary, "serve", "--addr", addr)
	s.cmd.Dir, s.cmd.Env = dir, env
	s.cmd.Stdout, s.cmd.Stderr = s.stdout, s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	s.base = "http://" + addr + "/wp-json/mailsvc/v1"
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(s.stdout.String(), "mailsvc is serving") {
		select {
		case err := <-s.done:
			t.Fatalf("mailsvc exited at start: %v\nstderr:\n%s", err, s.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("mailsvc did not start within 60s\nstderr:\n%s", s.stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Cleanup(func() { s.stop(t) })
	return s
}

// stop ends the service with SIGTERM and requires a clean exit.
func (s *service) stop(t testing.TB) {
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("mailsvc exited with %v after SIGTERM\nstderr:\n%s", err, s.stderr)
		}
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
		t.Errorf("mailsvc did not stop within 30s of SIGTERM")
	}
}

// run runs a mailsvc subcommand and returns its combined output.
func run(t testing.TB, dir string, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// call makes a REST request with Basic credentials over a proxy that
// terminated TLS, and returns the status and body.
func call(t testing.TB, method, url, body, user, pass string) (int, []byte) {
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
	req.SetBasicAuth(user, pass)
	req.Header.Set("X-Forwarded-Proto", "https")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// parsed is a message as received, taken apart.
type parsed struct {
	Header      mail.Header
	Text, HTML  string
	Attachments map[string][]byte // by file name
	Types       map[string]string // attachment content types by file name
}

// parse takes a received RFC 5322 message apart: headers, the text and
// HTML parts and the decoded attachments.
func parse(t testing.TB, data []byte) parsed {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("parse message: %v\n%s", err, data)
	}
	p := parsed{Header: m.Header, Attachments: map[string][]byte{}, Types: map[string]string{}}
	var walk func(h textproto, body io.Reader)
	walk = func(h textproto, body io.Reader) {
		ct := h.Get("Content-Type")
		if ct == "" {
			ct = "text/plain"
		}
		mt, params, err := mime.ParseMediaType(ct)
		if err != nil {
			t.Fatalf("content type %q: %v", ct, err)
		}
		if strings.HasPrefix(mt, "multipart/") {
			mr := multipart.NewReader(body, params["boundary"])
			for {
				part, err := mr.NextPart()
				if err == io.EOF {
					return
				}
				if err != nil {
					t.Fatalf("multipart: %v", err)
				}
				walk(part.Header, part)
			}
		}
		raw, err := io.ReadAll(body)
		if err != nil {
			t.Fatal(err)
		}
		if strings.EqualFold(h.Get("Content-Transfer-Encoding"), "base64") {
			raw, err = base64.StdEncoding.DecodeString(strings.Map(func(r rune) rune {
				if r == '\r' || r == '\n' {
					return -1
				}
				return r
			}, string(raw)))
			if err != nil {
				t.Fatalf("base64 part: %v", err)
			}
		} else if strings.EqualFold(h.Get("Content-Transfer-Encoding"), "quoted-printable") {
			// Parts' quoted-printable bodies are decoded by the multipart
			// reader (which drops the header); this is the top-level body.
			raw, err = io.ReadAll(quotedprintable.NewReader(bytes.NewReader(raw)))
			if err != nil {
				t.Fatalf("quoted-printable body: %v", err)
			}
		}
		_, dparams, _ := mime.ParseMediaType(h.Get("Content-Disposition"))
		name := dparams["filename"]
		if name == "" {
			name = params["name"]
		}
		switch {
		case name != "":
			p.Attachments[name] = raw
			p.Types[name] = mt
		case mt == "text/plain":
			p.Text = strings.ReplaceAll(string(raw), "\r\n", "\n")
		case mt == "text/html":
			p.HTML = strings.ReplaceAll(string(raw), "\r\n", "\n")
		}
	}
	walk(m.Header, m.Body)
	return p
}

// textproto is what parse reads headers through (mail.Header and a
// multipart part's textproto.MIMEHeader both have Get).
type textproto interface{ Get(string) string }
