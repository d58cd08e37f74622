// Package smtpserver is mailsvc's SMTP submission listener
// (github.com/emersion/go-smtp): clients authenticate with AUTH PLAIN or
// LOGIN using a WordPress application password of a user who holds the
// REST capability, and each accepted message is parsed and committed to
// the delivery queue before the 250 reply, which carries its log id.
//
// Rules: no MAIL FROM (or RCPT TO) before AUTH (530), so there is no relay
// without authentication; AUTH is offered over plain text only on a
// loopback listener, otherwise only after STARTTLS, which needs a
// certificate; messages larger than MaxBytes are refused (552; announced
// as EHLO SIZE); a database error gives 451 so that the client retries.
package smtpserver

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/mailsvc/mailsvc/adapters/mailparse"
	"github.com/mailsvc/mailsvc/core"
)

// DefaultMaxBytes is the default message size limit (25 MiB).
const DefaultMaxBytes = 25 << 20

// Source is the log source of messages received by the listener.
const Source = "smtp"

// Authenticator checks an application password for a login or email and
// returns the user with its capabilities. It returns an EUNAUTHORIZED
// error for credentials that fail and another error when it cannot tell
// (database down). The HTTPS rule of application passwords does not apply:
// the listener enforces its own TLS rule.
type Authenticator interface {
	CheckApplicationPassword(ctx context.Context, login, password string) (*core.User, error)
}

// Queue accepts a message: it validates it (applying the From defaults)
// and commits it as queued, returning its log id. An invalid message gives
// an EINVALID error; any other error means it was not queued.
type Queue interface {
	Enqueue(ctx context.Context, l *core.Log) (int64, error)
}

// Config configures a Server.
type Config struct {
	// Addr is the HOST:PORT to listen on.
	Addr string
	// MaxBytes bounds a message; 0 means DefaultMaxBytes.
	MaxBytes int64
	// TLS, when set, enables STARTTLS.
	TLS *tls.Config
	// RequireTLS refuses AUTH over plain text even on a loopback address.
	RequireTLS bool
	// Capability is what an authenticating user must hold; "" means
	// core.DefaultCapability.
	Capability string
	// Hooks, when set, passes Capability through the
	// mail_svc_rest_capability filter (argument "smtp") at each AUTH, as
	// the REST routes do.
	Hooks *core.Hooks
	// Domain is the name in the greeting and in the Received field; ""
	// means "localhost" in the greeting and the host's name in Received.
	Domain string
	// Logger receives authentication failures and queueing errors.
	Logger *slog.Logger
	// WithRemoteIP, when set, returns the context passed to the
	// Authenticator carrying the client's IP address (recorded as the
	// application password's last_ip).
	WithRemoteIP func(ctx context.Context, ip string) context.Context
	// Timeout bounds each read and write on a connection; 0 means 5 minutes.
	Timeout time.Duration
}

// Server is a running submission listener.
type Server struct {
	cfg Config
	// byHost is the name of this host in the Received field.
	byHost string
	auth   Authenticator
	queue  Queue
	srv    *smtp.Server
	ln     *trackingListener
	done   chan error
	once   sync.Once
}

// IsLoopback reports whether addr (HOST:PORT) listens only on the loopback
// interface: a loopback IP or "localhost".
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Start validates cfg, listens on cfg.Addr and serves in the background
// until Shutdown. A listener on a non-loopback address without TLS is
// refused: AUTH could never be offered on it.
func Start(cfg Config, auth Authenticator, queue Queue) (*Server, error) {
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.Capability == "" {
		cfg.Capability = core.DefaultCapability
	}
	byHost := cfg.Domain
	if cfg.Domain == "" {
		cfg.Domain = "localhost"
		if byHost, _ = os.Hostname(); byHost == "" {
			byHost = cfg.Domain
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Minute
	}
	insecureAuth := IsLoopback(cfg.Addr) && !cfg.RequireTLS
	if !insecureAuth && cfg.TLS == nil {
		return nil, fmt.Errorf("SMTP listener on %s: AUTH needs TLS on a non-loopback address; configure a certificate or listen on 127.0.0.1", cfg.Addr)
	}
	s := &Server{cfg: cfg, byHost: byHost, auth: auth, queue: queue, done: make(chan error, 1)}
	srv := smtp.NewServer(smtp.BackendFunc(s.newSession))
	srv.Domain = cfg.Domain
	srv.MaxMessageBytes = cfg.MaxBytes
	srv.MaxRecipients = 1000
	srv.EnableSMTPUTF8 = true
	srv.AllowInsecureAuth = insecureAuth
	srv.TLSConfig = cfg.TLS
	srv.ReadTimeout = cfg.Timeout
	srv.WriteTimeout = cfg.Timeout
	srv.ErrorLog = slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn)
	s.srv = srv
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("SMTP listener: listen on %s: %w", cfg.Addr, err)
	}
	s.ln = &trackingListener{Listener: ln, conns: map[net.Conn]struct{}{}}
	go func() { s.done <- srv.Serve(s.ln) }()
	return s, nil
}

// Addr returns the address the listener is bound to.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Shutdown stops accepting connections and waits, up to ctx, for open
// sessions to end; then it closes them.
func (s *Server) Shutdown(ctx context.Context) error {
	var err error
	s.once.Do(func() {
		err = s.srv.Shutdown(ctx)
		if err != nil {
			// Sessions still open when ctx ends are cut.
			s.ln.closeConns()
		}
		<-s.done
	})
	if err != nil && !errors.Is(err, smtp.ErrServerClosed) {
		return fmt.Errorf("SMTP listener: shutdown: %w", err)
	}
	return nil
}

// trackingListener remembers the open connections so that Shutdown can
// close the sessions that outlive its deadline.
type trackingListener struct {
	net.Listener
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

// Accept implements net.Listener.
func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, l: l}
	l.mu.Lock()
	l.conns[tc] = struct{}{}
	l.mu.Unlock()
	return tc, nil
}

func (l *trackingListener) closeConns() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := range l.conns {
		_ = c.(*trackedConn).Conn.Close()
	}
}

type trackedConn struct {
	net.Conn
	l    *trackingListener
	once sync.Once
}

// Close implements net.Conn.
func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}

func (s *Server) newSession(c *smtp.Conn) (smtp.Session, error) {
	ip := c.Conn().RemoteAddr().String()
	if host, _, err := net.SplitHostPort(ip); err == nil {
		ip = host
	}
	return &session{s: s, ip: ip, conn: c}, nil
}

// SMTP replies of the listener.
var (
	errAuthRequired = &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "Authentication required"}
	errAuthFailed   = &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "Authentication credentials invalid"}
	errAuthTemp     = &smtp.SMTPError{Code: 454, EnhancedCode: smtp.EnhancedCode{4, 7, 0}, Message: "Temporary authentication failure"}
	errQueueDown    = &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "Requested action aborted: the queue is unavailable, try again later"}
	errNeedsUTF8    = &smtp.SMTPError{Code: 553, EnhancedCode: smtp.EnhancedCode{5, 6, 7}, Message: "A non-ASCII address needs the SMTPUTF8 parameter of MAIL FROM (RFC 6531)"}
)

// session is one SMTP session (reset by STARTTLS).
type session struct {
	s     *Server
	ip    string
	conn  *smtp.Conn
	user  *core.User
	from  string
	rcpts []core.Address
	// utf8: MAIL FROM carried SMTPUTF8, so addresses may be non-ASCII.
	utf8 bool
	// host is the client's name by reverse DNS, looked up once.
	host       string
	hostLooked bool
}

var _ smtp.AuthSession = (*session)(nil)

// AuthMechanisms implements smtp.AuthSession.
func (ss *session) AuthMechanisms() []string { return []string{sasl.Plain, sasl.Login} }

// Auth implements smtp.AuthSession.
func (ss *session) Auth(mech string) (sasl.Server, error) {
	switch mech {
	case sasl.Plain:
		return sasl.NewPlainServer(func(identity, username, password string) error {
			if identity != "" && identity != username {
				return errAuthFailed
			}
			return ss.login(username, password)
		}), nil
	case sasl.Login:
		return &loginServer{check: ss.login}, nil
	}
	return nil, smtp.ErrAuthUnknownMechanism
}

// capability returns the capability AUTH requires now: Capability passed
// through the mail_svc_rest_capability filter.
func (s *Server) capability() string {
	if v, ok := s.cfg.Hooks.ApplyFilters(core.HookRESTCapability, s.cfg.Capability, "smtp").(string); ok && v != "" {
		return v
	}
	return s.cfg.Capability
}

// login checks credentials and the capability.
func (ss *session) login(username, password string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if ss.s.cfg.WithRemoteIP != nil {
		ctx = ss.s.cfg.WithRemoteIP(ctx, ss.ip)
	}
	log := ss.s.cfg.Logger
	user, err := ss.s.auth.CheckApplicationPassword(ctx, username, password)
	switch {
	case err != nil && core.ErrorCode(err) != core.EUNAUTHORIZED:
		log.Error("SMTP AUTH could not be checked", "login", username, "remote", ss.ip, "err", err)
		return errAuthTemp
	case err != nil || user == nil:
		log.Warn("SMTP AUTH failed", "login", username, "remote", ss.ip)
		return errAuthFailed
	case !user.Can(ss.s.capability()):
		log.Warn("SMTP AUTH refused: the user lacks the capability", "login", username, "remote", ss.ip, "capability", ss.s.capability())
		return errAuthFailed
	}
	ss.user = user
	return nil
}

// Mail implements smtp.Session.
func (ss *session) Mail(from string, opts *smtp.MailOptions) error {
	if ss.user == nil {
		return errAuthRequired
	}
	if opts != nil && opts.Size > ss.s.cfg.MaxBytes {
		return smtp.ErrDataTooLarge
	}
	ss.utf8 = opts != nil && opts.UTF8
	if !ss.utf8 && !isASCII(from) {
		return errNeedsUTF8
	}
	ss.from = from
	return nil
}

// Rcpt implements smtp.Session.
func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if ss.user == nil {
		return errAuthRequired
	}
	if !ss.utf8 && !isASCII(to) {
		return errNeedsUTF8
	}
	if !core.ValidEmail(to) {
		return &smtp.SMTPError{Code: 553, EnhancedCode: smtp.EnhancedCode{5, 1, 3}, Message: "Invalid recipient address"}
	}
	ss.rcpts = append(ss.rcpts, core.Address{Email: to})
	return nil
}

// Data implements smtp.Session: parse, queue, reply with the log id.
func (ss *session) Data(r io.Reader) error {
	if ss.user == nil {
		return errAuthRequired
	}
	raw, err := io.ReadAll(r)
	if err != nil {
		var se *smtp.SMTPError
		if errors.As(err, &se) {
			return se // 552 when the size limit is exceeded
		}
		if errors.Is(err, smtp.ErrTooLongLine) {
			return &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 6, 0}, Message: "A line of the message is too long"}
		}
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "Error reading the message"}
	}
	msg, err := mailparse.Parse(bytes.NewReader(raw))
	if err != nil {
		return &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 6, 0}, Message: oneLine(core.ErrorMessage(err))}
	}
	mailparse.AddTrace(msg, ss.trace())
	mailparse.ApplyEnvelope(msg, ss.rcpts)
	if msg.From.Email == "" && ss.from != "" {
		msg.From.Email = ss.from
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id, err := ss.s.queue.Enqueue(ctx, &core.Log{Message: *msg, Source: Source})
	if core.ErrorCode(err) == core.EINVALID {
		return &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 6, 0}, Message: oneLine("Message refused: " + invalidText(err))}
	} else if err != nil {
		ss.s.cfg.Logger.Error("SMTP message not queued", "login", ss.user.Login, "remote", ss.ip, "err", err)
		return errQueueDown
	}
	return &smtp.SMTPError{Code: 250, EnhancedCode: smtp.EnhancedCode{2, 0, 0}, Message: "OK: queued as " + strconv.FormatInt(id, 10)}
}

// trace returns the Received field's facts of the message in hand: the
// client's EHLO name, reverse DNS name and address, the protocol with
// TLS and AUTH (RFC 3848) and the one recipient, if one.
func (ss *session) trace() mailparse.Trace {
	if !ss.hostLooked {
		ss.hostLooked = true
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if names, err := net.DefaultResolver.LookupAddr(ctx, ss.ip); err == nil && len(names) > 0 {
			ss.host = strings.TrimSuffix(names[0], ".")
		}
		cancel()
	}
	t := mailparse.Trace{
		Helo: ss.conn.Hostname(), ClientHost: ss.host, ClientIP: ss.ip,
		By: ss.s.byHost, Comment: "mailsvc", With: "ESMTP",
		ID: mailparse.NewTraceID(), Date: time.Now(),
	}
	if _, ok := ss.conn.TLSConnectionState(); ok {
		t.With += "S"
	}
	if ss.user != nil {
		t.With += "A"
	}
	if len(ss.rcpts) == 1 {
		t.For = ss.rcpts[0].Email
	}
	return t
}

// isASCII reports whether s holds only 7-bit bytes.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// Reset implements smtp.Session.
func (ss *session) Reset() {
	ss.from, ss.rcpts, ss.utf8 = "", nil, false
}

// Logout implements smtp.Session.
func (ss *session) Logout() error { return nil }

// invalidText renders an EINVALID error with its field messages.
func invalidText(err error) string {
	out := core.ErrorMessage(err)
	for _, k := range []string{"from", "to"} {
		if v, ok := core.ErrorFields(err)[k]; ok {
			out += " " + v
		}
	}
	return out
}

// oneLine keeps a reply text on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// loginServer is the server side of the LOGIN SASL mechanism: it asks for
// the username, then the password (an initial response is the username).
type loginServer struct {
	step     int
	username string
	check    func(username, password string) error
}

// Next implements sasl.Server.
func (l *loginServer) Next(response []byte) (challenge []byte, done bool, err error) {
	switch l.step {
	case 0:
		if response == nil {
			l.step = 1
			return []byte("Username:"), false, nil
		}
		l.username, l.step = string(response), 2
		return []byte("Password:"), false, nil
	case 1:
		l.username, l.step = string(response), 2
		return []byte("Password:"), false, nil
	case 2:
		l.step = 3
		return nil, true, l.check(l.username, string(response))
	}
	return nil, true, errors.New("unexpected LOGIN response")
}
