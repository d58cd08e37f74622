// Package smtpsink is a real SMTP server for tests. It listens on a random
// loopback port, records every accepted message with its envelope, and can
// require AUTH (PLAIN and LOGIN, or XOAUTH2 with a token check), offer
// STARTTLS or speak implicit TLS with a self-signed certificate made at
// start, and inject faults on command:
// temporary or permanent replies, connections dropped in the middle of DATA
// and stalls. It can leave PIPELINING out of its EHLO reply
// (WithoutPipelining). It can also take a fixed time over every message, as a
// remote server or a provider's API does (WithLatency), and counts the
// mail transactions open at once and their peak, so a test can see how
// many sends a client had in flight.
//
// A sink is safe for concurrent use; tests drive it from their own
// goroutine while clients talk to it from others.
package smtpsink

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Received is one message the sink accepted.
type Received struct {
	// From is the envelope sender (MAIL FROM).
	From string
	// To lists the envelope recipients (RCPT TO) in order.
	To []string
	// Data is the message as sent after DATA, with CRLF line endings.
	Data []byte
	// QueueID is the id the sink put in its "250 ... queued as" reply.
	QueueID string
	// Username is the identity the client authenticated as, if any.
	Username string
	// TLS reports whether the connection was encrypted.
	TLS bool
	// Helo is the name the client gave in EHLO/HELO.
	Helo string
	// UTF8 reports whether MAIL FROM carried the SMTPUTF8 parameter.
	UTF8 bool
	// Conn is the 1-based number of the connection that carried the
	// message; messages with the same Conn were sent over one connection.
	Conn int
	// Started is when the sink read the transaction's MAIL command; At
	// when it accepted the message (after any latency or stall).
	Started time.Time
	At      time.Time
}

// TLSMode selects how the sink offers TLS.
type TLSMode int

// TLS modes of a sink.
const (
	TLSNone     TLSMode = iota // plain SMTP only
	TLSStartTLS                // plain SMTP that offers STARTTLS
	TLSImplicit                // TLS from the first byte (SMTPS, port 465 style)
)

// Option configures a sink at Start.
type Option func(*config)

type config struct {
	maxSessions        int
	username, password string
	tlsMode            TLSMode
	requireTLS         bool
	domain             string
	xoauth2            func(user, token string) bool
	latency            time.Duration
	noPipelining       bool
	smtpUTF8           bool
	maxRecipients      int
	refused            map[string]bool
}

// WithAuth makes the sink advertise AUTH PLAIN and LOGIN, accept only
// these credentials, and refuse MAIL from unauthenticated clients.
func WithAuth(username, password string) Option {
	return func(c *config) { c.username, c.password = username, password }
}

// WithXOAUTH2 makes the sink advertise AUTH XOAUTH2 (besides PLAIN and
// LOGIN when WithAuth is also given), accept a bearer token only when
// valid(user, token) says so, answer 535 otherwise, and refuse MAIL from
// unauthenticated clients.
func WithXOAUTH2(valid func(user, token string) bool) Option {
	return func(c *config) { c.xoauth2 = valid }
}

// WithSTARTTLS makes the sink offer STARTTLS with its self-signed
// certificate.
func WithSTARTTLS() Option { return func(c *config) { c.tlsMode = TLSStartTLS } }

// WithImplicitTLS makes the sink speak TLS from the first byte.
func WithImplicitTLS() Option { return func(c *config) { c.tlsMode = TLSImplicit } }

// WithRequireTLS makes the sink refuse AUTH on an unencrypted connection,
// as public submission servers do.
func WithRequireTLS() Option { return func(c *config) { c.requireTLS = true } }

// WithLatency makes the sink hold every message d after reading its DATA
// before it answers, as a remote server or a provider's API takes its
// time: a client sending one message at a time then gets at most 1/d
// messages through per connection, and the sink's transaction counters
// see how many it keeps in flight at once.
func WithLatency(d time.Duration) Option { return func(c *config) { c.latency = d } }

// WithoutPipelining makes the sink leave PIPELINING out of its EHLO
// reply, as some servers do, so that a client sends one command at a
// time. It works on plain and implicit TLS sessions; New refuses it with
// WithSTARTTLS (the reply after STARTTLS is encrypted below the point
// where the sink takes the line out).
func WithoutPipelining() Option { return func(c *config) { c.noPipelining = true } }

// WithSMTPUTF8 makes the sink offer SMTPUTF8 (RFC 6531). With or without
// it, the sink refuses a non-ASCII address in MAIL FROM or RCPT TO (553
// 5.6.7) unless MAIL FROM carried the SMTPUTF8 parameter, as a strict
// server does.
func WithSMTPUTF8() Option { return func(c *config) { c.smtpUTF8 = true } }

// WithMaxRecipients makes the sink accept at most n recipients per
// transaction and answer "452 4.5.3 Too many recipients" to the RCPTs
// after them, as relays with a recipient limit do (Postfix's
// smtpd_recipient_limit).
func WithMaxRecipients(n int) Option { return func(c *config) { c.maxRecipients = n } }

// WithRefusedRecipients makes the sink answer "550 5.1.1 Mailbox
// unavailable" to RCPT TO any of addrs.
func WithRefusedRecipients(addrs ...string) Option {
	return func(c *config) {
		if c.refused == nil {
			c.refused = map[string]bool{}
		}
		for _, a := range addrs {
			c.refused[strings.ToLower(a)] = true
		}
	}
}

// WithDomain sets the name the sink greets with (default "sink.test").
func WithDomain(domain string) Option { return func(c *config) { c.domain = domain } }

// WithMaxSessions makes the sink take at most n connections at once, as
// a server limiting each client's sessions does: a connection beyond
// them is greeted "421 4.7.0 Too many sessions" and closed (plain or
// STARTTLS sinks; RefusedSessions counts them).
func WithMaxSessions(n int) Option { return func(c *config) { c.maxSessions = n } }

// faultKind is what the sink does to one message.
type faultKind int

const (
	faultReply    faultKind = iota + 1 // answer end of DATA with a code
	faultDrop                          // close the connection in the middle of DATA
	faultStall                         // wait before answering end of DATA
	faultTakeDrop                      // keep the message, then close without a reply
)

type fault struct {
	kind  faultKind
	code  int
	msg   string
	stall time.Duration
}

// Sink is a running SMTP server. Create it with Start; it stops when the
// test ends.
type Sink struct {
	cfg      config
	server   *smtp.Server
	listener net.Listener
	certPool *x509.CertPool
	done     chan struct{}

	mu        sync.Mutex
	cond      *sync.Cond
	messages  []Received
	faults    []fault
	conns     int
	connNums  map[string]int // remote address → connection number
	open      map[*countedConn]struct{}
	active    int
	auths     int
	authFails int
	closed    bool
	// inTx counts the mail transactions open now (MAIL read, the
	// transaction not yet ended by the reply to DATA, RSET or the end of
	// the connection); peakTx is its maximum.
	inTx   int
	peakTx int
	// deferred are the addresses answered 450 at RCPT (DeferRecipients).
	deferred map[string]bool
	// refused counts the connections turned away by WithMaxSessions.
	refused int
}

// DeferRecipients makes the sink answer "450 4.2.1 Mailbox temporarily
// unavailable" to RCPT TO any of addrs from now on, in place of the
// addresses deferred before; no address stops deferring.
func (s *Sink) DeferRecipients(addrs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deferred = map[string]bool{}
	for _, a := range addrs {
		s.deferred[strings.ToLower(a)] = true
	}
}

// Start runs a sink on 127.0.0.1 with a random port and stops it when t
// ends. It fails the test if the sink cannot start.
func Start(t testing.TB, opts ...Option) *Sink {
	t.Helper()
	s, err := New(opts...)
	if err != nil {
		t.Fatalf("smtpsink: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// New runs a sink like Start for code that has no testing.TB (benchmarks
// in a TestMain, tools); the caller must Close it.
func New(opts ...Option) (*Sink, error) {
	cfg := config{domain: "sink.test"}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.noPipelining && cfg.tlsMode == TLSStartTLS {
		return nil, errors.New("WithoutPipelining cannot be combined with WithSTARTTLS")
	}
	s := &Sink{cfg: cfg, done: make(chan struct{}), connNums: map[string]int{}, open: map[*countedConn]struct{}{}}
	s.cond = sync.NewCond(&s.mu)

	srv := smtp.NewServer(backend{s})
	srv.Domain = cfg.domain
	srv.AllowInsecureAuth = !cfg.requireTLS
	srv.MaxMessageBytes = 64 << 20
	srv.MaxRecipients = 1000
	srv.EnableSMTPUTF8 = cfg.smtpUTF8
	srv.ReadTimeout = time.Minute
	srv.WriteTimeout = time.Minute
	srv.ErrorLog = log.New(io.Discard, "", 0)

	var ln net.Listener
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	ln = &countingListener{Listener: raw, sink: s}
	if cfg.tlsMode != TLSNone {
		cert, pool, err := SelfSigned()
		if err != nil {
			_ = ln.Close()
			return nil, err
		}
		s.certPool = pool
		tc := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		if cfg.tlsMode == TLSStartTLS {
			srv.TLSConfig = tc
		} else {
			ln = tls.NewListener(ln, tc)
		}
	}
	if cfg.noPipelining {
		ln = &noPipeliningListener{ln}
	}
	s.server = srv
	s.listener = ln
	go func() { _ = srv.Serve(ln) }()
	return s, nil
}

// Addr returns the "127.0.0.1:port" address the sink listens on.
func (s *Sink) Addr() string { return s.listener.Addr().String() }

// Host returns the host part of Addr.
func (s *Sink) Host() string { return "127.0.0.1" }

// Port returns the port the sink listens on.
func (s *Sink) Port() int { return s.listener.Addr().(*net.TCPAddr).Port }

// CertPool returns a pool holding the sink's self-signed certificate, for a
// client's tls.Config RootCAs; nil when the sink has no TLS.
func (s *Sink) CertPool() *x509.CertPool { return s.certPool }

// Close stops the sink and drops every open connection. It is safe to call
// more than once.
func (s *Sink) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.done)
	s.cond.Broadcast()
	s.mu.Unlock()
	_ = s.server.Close()
}

// Messages returns a copy of the messages accepted so far, in order.
func (s *Sink) Messages() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.messages...)
}

// Reset forgets the accepted messages and pending faults; counters stay.
func (s *Sink) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.messages = nil
	s.faults = nil
}

// AwaitOne waits up to five seconds for a message and returns the first
// one accepted; it fails t when none comes.
func (s *Sink) AwaitOne(t testing.TB) Received {
	t.Helper()
	got, err := s.WaitFor(1, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return got[0]
}

// WaitFor waits until at least n messages were accepted or timeout passes,
// and returns the messages accepted so far with an error in the latter
// case.
func (s *Sink) WaitFor(n int, timeout time.Duration) ([]Received, error) {
	// The wake-up comes at the deadline, not before it: a broadcast
	// before the deadline could come while the caller is not yet
	// waiting, and it would then wait for good.
	deadline := time.Now().Add(timeout)
	timer := time.AfterFunc(time.Until(deadline), func() {
		s.mu.Lock()
		s.cond.Broadcast()
		s.mu.Unlock()
	})
	defer timer.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.messages) < n && !s.closed && time.Now().Before(deadline) {
		s.cond.Wait()
	}
	out := append([]Received(nil), s.messages...)
	if len(out) < n {
		return out, fmt.Errorf("smtpsink: %d of %d messages after %v", len(out), n, timeout)
	}
	return out, nil
}

// FailNext makes the sink answer the end of DATA of the next n messages
// with code (a 4xx or 5xx) and text instead of accepting them.
func (s *Sink) FailNext(n, code int, text string) {
	s.addFaults(n, fault{kind: faultReply, code: code, msg: text})
}

// DropNext makes the sink close the connection in the middle of the DATA
// of the next n messages, without a reply.
func (s *Sink) DropNext(n int) { s.addFaults(n, fault{kind: faultDrop}) }

// TakeAndDropNext makes the sink keep each of the next n messages (they
// appear in Messages) and then close the connection instead of replying
// to the end of DATA: the client cannot know the message was taken.
func (s *Sink) TakeAndDropNext(n int) { s.addFaults(n, fault{kind: faultTakeDrop}) }

// StallNext makes the sink wait d before accepting each of the next n
// messages, as an overloaded server does. A client with a shorter timeout
// gives up; the sink still records the message, as a real server would.
func (s *Sink) StallNext(n int, d time.Duration) {
	s.addFaults(n, fault{kind: faultStall, stall: d})
}

func (s *Sink) addFaults(n int, f fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := 0; i < n; i++ {
		s.faults = append(s.faults, f)
	}
}

func (s *Sink) nextFault() (fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.faults) == 0 {
		return fault{}, false
	}
	f := s.faults[0]
	s.faults = s.faults[1:]
	return f, true
}

// Connections returns how many connections the sink has accepted.
func (s *Sink) Connections() int { return s.count(&s.conns) }

// ActiveConnections returns how many connections are open now.
func (s *Sink) ActiveConnections() int { return s.count(&s.active) }

// DropConnections closes every open connection without a reply, as a
// server that restarts or times out idle clients does.
func (s *Sink) DropConnections() {
	s.mu.Lock()
	conns := make([]*countedConn, 0, len(s.open))
	for c := range s.open {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

// Transactions returns how many mail transactions are open now: MAIL was
// read and neither the reply to DATA, nor RSET, nor the end of the
// connection has ended the transaction yet.
func (s *Sink) Transactions() int { return s.count(&s.inTx) }

// PeakTransactions returns the largest number of mail transactions that
// were open at once since the sink started (or since ResetPeak): the most
// sends a client had in flight to this sink.
func (s *Sink) PeakTransactions() int { return s.count(&s.peakTx) }

// ResetPeak starts PeakTransactions again from the transactions open now.
func (s *Sink) ResetPeak() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.peakTx = s.inTx
}

// RefusedSessions returns how many connections WithMaxSessions turned
// away with a 421 greeting.
func (s *Sink) RefusedSessions() int { return s.count(&s.refused) }

// Auths returns how many AUTH exchanges succeeded.
func (s *Sink) Auths() int { return s.count(&s.auths) }

// AuthFailures returns how many AUTH exchanges were refused.
func (s *Sink) AuthFailures() int { return s.count(&s.authFails) }

// backend creates one session per connection.
type backend struct{ s *Sink }

// NewSession is called for each connection and again after STARTTLS; the
// connection number comes from the listener, so both share it.
func (b backend) NewSession(c *smtp.Conn) (smtp.Session, error) {
	b.s.mu.Lock()
	n := b.s.connNums[c.Conn().RemoteAddr().String()]
	b.s.mu.Unlock()
	return &session{sink: b.s, conn: c, num: n}, nil
}

// countingListener numbers accepted connections and counts open ones.
type countingListener struct {
	net.Listener
	sink *Sink
}

func (l *countingListener) Accept() (net.Conn, error) {
	s := l.sink
	var c net.Conn
	for {
		var err error
		c, err = l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		s.mu.Lock()
		full := s.cfg.maxSessions > 0 && s.active >= s.cfg.maxSessions
		if full {
			s.refused++
		}
		s.mu.Unlock()
		if !full {
			break
		}
		_ = c.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = c.Write([]byte("421 4.7.0 Too many sessions, try again later\r\n"))
		_ = c.Close()
	}
	s.mu.Lock()
	s.conns++
	s.active++
	key := c.RemoteAddr().String()
	s.connNums[key] = s.conns
	cc := &countedConn{Conn: c}
	cc.release = func() {
		s.mu.Lock()
		s.active--
		delete(s.connNums, key)
		delete(s.open, cc)
		s.mu.Unlock()
	}
	s.open[cc] = struct{}{}
	s.mu.Unlock()
	return cc, nil
}

// noPipeliningListener hands out connections that drop PIPELINING from
// the EHLO reply.
type noPipeliningListener struct{ net.Listener }

func (l *noPipeliningListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &noPipeliningConn{c}, nil
}

// pipeliningLine is the EHLO reply line that offers PIPELINING. go-smtp
// writes each reply line with a write of its own (and PIPELINING first of
// its extensions, never last).
var pipeliningLine = []byte("250-PIPELINING\r\n")

// noPipeliningConn swallows the write of the PIPELINING line.
type noPipeliningConn struct{ net.Conn }

func (c *noPipeliningConn) Write(p []byte) (int, error) {
	if bytes.Equal(p, pipeliningLine) {
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// countedConn reports its first Close to the sink.
type countedConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *countedConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}

// session is the state of one SMTP connection.
type session struct {
	sink     *Sink
	conn     *smtp.Conn
	num      int
	username string
	from     string
	to       []string
	started  time.Time
	inTx     bool // this session counts in the sink's open transactions
	utf8     bool // MAIL FROM carried SMTPUTF8
}

// beginTx counts the session's transaction as open (once).
func (ss *session) beginTx() {
	ss.started = time.Now()
	ss.sink.mu.Lock()
	defer ss.sink.mu.Unlock()
	if ss.inTx {
		return
	}
	ss.inTx = true
	ss.sink.inTx++
	ss.sink.peakTx = max(ss.sink.peakTx, ss.sink.inTx)
}

// endTx counts the session's transaction as ended, if one is open.
func (ss *session) endTx() {
	ss.sink.mu.Lock()
	defer ss.sink.mu.Unlock()
	if ss.inTx {
		ss.inTx = false
		ss.sink.inTx--
	}
}

var _ smtp.AuthSession = (*session)(nil)

func (ss *session) AuthMechanisms() []string {
	var mechs []string
	if ss.sink.cfg.username != "" {
		mechs = append(mechs, sasl.Plain, sasl.Login)
	}
	if ss.sink.cfg.xoauth2 != nil {
		mechs = append(mechs, mechXOAUTH2)
	}
	return mechs
}

// requiresAuth reports whether the sink refuses MAIL before AUTH.
func (ss *session) requiresAuth() bool {
	return ss.sink.cfg.username != "" || ss.sink.cfg.xoauth2 != nil
}

func (ss *session) Auth(mech string) (sasl.Server, error) {
	check := func(username, password string) error {
		ss.sink.mu.Lock()
		defer ss.sink.mu.Unlock()
		if username != ss.sink.cfg.username || password != ss.sink.cfg.password {
			ss.sink.authFails++
			return &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "Authentication credentials invalid"}
		}
		ss.sink.auths++
		ss.username = username
		return nil
	}
	if ss.sink.cfg.username == "" && ss.sink.cfg.xoauth2 != nil && mech != mechXOAUTH2 {
		// XOAUTH2 only: no password login.
		return nil, &smtp.SMTPError{Code: 504, EnhancedCode: smtp.EnhancedCode{5, 5, 4}, Message: "Unsupported mechanism"}
	}
	switch mech {
	case sasl.Plain:
		return sasl.NewPlainServer(func(identity, username, password string) error {
			if identity != "" && identity != username {
				return &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "Identity mismatch"}
			}
			return check(username, password)
		}), nil
	case sasl.Login:
		return &loginServer{check: check}, nil
	case mechXOAUTH2:
		if ss.sink.cfg.xoauth2 != nil {
			return &xoauth2Server{check: ss.checkXOAUTH2}, nil
		}
	}
	return nil, &smtp.SMTPError{Code: 504, EnhancedCode: smtp.EnhancedCode{5, 5, 4}, Message: "Unsupported mechanism"}
}

// errNeedsUTF8 refuses a non-ASCII address sent without SMTPUTF8.
var errNeedsUTF8 = &smtp.SMTPError{Code: 553, EnhancedCode: smtp.EnhancedCode{5, 6, 7}, Message: "Non-ASCII address without SMTPUTF8"}

// ascii reports whether s holds only 7-bit bytes.
func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func (ss *session) Mail(from string, opts *smtp.MailOptions) error {
	if ss.requiresAuth() && ss.username == "" {
		return &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "Authentication required"}
	}
	ss.utf8 = opts != nil && opts.UTF8
	if !ss.utf8 && !ascii(from) {
		return errNeedsUTF8
	}
	ss.from = from
	ss.to = nil
	ss.beginTx()
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if !ss.utf8 && !ascii(to) {
		return errNeedsUTF8
	}
	if ss.sink.cfg.refused[strings.ToLower(to)] {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "Mailbox unavailable"}
	}
	ss.sink.mu.Lock()
	deferred := ss.sink.deferred[strings.ToLower(to)]
	ss.sink.mu.Unlock()
	if deferred {
		return &smtp.SMTPError{Code: 450, EnhancedCode: smtp.EnhancedCode{4, 2, 1}, Message: "Mailbox temporarily unavailable"}
	}
	if n := ss.sink.cfg.maxRecipients; n > 0 && len(ss.to) >= n {
		return &smtp.SMTPError{Code: 452, EnhancedCode: smtp.EnhancedCode{4, 5, 3}, Message: "Too many recipients"}
	}
	ss.to = append(ss.to, to)
	return nil
}

func (ss *session) Data(r io.Reader) error {
	// The transaction ends with the reply to DATA, which go-smtp writes
	// once Data returns: the client cannot start its next one before.
	defer ss.endTx()
	f, hasFault := ss.sink.nextFault()
	if hasFault && f.kind == faultDrop {
		// Read a little of the message so that the client is mid-stream,
		// then hang up without a reply.
		_, _ = io.ReadFull(r, make([]byte, 16))
		_ = ss.conn.Conn().Close()
		return errors.New("connection dropped by the sink")
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return fmt.Errorf("read data: %w", err)
	}
	if hasFault && f.kind == faultReply {
		return replyError(f.code, f.msg)
	}
	hold := ss.sink.cfg.latency
	if hasFault && f.kind == faultStall {
		hold += f.stall
	}
	if hold > 0 {
		t := time.NewTimer(hold)
		select {
		case <-t.C:
		case <-ss.sink.done:
			t.Stop()
			return &smtp.SMTPError{Code: 421, EnhancedCode: smtp.EnhancedCode{4, 3, 2}, Message: "Shutting down"}
		}
	}
	_, isTLS := ss.conn.TLSConnectionState()
	ss.sink.mu.Lock()
	id := "SINK" + strconv.Itoa(len(ss.sink.messages)+1)
	ss.sink.messages = append(ss.sink.messages, Received{
		From:     ss.from,
		To:       append([]string(nil), ss.to...),
		Data:     bytes.Clone(data),
		QueueID:  id,
		Username: ss.username,
		TLS:      isTLS,
		Helo:     ss.conn.Hostname(),
		UTF8:     ss.utf8,
		Conn:     ss.num,
		Started:  ss.started,
		At:       time.Now(),
	})
	ss.sink.cond.Broadcast()
	ss.sink.mu.Unlock()
	if hasFault && f.kind == faultTakeDrop {
		_ = ss.conn.Conn().Close()
		return errors.New("connection dropped by the sink after taking the message")
	}
	// A 250 "error" is how go-smtp lets a backend choose the success text.
	return &smtp.SMTPError{Code: 250, EnhancedCode: smtp.EnhancedCode{2, 0, 0}, Message: "OK: queued as " + id}
}

func (ss *session) Reset() {
	ss.from = ""
	ss.to = nil
	ss.endTx()
}

func (ss *session) Logout() error {
	ss.endTx()
	return nil
}

// enhanced returns a plausible enhanced status code for a reply code.
// replyError is the reply code with text; an enhanced status code at the
// start of text ("4.7.0 Try again later") goes out as the reply's own, as
// servers write it, else one of the code's class.
func replyError(code int, text string) *smtp.SMTPError {
	ec := enhanced(code)
	if head, rest, ok := strings.Cut(text, " "); ok {
		var a, b, c int
		if n, _ := fmt.Sscanf(head, "%d.%d.%d", &a, &b, &c); n == 3 && a == code/100 {
			ec, text = smtp.EnhancedCode{a, b, c}, rest
		}
	}
	return &smtp.SMTPError{Code: code, EnhancedCode: ec, Message: text}
}

func enhanced(code int) smtp.EnhancedCode {
	switch {
	case code >= 500:
		return smtp.EnhancedCode{5, 0, 0}
	case code >= 400:
		return smtp.EnhancedCode{4, 0, 0}
	}
	return smtp.EnhancedCode{2, 0, 0}
}

// loginServer is the server side of the LOGIN mechanism, which go-sasl does
// not provide: it asks for the user name, then the password.
type loginServer struct {
	check    func(username, password string) error
	username string
	step     int
}

func (l *loginServer) Next(response []byte) ([]byte, bool, error) {
	switch l.step {
	case 0:
		l.step = 1
		if response != nil {
			l.username = string(response)
			l.step = 2
			return []byte("Password:"), false, nil
		}
		return []byte("Username:"), false, nil
	case 1:
		l.username = string(response)
		l.step = 2
		return []byte("Password:"), false, nil
	case 2:
		l.step = 3
		if err := l.check(l.username, string(response)); err != nil {
			return nil, false, err
		}
		return nil, true, nil
	}
	return nil, false, errors.New("unexpected LOGIN step")
}

// SelfSigned makes an ECDSA certificate for 127.0.0.1, ::1 and localhost
// that is its own CA, and a pool that trusts it: for any test server that
// needs TLS.
func SelfSigned() (tls.Certificate, *x509.CertPool, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("generate serial: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "smtpsink test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("create certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("parse certificate: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool, nil
}

// SelfSignedFiles writes a SelfSigned certificate and its key as PEM files
// into dir, for a server configured by file paths, and returns the paths
// and a pool that trusts the certificate.
func SelfSignedFiles(t testing.TB, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	cert, pool, err := SelfSigned()
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(cert.PrivateKey.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, pool
}

// count returns the counter n of the sink, read under its lock.
func (s *Sink) count(n *int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *n
}
