package smtp_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	smtpdrv "github.com/mailsvc/mailsvc/drivers/smtp"
)

// scriptedServer is a minimal SMTP server offering PIPELINING that
// records every command line and the batches they arrived in, refuses
// RCPT to refused@example.org with 550 (then DATA with 554) and accepts
// everything else.
type scriptedServer struct {
	ln    net.Listener
	mu    sync.Mutex
	lines []string
	// batches counts the reads that carried more than one command line
	// before a reply was due.
	batches   int
	conns     int
	delivered int
	// noPipelining leaves PIPELINING out of the EHLO reply; chunking
	// offers CHUNKING (BDAT).
	noPipelining, chunking bool
	// dropAfterMail closes the connection after answering MAIL, once.
	dropAfterMail bool
	// data holds the message data delivered, as received (a DATA body
	// without its final dot, still dot-stuffed).
	data []string
}

func startScripted(t *testing.T) *scriptedServer { return startScriptedServer(t, false) }

func startScriptedServer(t *testing.T, noPipelining bool) *scriptedServer {
	return startScriptedWith(t, &scriptedServer{noPipelining: noPipelining})
}

// startScriptedWith serves s (its options set) on a new listener.
func startScriptedWith(t *testing.T, s *scriptedServer) *scriptedServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.ln = ln
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns++
			s.mu.Unlock()
			go s.serve(c)
		}
	}()
	return s
}

func (s *scriptedServer) serve(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	w := bufio.NewWriter(c)
	reply := func(line string) { _, _ = w.WriteString(line + "\r\n") }
	reply("220 scripted ESMTP")
	_ = w.Flush()
	refused := false
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		cmd := strings.ToUpper(line)
		s.mu.Lock()
		s.lines = append(s.lines, line)
		if r.Buffered() > 0 && (strings.HasPrefix(cmd, "MAIL") || strings.HasPrefix(cmd, "RCPT")) {
			s.batches++
		}
		s.mu.Unlock()
		switch {
		case strings.HasPrefix(cmd, "EHLO"):
			reply("250-scripted")
			if !s.noPipelining {
				reply("250-PIPELINING")
			}
			if s.chunking {
				reply("250-CHUNKING")
			}
			reply("250 8BITMIME")
		case strings.HasPrefix(cmd, "MAIL"):
			refused = false
			reply("250 ok")
			s.mu.Lock()
			drop := s.dropAfterMail
			s.dropAfterMail = false
			s.mu.Unlock()
			if drop {
				_ = w.Flush()
				return
			}
		case strings.HasPrefix(cmd, "RCPT"):
			if strings.Contains(line, "refused@") {
				refused = true
				reply("550 5.1.1 no such user")
			} else {
				reply("250 ok")
			}
		case cmd == "DATA":
			if refused {
				reply("554 5.5.1 no valid recipients")
				break
			}
			reply("354 go ahead")
			_ = w.Flush()
			var body strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
				body.WriteString(l)
			}
			s.mu.Lock()
			s.delivered++
			s.data = append(s.data, body.String())
			s.mu.Unlock()
			reply("250 2.0.0 OK: queued as Q1")
		case s.chunking && strings.HasPrefix(cmd, "BDAT ") && strings.HasSuffix(cmd, " LAST"):
			n, err := strconv.Atoi(strings.Fields(cmd)[1])
			if err != nil {
				reply("501 bad size")
				break
			}
			chunk := make([]byte, n)
			if _, err := io.ReadFull(r, chunk); err != nil {
				return
			}
			if refused {
				reply("554 5.5.1 no valid recipients")
				break
			}
			s.mu.Lock()
			s.delivered++
			s.data = append(s.data, string(chunk))
			s.mu.Unlock()
			reply("250 2.0.0 OK: queued as Q2")
		case cmd == "RSET", cmd == "NOOP":
			reply("250 ok")
		case cmd == "QUIT":
			reply("221 bye")
			_ = w.Flush()
			return
		default:
			reply("502 unknown")
		}
		if r.Buffered() == 0 {
			_ = w.Flush()
		}
	}
}

// received returns the message data delivered so far.
func (s *scriptedServer) received() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.data...)
}

func (s *scriptedServer) snapshot() (lines []string, batches, conns, delivered int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.lines...), s.batches, s.conns, s.delivered
}

// scriptedTransport returns a transport of one connection to srv, with
// neither TLS nor AUTH.
func scriptedTransport(t *testing.T, srv *scriptedServer) core.Transport {
	addr := srv.ln.Addr().(*net.TCPAddr)
	set := core.Settings{
		smtpdrv.KeyHost: "127.0.0.1", smtpdrv.KeyPort: int64(addr.Port),
		smtpdrv.KeyEncryption: smtpdrv.EncryptionNone, smtpdrv.KeyAuth: false, smtpdrv.KeyTimeout: int64(5),
	}
	return newTransport(t, set, core.DriverEnv{}, smtpdrv.Options{MaxConns: 1})
}

// sendQueued sends n messages through tr, each of which the scripted
// server must queue as Q1.
func sendQueued(t *testing.T, tr core.Transport, n int) {
	t.Helper()
	for i := range n {
		rc, err := tr.Send(context.Background(), message())
		if err != nil {
			t.Fatalf("Send %d: %v", i, err)
		}
		if rc.MessageID != "Q1" {
			t.Errorf("Send %d: message id %q, want the queue id Q1", i, rc.MessageID)
		}
	}
}

// countCommand returns how many of the lines are the command cmd, in any
// case.
func countCommand(lines []string, cmd string) int {
	n := 0
	for _, l := range lines {
		if strings.EqualFold(l, cmd) {
			n++
		}
	}
	return n
}

// sendRefusedThenGood sends a message to a recipient the scripted server
// refuses, which must fail for good naming the 550, then a good one on
// the same session.
func sendRefusedThenGood(t *testing.T, tr core.Transport) {
	t.Helper()
	bad := message()
	bad.To = []core.Address{{Email: "refused@example.org"}}
	_, err := tr.Send(context.Background(), bad)
	if err == nil || core.IsTemporary(err) || !strings.Contains(err.Error(), "550") {
		t.Fatalf("refused recipient: err = %v, want a permanent failure naming 550", err)
	}
	if _, err := tr.Send(context.Background(), message()); err != nil {
		t.Fatalf("Send after a refused recipient: %v", err)
	}
}

// TestPipelinedSend checks the pipelined path against a server offering
// PIPELINING: the commands before the data arrive together, no NOOP or
// RSET surrounds a good transaction, a refused recipient fails the
// message permanently and RSET keeps the session for the next one.
func TestPipelinedSend(t *testing.T) {
	srv := startScripted(t)
	tr := scriptedTransport(t, srv)
	sendQueued(t, tr, 3)
	lines, batches, _, delivered := srv.snapshot()
	if delivered != 3 {
		t.Fatalf("delivered %d, want 3", delivered)
	}
	if batches < 3 {
		t.Errorf("commands arrived in %d pipelined batches, want one per message (3): %q", batches, lines)
	}
	for _, l := range lines {
		if u := strings.ToUpper(l); u == "NOOP" || u == "RSET" {
			t.Errorf("a good transaction sent %s: %q", l, lines)
		}
	}

	sendRefusedThenGood(t, tr)
	lines, _, conns, delivered := srv.snapshot()
	if delivered != 4 || conns != 1 {
		t.Errorf("delivered %d over %d connections, want 4 over 1", delivered, conns)
	}
	if rset := countCommand(lines, "RSET"); rset != 1 {
		t.Errorf("RSET sent %d times, want once after the refused recipient: %q", rset, lines)
	}
}

// TestStepwiseSend checks the command-by-command path against a server
// without PIPELINING: each command waits for its reply, no NOOP or RSET
// surrounds a good transaction, a refused recipient fails the message
// permanently and RSET keeps the session for the next one.
func TestStepwiseSend(t *testing.T) {
	srv := startScriptedServer(t, true)
	tr := scriptedTransport(t, srv)
	sendQueued(t, tr, 3)
	sendRefusedThenGood(t, tr)
	lines, batches, conns, delivered := srv.snapshot()
	if delivered != 4 || conns != 1 {
		t.Errorf("delivered %d over %d connections, want 4 over 1", delivered, conns)
	}
	if batches != 0 {
		t.Errorf("%d commands arrived before the reply to the previous one: %q", batches, lines)
	}
	var noop, rset, data int
	for _, l := range lines {
		switch strings.ToUpper(l) {
		case "NOOP":
			noop++
		case "RSET":
			rset++
		case "DATA":
			data++
		}
	}
	if noop != 0 || rset != 1 || data != 4 {
		t.Errorf("NOOP %d, RSET %d, DATA %d times; want 0, 1 (after the refused recipient) and 4: %q", noop, rset, data, lines)
	}
}
