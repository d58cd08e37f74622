package smtp

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	gomail "github.com/wneessen/go-mail"
	mlog "github.com/wneessen/go-mail/log"
	gosmtp "github.com/wneessen/go-mail/smtp"
)

// session is one open, authenticated SMTP connection. It is used by one
// Send at a time.
type session struct {
	client   *gomail.Client
	smtp     *gosmtp.Client // the session's protocol client, dialled by client
	connMu   sync.Mutex
	conn     net.Conn // the raw connection, closed to abort or discard
	rec      *recorder
	timeout  time.Duration
	lastUsed time.Time
	// What the server offered in its EHLO reply, read once per session.
	pipelining, chunking, eightBitMIME, smtpUTF8 bool
}

// learnExtensions reads the extensions the server offered that shape a
// mail transaction.
func (s *session) learnExtensions() {
	s.pipelining, _ = s.smtp.Extension("PIPELINING")
	s.chunking, _ = s.smtp.Extension("CHUNKING")
	s.eightBitMIME, _ = s.smtp.Extension("8BITMIME")
	s.smtpUTF8, _ = s.smtp.Extension("SMTPUTF8")
}

// setDeadline bounds the next exchange by the session's timeout.
func (s *session) setDeadline() {
	if c := s.rawConn(); c != nil {
		_ = c.SetDeadline(time.Now().Add(s.timeout))
	}
}

// send runs one mail transaction of l and returns the server's reply to
// DATA (without the 250 code) and the recipients it refused (see
// sendPipelined). Cancelling ctx aborts the connection.
func (s *session) send(ctx context.Context, l *letter) (string, rejection, error) {
	if err := ctx.Err(); err != nil {
		return "", nil, err
	}
	stop := context.AfterFunc(ctx, s.abort)
	defer stop()
	var (
		resp     string
		rejected rejection
		err      error
	)
	switch {
	case s.pipelining && s.rec == nil && s.chunkable(l):
		resp, err = s.sendChunked(l)
	case s.pipelining && s.rec == nil:
		resp, rejected, err = s.sendPipelined(l)
	default:
		resp, rejected, err = s.sendStepwise(l)
	}
	for i, r := range rejected {
		s.rec.note("recipient %s refused: %v", l.rcpts[i], r)
	}
	if err != nil {
		s.rec.note("error: %v", err)
		if ctxErr := ctx.Err(); ctxErr != nil {
			return "", rejected, fmt.Errorf("%w (%w)", err, ctxErr)
		}
		return "", rejected, err
	}
	s.rec.note("message accepted: 250 %s", resp)
	return resp, rejected, nil
}

// setConn records the raw connection once dialled.
func (s *session) setConn(c net.Conn) {
	s.connMu.Lock()
	s.conn = c
	s.connMu.Unlock()
}

func (s *session) rawConn() net.Conn {
	s.connMu.Lock()
	defer s.connMu.Unlock()
	return s.conn
}

// abort closes the raw connection so that a blocked command fails at once.
func (s *session) abort() {
	if c := s.rawConn(); c != nil {
		_ = c.Close()
	}
}

// quit ends the session politely with QUIT, bounded by the timeout.
func (s *session) quit() {
	if c := s.rawConn(); c != nil {
		_ = c.SetDeadline(time.Now().Add(s.timeout))
	}
	_ = s.client.CloseWithSMTPClient(s.smtp)
	s.abort()
}

// discard drops a broken session without a goodbye.
func (s *session) discard() { s.abort() }

// recorder is a go-mail logger that keeps the SMTP conversation of a
// session for its transcript, with credentials masked.
type recorder struct {
	mu      sync.Mutex
	b       strings.Builder
	secrets []string
}

func newRecorder(username, password string) *recorder {
	r := &recorder{}
	for _, s := range []string{password, username} {
		if s == "" {
			continue
		}
		r.secrets = append(r.secrets, s, base64.StdEncoding.EncodeToString([]byte(s)))
	}
	if username != "" && password != "" {
		r.secrets = append(r.secrets, base64.StdEncoding.EncodeToString([]byte("\x00"+username+"\x00"+password)))
	}
	// Longest first, so a secret that contains another is masked whole.
	slices.SortFunc(r.secrets, func(a, b string) int { return len(b) - len(a) })
	return r
}

// hide adds secrets to mask, beyond the username and password.
func (r *recorder) hide(secrets ...string) {
	for _, sec := range secrets {
		if sec != "" {
			r.secrets = append(r.secrets, sec)
		}
	}
	slices.SortFunc(r.secrets, func(a, b string) int { return len(b) - len(a) })
}

// mask replaces every credential in s.
func (r *recorder) mask(s string) string {
	for _, sec := range r.secrets {
		s = strings.ReplaceAll(s, sec, "********")
	}
	return s
}

func (r *recorder) line(dir mlog.Direction, text string) {
	if r == nil {
		return
	}
	prefix := "S: "
	if dir == mlog.DirClientToServer {
		prefix = "C: "
	}
	stamp := time.Now().UTC().Format("15:04:05.000 ")
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, l := range strings.Split(strings.TrimRight(text, "\r\n"), "\n") {
		r.b.WriteString(stamp)
		r.b.WriteString(prefix)
		r.b.WriteString(r.mask(strings.TrimRight(l, "\r")))
		r.b.WriteString("\n")
	}
}

// note records a line of the driver's own (connect, errors).
func (r *recorder) note(format string, args ...any) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.b.WriteString(time.Now().UTC().Format("15:04:05.000 "))
	r.b.WriteString("* ")
	r.b.WriteString(r.mask(fmt.Sprintf(format, args...)))
	r.b.WriteString("\n")
}

// take returns the conversation recorded since the last take.
func (r *recorder) take() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.b.String()
	r.b.Reset()
	return s
}

func (r *recorder) log(l mlog.Log) { r.line(l.Direction, fmt.Sprintf(l.Format, l.Messages...)) }

// Debugf implements the go-mail logger.
func (r *recorder) Debugf(l mlog.Log) { r.log(l) }

// Infof implements the go-mail logger.
func (r *recorder) Infof(l mlog.Log) { r.log(l) }

// Warnf implements the go-mail logger.
func (r *recorder) Warnf(l mlog.Log) { r.log(l) }

// Errorf implements the go-mail logger.
func (r *recorder) Errorf(l mlog.Log) { r.log(l) }

// errNoAuthMechanism means the server offers no mechanism the driver can
// use on this connection.
var errNoAuthMechanism = errors.New("server offers no usable AUTH mechanism")

// autoAuth picks the mechanism at AUTH time from what the server offers:
// PLAIN, then LOGIN (both only over TLS or to localhost), then CRAM-MD5.
type autoAuth struct {
	user, pass, host string
	inner            gosmtp.Auth
}

// Start implements go-mail's smtp.Auth.
func (a *autoAuth) Start(si *gosmtp.ServerInfo) (string, []byte, error) {
	secure := si.TLS || isLocalhost(si.Name)
	has := func(m string) bool {
		return slices.ContainsFunc(si.Auth, func(s string) bool { return strings.EqualFold(s, m) })
	}
	switch {
	case secure && has("PLAIN"):
		a.inner = gosmtp.PlainAuth("", a.user, a.pass, a.host, false)
	case secure && has("LOGIN"):
		a.inner = gosmtp.LoginAuth(a.user, a.pass, a.host, false)
	case has("CRAM-MD5"):
		a.inner = gosmtp.CRAMMD5Auth(a.user, a.pass)
	default:
		enc := "an unencrypted"
		if si.TLS {
			enc = "an encrypted"
		}
		return "", nil, fmt.Errorf("%w over %s connection (offered: %s)", errNoAuthMechanism, enc, strings.Join(si.Auth, " "))
	}
	return a.inner.Start(si)
}

// Next implements go-mail's smtp.Auth.
func (a *autoAuth) Next(fromServer []byte, more bool) ([]byte, error) {
	if a.inner == nil {
		return nil, errNoAuthMechanism
	}
	return a.inner.Next(fromServer, more)
}

func isLocalhost(name string) bool {
	if name == "localhost" {
		return true
	}
	ip := net.ParseIP(name)
	return ip != nil && ip.IsLoopback()
}
