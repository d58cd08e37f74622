// Package takeover proves the WordPress takeover end to end: a real
// WordPress site (test/wpsite) with the wp_mail() bridge installed by the
// built `mailsvc wp install`, the service started against the site's
// wp-config.php, and the mail arriving at a local SMTP sink. Its benchmark
// compares the latency of wp_mail() with the bridge against WordPress's own
// wp_mail() sending through PHPMailer to the same sink.
package takeover

import (
	"bytes"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/http"
	"net/mail"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/wordpress/bridge"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
	"github.com/mailsvc/mailsvc/test/wpsite"
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

// callWant is call that requires the status want and, when v is not nil,
// decodes the body into v; it returns the body.
func callWant(t testing.TB, method, url, body, user, pass string, want int, v any) []byte {
	t.Helper()
	status, b := call(t, method, url, body, user, pass)
	if status != want {
		t.Fatalf("%s %s: %d %s, want %d", method, url, status, b, want)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s %s: %v", method, url, err)
		}
	}
	return b
}

// deliverToSink creates the SMTP connection "sink" to sink (no TLS, no
// login) through the service at base, as user with the application
// password pass, and makes it the default; settings (JSON members, or "")
// are saved with it. It returns the connection's id.
func deliverToSink(t testing.TB, base, user, pass string, sink *smtpsink.Sink, settings string) int64 {
	t.Helper()
	var conn struct{ ID int64 }
	callWant(t, "POST", base+"/connections", fmt.Sprintf(`{"name":"sink","driver":"smtp","settings":{"host":%q,"port":%d,"encryption":"none","auth":false}}`,
		sink.Host(), sink.Port()), user, pass, 201, &conn)
	if conn.ID == 0 {
		t.Fatal("create connection: no id")
	}
	if settings != "" {
		settings = "," + settings
	}
	callWant(t, "PUT", base+"/settings", fmt.Sprintf(`{"default_connection_id":%d%s}`, conn.ID, settings), user, pass, 200, nil)
	return conn.ID
}

// queryStrings runs query on db and returns the one string column of its
// rows.
func queryStrings(t testing.TB, db *sql.DB, query string, args ...any) []string {
	t.Helper()
	rows, err := db.Query(query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// installTakeoverSite installs a WordPress site with the table prefix
// prefix and the bridge with the built `mailsvc wp install`, in a new
// directory it returns with the site. It skips in -short mode.
func installTakeoverSite(t *testing.T, prefix string) (*wpsite.Site, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	site := wpsite.Install(t, wpsite.Options{Prefix: prefix})
	dir := t.TempDir()
	if out, err := run(t, dir, environ(dir), "wp", "install", "--wp-path", site.Dir); err != nil {
		t.Fatalf("wp install: %v\n%s", err, out)
	}
	return site, dir
}

// serveSite creates the administrator's application password named
// appPWName and starts `mailsvc serve` in dir against the site's
// wp-config.php behind a trusted proxy (127.0.0.1). It returns the
// service and the password.
func serveSite(t *testing.T, site *wpsite.Site, dir, appPWName string) (*servicetest.Service, string) {
	t.Helper()
	appPW := site.CreateApplicationPassword(t, site.AdminLogin, appPWName)
	return servicetest.StartEnv(t, dir, environ(dir, "MAILSVC_WP_CONFIG="+site.WPConfigPath, "MAILSVC_TRUSTED_PROXIES=127.0.0.1")), appPW
}

// installBridgeSite installs a WordPress site with opts and the bridge's
// files as the bridge package writes them. It skips in -short mode.
func installBridgeSite(t *testing.T, opts wpsite.Options) *wpsite.Site {
	t.Helper()
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	site := wpsite.Install(t, opts)
	if _, err := bridge.Install(site.ContentDir); err != nil {
		t.Fatal(err)
	}
	return site
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
