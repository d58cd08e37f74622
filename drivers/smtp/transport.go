package smtp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"time"

	gomail "github.com/wneessen/go-mail"
	gosmtp "github.com/wneessen/go-mail/smtp"

	"github.com/mailsvc/mailsvc/core"
)

// Pool defaults.
const (
	DefaultMaxConns    = 4
	DefaultIdleTimeout = 30 * time.Second
)

// Options tune a transport beyond its connection settings.
type Options struct {
	// MaxConns caps the open connections of the transport; Send waits for a
	// free one. Zero means DefaultMaxConns.
	MaxConns int
	// IdleTimeout closes a pooled connection unused for this long. Zero
	// means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// RootCAs, when set, replaces the system roots for verifying the
	// server's certificate (tests use it for a self-signed server).
	RootCAs *x509.CertPool
}

// config is the parsed settings of a connection.
type config struct {
	host       string
	port       int
	encryption string
	auth       bool
	username   string
	password   string
	fromEmail  string
	fromName   string
	forceFrom  bool
	timeout    time.Duration
	insecure   bool
	helo       string
}

func parseConfig(s core.Settings) (config, error) {
	c := config{
		host:       strings.TrimSpace(s.String(KeyHost)),
		port:       int(s.Int(KeyPort, DefaultPort)),
		encryption: s.String(KeyEncryption),
		auth:       s.Bool(KeyAuth, true),
		username:   s.String(KeyUsername),
		password:   s.String(KeyPassword),
	}
	c.readSession(s)
	if c.encryption == "" {
		c.encryption = DefaultEncryption
	}
	fields := map[string]string{}
	if !validHost(c.host) {
		fields[KeyHost] = "Must be a host name or IP address, without scheme, port or path."
	}
	if c.port < 1 || c.port > 65535 {
		fields[KeyPort] = "Must be between 1 and 65535."
	}
	switch c.encryption {
	case EncryptionNone, EncryptionSSL, EncryptionTLS:
	default:
		fields[KeyEncryption] = "Must be one of: none, ssl, tls."
	}
	if c.auth && (c.username == "" || c.password == "") {
		fields[KeyUsername] = "Username and password are required when authentication is on."
	}
	return c, core.Invalid(fields)
}

// readSession reads into c the settings that every SMTP transport, the
// XOAUTH2 ones included, takes from its connection: the sender overrides
// (from_email, from_name, force_from), the timeout (DefaultTimeout when
// not positive), the HELO name and insecure_skip_verify.
func (c *config) readSession(s core.Settings) {
	c.fromEmail = s.String(KeyFromEmail)
	c.fromName = s.String(KeyFromName)
	c.forceFrom = s.Bool(KeyForceFrom, false)
	c.timeout = time.Duration(s.Int(KeyTimeout, DefaultTimeout)) * time.Second
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout * time.Second
	}
	c.insecure = s.Bool(KeyInsecureSkipVerify, false)
	c.helo = s.String(KeyHelo)
}

// Transport sends through one SMTP connection's server, reusing a small
// pool of authenticated sessions. It is safe for concurrent use; Close
// closes the pooled sessions.
type Transport struct {
	cfg         config
	connID      int64
	tlsConfig   *tls.Config
	transcripts core.TranscriptSink
	logger      *slog.Logger
	idleTimeout time.Duration
	slots       chan struct{}
	// oauth, when set, authenticates each new session with XOAUTH2
	// instead of the connection's username and password.
	oauth *XOAUTH2

	mu     sync.Mutex
	idle   []*session // most recently used last
	closed bool
	// reaping: a timer will call reapIdle (one for the whole pool, not
	// one per released session).
	reaping bool
}

var (
	_ core.Transport = (*Transport)(nil)
	_ core.Verifier  = (*Transport)(nil)
	_ io.Closer      = (*Transport)(nil)
)

// New builds the transport of an SMTP connection from its effective
// settings, its session pool sized to the connection's max_concurrency
// (so each concurrent send keeps a session open and reuses it).
func New(conn *core.Connection, env core.DriverEnv) (core.Transport, error) {
	d := Driver()
	return NewTransport(conn, env, Options{MaxConns: d.Concurrency(conn.Settings)})
}

// NewTransport builds the transport of an SMTP connection with explicit
// pool and TLS options.
func NewTransport(conn *core.Connection, env core.DriverEnv, opts Options) (*Transport, error) {
	cfg, err := parseConfig(conn.Settings)
	if err != nil {
		return nil, err
	}
	return newTransport(cfg, conn.ID, env, opts), nil
}

// newTransport returns the transport of connection connID to the server
// cfg names, with opts' pool and TLS options (defaults for the zero ones).
func newTransport(cfg config, connID int64, env core.DriverEnv, opts Options) *Transport {
	if opts.MaxConns <= 0 {
		opts.MaxConns = DefaultMaxConns
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	logger := env.Logger
	if logger == nil {
		logger = slog.Default()
	}
	return &Transport{
		cfg:    cfg,
		connID: connID,
		tlsConfig: &tls.Config{
			ServerName:         cfg.host,
			RootCAs:            opts.RootCAs,
			InsecureSkipVerify: cfg.insecure, //nolint:gosec // an explicit per-connection setting
			MinVersion:         tls.VersionTLS12,
		},
		transcripts: env.Transcript,
		logger:      logger,
		idleTimeout: opts.IdleTimeout,
		slots:       make(chan struct{}, opts.MaxConns),
	}
}

// Send implements core.Transport: it delivers msg over a pooled session,
// or a new one, and returns once the server accepted it after DATA.
func (t *Transport) Send(ctx context.Context, msg *core.Message) (core.Receipt, error) {
	if msg == nil {
		return core.Receipt{}, core.Permanent(core.Errorf(core.EINVALID, "No message to send."))
	}
	eff := t.effective(msg)
	if err := eff.Validate(); err != nil {
		return core.Receipt{}, core.Permanent(err)
	}
	l, err := newLetter(eff, false)
	if err != nil {
		return core.Receipt{}, core.Permanent(err)
	}
	defer func() { l.release() }()
	select {
	case t.slots <- struct{}{}:
	case <-ctx.Done():
		return core.Receipt{}, core.Temporary(fmt.Errorf("smtp: waiting for a connection to %s: %w", t.addr(), ctx.Err()))
	}
	defer func() { <-t.slots }()

	s, reused, err := t.acquire(ctx)
	if err != nil {
		return core.Receipt{}, t.classify("connect", err)
	}
	if l.utf8 && !s.smtpUTF8 {
		// RFC 6531: without SMTPUTF8 at the next hop, only the ASCII
		// form may go (domains as A-labels, header text encoded).
		ascii, err := newLetter(eff, true)
		if err != nil {
			t.release(s)
			return core.Receipt{}, core.Permanent(fmt.Errorf("smtp: %s does not offer SMTPUTF8, so the message cannot be relayed there: %w", t.addr(), err))
		}
		l.release()
		l = ascii
	}
	resp, rejected, err := s.send(ctx, l)
	if err != nil && reused && staleConnection(err) {
		// The pooled session died while idle; nothing was sent on it.
		s.discard()
		if s, err = t.dial(ctx); err != nil {
			return core.Receipt{}, t.classify("reconnect", err)
		}
		resp, rejected, err = s.send(ctx, l)
	}
	if rejected == nil {
		// Every recipient accepted, or the transaction failed whole.
		t.saveTranscript(s)
		if err != nil {
			t.settle(s, err)
			return core.Receipt{}, t.classify("send", err)
		}
		t.release(s)
		return core.Receipt{MessageID: messageID(resp, l.id), Response: "250 " + resp}, nil
	}
	return t.sendRest(ctx, s, l, resp, rejected, err)
}

// sendRest goes on with a message some recipients of which the first
// transaction refused (rejected, with its reply resp and error err):
// those refused with a 5xx are refused for good (but a 552 "too many
// recipients", which RFC 5321 §4.5.3.1.10 reads as 452); those refused with a
// 4xx (452 "too many recipients" among them, RFC 5321 §4.5.3.1.10) go in
// a new transaction on the same session, and so on while each
// transaction delivers to someone; the rest are deferred. It returns a
// nil error with the outcome of every recipient when some got the
// message, else the error beside the outcomes.
func (t *Transport) sendRest(ctx context.Context, s *session, l *letter, resp string, rejected rejection, err error) (core.Receipt, error) {
	all := l.rcpts
	outcomes := make(core.RecipientOutcomes, len(all))
	for i, r := range all {
		outcomes[i].Email = strings.Trim(r, "<>")
	}
	idx := make([]int, len(all))
	for i := range idx {
		idx[i] = i
	}
	var replies []string
	var whole error
	delivered, deferred := 0, 0
	for {
		allRefused := len(rejected) == len(l.rcpts)
		var next []int
		for k, i := range idx {
			r, refused := rejected[k]
			switch {
			case refused && replyCode(r) >= 500 && !tooManyRecipients(r):
				outcomes[i].Status, outcomes[i].Reply = core.RecipientRefused, replyText(r)
			case refused:
				outcomes[i].Status, outcomes[i].Reply = core.RecipientDeferred, replyText(r)
				next = append(next, i)
			case err != nil && replyCode(err) >= 500:
				outcomes[i].Status, outcomes[i].Reply = core.RecipientRefused, err.Error()
			case err != nil:
				outcomes[i].Status, outcomes[i].Reply = core.RecipientDeferred, err.Error()
			default:
				outcomes[i].Status = core.RecipientDelivered
				delivered++
			}
		}
		if err == nil {
			replies = append(replies, "250 "+resp)
		}
		if err != nil && !allRefused {
			// The transaction failed whole (MAIL, DATA or the data).
			whole = err
			break
		}
		if len(next) == 0 || allRefused {
			break
		}
		idx = next
		l.rcpts = make([]string, len(next))
		for k, i := range next {
			l.rcpts[k] = all[i]
		}
		resp, rejected, err = s.send(ctx, l)
	}
	l.rcpts = all
	t.saveTranscript(s)
	if err != nil {
		t.settle(s, err)
	} else {
		t.release(s)
	}
	deferred = outcomes.Count(core.RecipientDeferred)
	if delivered == 0 && whole != nil {
		return core.Receipt{Recipients: outcomes}, t.classify("send", whole)
	}
	if delivered == 0 {
		wrapped := fmt.Errorf("smtp: send %s: no recipient accepted (%d refused, %d deferred): %w", t.addr(), len(all)-deferred, deferred, err)
		if deferred > 0 {
			return core.Receipt{Recipients: outcomes}, core.Temporary(wrapped)
		}
		return core.Receipt{Recipients: outcomes}, core.Permanent(wrapped)
	}
	return core.Receipt{
		MessageID:  messageID(strings.TrimPrefix(replies[0], "250 "), l.id),
		Response:   strings.Join(replies, "; "),
		Recipients: outcomes,
	}, nil
}

// tooManyRecipients reports a 552 reply to RCPT that means "too many
// recipients" (5.5.3, or its words): RFC 821 listed that limit under 552,
// and RFC 5321 §4.5.3.1.10 asks clients to treat it as 452, temporary.
// Other 552s (a full mailbox, 5.2.2) stay permanent.
func tooManyRecipients(err error) bool {
	var te *textproto.Error
	if !errors.As(err, &te) || te.Code != 552 {
		return false
	}
	text := strings.ToLower(te.Msg)
	return strings.HasPrefix(text, "5.5.3") || strings.Contains(text, "too many recipients")
}

// settle puts a session whose transaction failed with err back in the
// pool when the transaction ended cleanly, or drops it.
func (t *Transport) settle(s *session, err error) {
	if reusable(err) {
		t.release(s)
	} else {
		s.discard()
	}
}

// replyText returns an SMTP refusal as its reply line ("550 5.1.1 ...").
func replyText(err error) string {
	var te *textproto.Error
	if errors.As(err, &te) {
		return fmt.Sprintf("%d %s", te.Code, te.Msg)
	}
	return err.Error()
}

// Verify implements core.Verifier: it connects, negotiates TLS as
// configured, authenticates and quits, without sending anything.
func (t *Transport) Verify(ctx context.Context) error {
	s, err := t.dial(ctx)
	if err != nil {
		return t.classify("verify", err)
	}
	err = s.client.CloseWithSMTPClient(s.smtp)
	s.discard()
	t.saveTranscript(s)
	if err != nil {
		return t.classify("verify quit", err)
	}
	return nil
}

// Close implements io.Closer: it quits every idle pooled session. Sessions
// in use are closed when their Send returns. Send after Close still works,
// without pooling.
func (t *Transport) Close() error {
	t.mu.Lock()
	t.closed = true
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, s := range idle {
		s.quit()
	}
	return nil
}

// IdleConnections returns how many sessions wait in the pool.
func (t *Transport) IdleConnections() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.idle)
}

// effective returns msg with the connection's sender applied: from_email
// and from_name replace the sender when the message has none or when
// force_from is on.
func (t *Transport) effective(msg *core.Message) *core.Message {
	eff := *msg
	if t.cfg.fromEmail != "" && (msg.From.Email == "" || t.cfg.forceFrom) {
		eff.From = core.Address{Email: t.cfg.fromEmail, Name: msg.From.Name}
		if t.cfg.fromName != "" {
			eff.From.Name = t.cfg.fromName
		}
	}
	return &eff
}

func (t *Transport) addr() string {
	return net.JoinHostPort(t.cfg.host, strconv.Itoa(t.cfg.port))
}

// acquire returns an idle pooled session, or dials a new one.
func (t *Transport) acquire(ctx context.Context) (*session, bool, error) {
	var expired []*session
	t.mu.Lock()
	var s *session
	for len(t.idle) > 0 {
		last := t.idle[len(t.idle)-1]
		t.idle = t.idle[:len(t.idle)-1]
		if time.Since(last.lastUsed) > t.idleTimeout {
			expired = append(expired, last)
			continue
		}
		s = last
		break
	}
	t.mu.Unlock()
	for _, e := range expired {
		go e.quit()
	}
	if s != nil {
		return s, true, nil
	}
	s, err := t.dial(ctx)
	return s, false, err
}

// release puts a healthy session back in the pool, or quits it when the
// pool is closed or full.
func (t *Transport) release(s *session) {
	s.lastUsed = time.Now()
	t.mu.Lock()
	if t.closed || len(t.idle) >= cap(t.slots) {
		t.mu.Unlock()
		s.quit()
		return
	}
	t.idle = append(t.idle, s)
	arm := !t.reaping
	t.reaping = true
	t.mu.Unlock()
	if arm {
		time.AfterFunc(t.idleTimeout+10*time.Millisecond, t.reapIdle)
	}
}

// reapIdle quits the pooled sessions idle for longer than the timeout,
// and comes back when the oldest of the others will be.
func (t *Transport) reapIdle() {
	var expired []*session
	t.mu.Lock()
	keep := t.idle[:0]
	oldest := time.Time{}
	for _, s := range t.idle {
		if time.Since(s.lastUsed) > t.idleTimeout {
			expired = append(expired, s)
			continue
		}
		keep = append(keep, s)
		if oldest.IsZero() || s.lastUsed.Before(oldest) {
			oldest = s.lastUsed
		}
	}
	clear(t.idle[len(keep):])
	t.idle = keep
	t.reaping = len(keep) > 0
	t.mu.Unlock()
	if len(keep) > 0 {
		time.AfterFunc(time.Until(oldest.Add(t.idleTimeout))+10*time.Millisecond, t.reapIdle)
	}
	for _, s := range expired {
		s.quit()
	}
}

// dial opens, secures and authenticates a new session.
func (t *Transport) dial(ctx context.Context) (*session, error) {
	if t.oauth != nil {
		return t.dialXOAUTH2(ctx)
	}
	var auth gosmtp.Auth
	if t.cfg.auth {
		auth = &autoAuth{user: t.cfg.username, pass: t.cfg.password, host: t.cfg.host}
	}
	return t.dialAuth(ctx, auth)
}

// dialAuth opens and secures a new session and authenticates it with auth
// (none when nil); hidden are further secrets masked in its transcript.
func (t *Transport) dialAuth(ctx context.Context, auth gosmtp.Auth, hidden ...string) (*session, error) {
	s := &session{timeout: t.cfg.timeout}
	if t.transcripts != nil {
		s.rec = newRecorder(t.cfg.username, t.cfg.password)
		s.rec.hide(hidden...)
		s.rec.note("connect %s (encryption %s)", t.addr(), t.cfg.encryption)
	}
	netDialer := &net.Dialer{Timeout: t.cfg.timeout}
	dialFunc := func(ctx context.Context, network, addr string) (net.Conn, error) {
		var (
			c   net.Conn
			err error
		)
		if t.cfg.encryption == EncryptionSSL {
			c, err = (&tls.Dialer{NetDialer: netDialer, Config: t.tlsConfig}).DialContext(ctx, network, addr)
		} else {
			c, err = netDialer.DialContext(ctx, network, addr)
		}
		if err == nil {
			s.setConn(c)
		}
		return c, err
	}
	opts := []gomail.Option{
		gomail.WithPort(t.cfg.port),
		gomail.WithTimeout(t.cfg.timeout),
		gomail.WithTLSConfig(t.tlsConfig),
		gomail.WithDialContextFunc(dialFunc),
	}
	switch t.cfg.encryption {
	case EncryptionTLS:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	case encryptionOpportunistic:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	}
	if t.cfg.helo != "" {
		opts = append(opts, gomail.WithHELO(t.cfg.helo))
	}
	if auth != nil {
		opts = append(opts, gomail.WithSMTPAuthCustom(auth))
	}
	if s.rec != nil {
		opts = append(opts, gomail.WithLogger(s.rec), gomail.WithDebugLog())
	}
	client, err := gomail.NewClient(t.cfg.host, opts...)
	if err != nil {
		return nil, core.Permanent(fmt.Errorf("configure client: %w", err))
	}
	s.client = client
	stop := context.AfterFunc(ctx, s.abort)
	s.smtp, err = client.DialToSMTPClientWithContext(ctx)
	stop()
	if err == nil {
		s.learnExtensions()
	}
	if err != nil {
		s.rec.note("error: %v", err)
		t.saveTranscript(s)
		s.discard()
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("%w (%w)", err, ctxErr)
		}
		return nil, err
	}
	return s, nil
}

// saveTranscript hands the session's conversation so far to the sink.
func (t *Transport) saveTranscript(s *session) {
	if t.transcripts == nil || s == nil || s.rec == nil {
		return
	}
	if text := s.rec.take(); text != "" {
		t.transcripts.SaveTranscript(t.connID, text)
	}
}

// classify wraps err with context and marks it temporary or permanent:
// SMTP 4xx replies and network failures are temporary, 5xx replies
// (authentication failures included) and configuration faults permanent.
// A failure after the message data left whole with no reply (a timeout,
// a reset or closed connection after the final ".") is uncertain.
func (t *Transport) classify(op string, err error) error {
	var de *core.DeliveryError
	if errors.As(err, &de) {
		return err
	}
	wrapped := fmt.Errorf("smtp: %s %s: %w", op, t.addr(), err)
	code := replyCode(err)
	switch {
	case unanswered(err):
		return core.Uncertain(wrapped)
	case code >= 500:
		return core.Permanent(wrapped)
	case code >= 400 && slowDown(err):
		return core.RateLimited(wrapped, 0)
	case code >= 400:
		return core.Temporary(wrapped)
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return core.Temporary(wrapped)
	case configurationError(err):
		return core.Permanent(wrapped)
	}
	return core.Temporary(wrapped)
}

// slowDown reports whether err carries a server's "slow down" reply,
// which pauses the connection without counting an attempt against the
// message (core.RateLimited): every 421 (the server is shedding load and
// closing the session), a 451 with an enhanced status of class 4.7
// (policy: Gmail's 4.7.0 and 4.7.28, Exchange Online's 4.7.500–699
// throttling), and a 450, 451, 452 or 454 whose text speaks of rates,
// throttling or too many connections (Amazon SES's "454 Throttling
// failure"). Greylisting is never one: it concerns one message, for
// minutes, and pausing the connection for it would hold up the rest.
func slowDown(err error) bool {
	var te *textproto.Error
	if !errors.As(err, &te) {
		return false
	}
	text := strings.ToLower(te.Msg)
	if strings.Contains(text, "greylist") || strings.Contains(text, "graylist") {
		return false
	}
	switch te.Code {
	case 421:
		return true
	case 451:
		if strings.HasPrefix(text, "4.7.") {
			return true
		}
	case 450, 452, 454:
	default:
		return false
	}
	for _, phrase := range slowDownPhrases {
		if strings.Contains(text, phrase) {
			return true
		}
	}
	return false
}

// slowDownPhrases are the words of a 4xx reply that asks the client to
// send more slowly.
var slowDownPhrases = []string{
	"rate limit", "ratelimit", "rate-limit", "sending rate", "rate of", "throttl",
	"too many connections", "too many concurrent", "too many messages", "slow down", "server busy",
}

// replyCode returns the SMTP reply code carried by err, or 0.
func replyCode(err error) int {
	var te *textproto.Error
	if errors.As(err, &te) {
		return te.Code
	}
	return 0
}

// configurationError reports failures that retrying cannot fix: an
// untrusted certificate, a server without usable AUTH, a server that does
// not offer STARTTLS although it is required.
func configurationError(err error) bool {
	var (
		unknownAuthority x509.UnknownAuthorityError
		hostname         x509.HostnameError
		invalid          x509.CertificateInvalidError
		verification     *tls.CertificateVerificationError
	)
	if errors.As(err, &unknownAuthority) || errors.As(err, &hostname) || errors.As(err, &invalid) ||
		errors.As(err, &verification) || errors.Is(err, errNoAuthMechanism) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "does not support SMTP AUTH") || strings.Contains(msg, "STARTTLS")
}

// staleConnection reports a failure of a reused session before anything
// was sent on it: no reply to the commands before the data (the server
// closed the idle session).
func staleConnection(err error) bool {
	var te *transactionError
	return errors.As(err, &te) && te.stage != stageBody && !te.replied()
}

// unanswered reports a failure after the message data left whole and
// before the server replied to it: the server may have taken the message.
func unanswered(err error) bool {
	var te *transactionError
	return errors.As(err, &te) && te.unanswered
}

// reusable reports whether a session that failed with err can serve the
// next message: the server answered (other than 421, its goodbye) and the
// transaction ended.
func reusable(err error) bool {
	code := replyCode(err)
	if code < 400 || code == 421 {
		return false
	}
	var te *transactionError
	return errors.As(err, &te) && te.ended
}

// messageID returns the server's queue id from its reply to DATA when it
// gives one ("... queued as ID", or Amazon SES's "Ok 0100018c...-000000"),
// or else the Message-ID header without brackets.
func messageID(reply, header string) string {
	if id := queuedAs(reply); id != "" {
		return strings.Trim(id, "<>")
	}
	if id := sesID(strings.TrimSpace(reply)); id != "" {
		return id
	}
	return strings.Trim(header, "<>")
}

// queuedAs returns the id after the first "queued as " (any case, at the
// start of a word) that is followed by one: letters, digits and
// "._@<>-".
func queuedAs(reply string) string {
	const phrase = "queued as "
	for i := 0; i+len(phrase) < len(reply); i++ {
		if c := reply[i]; c != 'q' && c != 'Q' || (i > 0 && wordByte(reply[i-1])) ||
			!strings.EqualFold(reply[i:i+len(phrase)], phrase) {
			continue
		}
		rest := reply[i+len(phrase):]
		n := 0
		for n < len(rest) && queueIDByte(rest[n]) {
			n++
		}
		if n > 0 {
			return rest[:n]
		}
	}
	return ""
}

// sesID returns the message id of an Amazon SES reply, "[2.0.0 ]Ok
// <16 or more hex digits>-<hex digits and dashes>", or "".
func sesID(reply string) string {
	s := reply
	if len(s) >= 6 && digit(s[0]) && s[1] == '.' && digit(s[2]) && s[3] == '.' && digit(s[4]) && s[5] == ' ' {
		s = s[6:]
	}
	if len(s) < 3 || !strings.EqualFold(s[:3], "ok ") {
		return ""
	}
	s = s[3:]
	n := 0
	for n < len(s) && hexDigit(s[n]) {
		n++
	}
	if n < 16 || n == len(s) || s[n] != '-' {
		return ""
	}
	end := n + 1
	for end < len(s) && (hexDigit(s[end]) || s[end] == '-') {
		end++
	}
	if end == n+1 {
		return ""
	}
	return s[:end]
}

func digit(c byte) bool    { return c >= '0' && c <= '9' }
func hexDigit(c byte) bool { return digit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f') }
func wordByte(c byte) bool { return digit(c) || c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func queueIDByte(c byte) bool {
	return wordByte(c) || c == '.' || c == '@' || c == '<' || c == '>' || c == '-'
}
