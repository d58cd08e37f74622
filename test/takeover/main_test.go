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
	"net/http"
	"net/mail"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/test/servicetest"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

// environ is servicetest.Environ: the test's environment without any
// MAILSVC_, MAIL_SVC_ or WP_ variable, a private data directory, and extra.
var environ = servicetest.Environ

// run runs a mailsvc subcommand and returns its combined output, and an
// error when it exits non-zero.
func run(t testing.TB, dir string, env []string, args ...string) (string, error) {
	t.Helper()
	r := servicetest.Run(dir, env, "", args...)
	if r.Code != 0 {
		return r.Stdout + r.Stderr, fmt.Errorf("mailsvc %s: exit %d", strings.Join(args, " "), r.Code)
	}
	return r.Stdout + r.Stderr, nil
}

// call makes a REST request with Basic credentials over a proxy that
// terminated TLS, and returns the status and body.
func call(t testing.TB, method, url, body, user, pass string) (int, []byte) {
	t.Helper()
	r := servicetest.Call(t, method, url, body, func(req *http.Request) {
		req.SetBasicAuth(user, pass)
		req.Header.Set("X-Forwarded-Proto", "https")
	})
	return r.Status, r.Body
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
