package smtp_test

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	smtpdrv "github.com/mailsvc/mailsvc/drivers/smtp"
)

// chunkingTransport returns a one-session transport to a scripted server
// offering PIPELINING and CHUNKING.
func chunkingTransport(t *testing.T) (*scriptedServer, core.Transport) {
	t.Helper()
	srv := startScriptedWith(t, &scriptedServer{chunking: true})
	addr := srv.ln.Addr().(*net.TCPAddr)
	set := core.Settings{
		smtpdrv.KeyHost: "127.0.0.1", smtpdrv.KeyPort: int64(addr.Port),
		smtpdrv.KeyEncryption: smtpdrv.EncryptionNone, smtpdrv.KeyAuth: false, smtpdrv.KeyTimeout: int64(5),
	}
	return srv, newTransport(t, set, core.DriverEnv{}, smtpdrv.Options{MaxConns: 1})
}

// TestChunkedSend: against a server offering CHUNKING, a rendered
// message for one recipient goes out as one BDAT LAST chunk in the same
// write as its envelope, its bytes as rendered (a line starting with a
// dot is not stuffed); a message for several recipients or with an
// attachment takes DATA.
func TestChunkedSend(t *testing.T) {
	dotted := func() *core.Message {
		m := message()
		m.Text = "Thanks for your order.\n.hidden line\n"
		return m
	}
	tests := []struct {
		name    string
		msg     func() *core.Message
		bdat    bool
		queueID string
	}{
		{"one recipient", dotted, true, "Q2"},
		{"two recipients", func() *core.Message {
			m := dotted()
			m.Cc = []core.Address{{Email: "copy@example.org"}}
			return m
		}, false, "Q1"},
		{"attachment", func() *core.Message {
			m := dotted()
			m.Attachments = []core.Attachment{{Filename: "a.txt", ContentType: "text/plain", Data: []byte("file")}}
			return m
		}, false, "Q1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, tr := chunkingTransport(t)
			for i := range 2 {
				rc, err := tr.Send(context.Background(), tt.msg())
				if err != nil {
					t.Fatalf("Send %d: %v", i, err)
				}
				if rc.MessageID != tt.queueID {
					t.Errorf("Send %d: message id %q, want %s", i, rc.MessageID, tt.queueID)
				}
			}
			lines, batches, conns, delivered := srv.snapshot()
			var bdat, data int
			for _, l := range lines {
				u := strings.ToUpper(l)
				switch {
				case strings.HasPrefix(u, "BDAT ") && strings.HasSuffix(u, " LAST"):
					bdat++
				case u == "DATA":
					data++
				case u == "RSET" || u == "NOOP":
					t.Errorf("a good transaction sent %s: %q", l, lines)
				}
			}
			if want := map[bool][2]int{true: {2, 0}, false: {0, 2}}[tt.bdat]; bdat != want[0] || data != want[1] {
				t.Errorf("BDAT %d, DATA %d times; want %d and %d: %q", bdat, data, want[0], want[1], lines)
			}
			if delivered != 2 || conns != 1 || batches < 2 {
				t.Errorf("delivered %d over %d connections in %d pipelined batches; want 2, 1 and one batch per message", delivered, conns, batches)
			}
			for _, body := range srv.received() {
				stuffed := strings.Contains(body, "\r\n..hidden line")
				if !strings.Contains(body, "\r\n.hidden line") && !stuffed {
					t.Fatalf("the dotted line is missing from the data: %q", body)
				}
				if stuffed == tt.bdat {
					t.Errorf("dot-stuffed %v over %s: %q", stuffed, map[bool]string{true: "BDAT", false: "DATA"}[tt.bdat], body)
				}
				if tt.bdat && !strings.HasSuffix(body, "\r\n") {
					t.Errorf("the chunk does not end its last line: %q", body)
				}
			}
		})
	}
}

// TestChunkedSendRefused: a refused recipient fails the message
// permanently, although its chunk went with the envelope, and RSET keeps
// the session for the next message.
func TestChunkedSendRefused(t *testing.T) {
	srv, tr := chunkingTransport(t)
	sendRefusedThenGood(t, tr)
	lines, _, conns, delivered := srv.snapshot()
	rset := countCommand(lines, "RSET")
	if delivered != 1 || conns != 1 || rset != 1 {
		t.Errorf("delivered %d over %d connections with %d RSET; want 1, 1 and 1: %q", delivered, conns, rset, lines)
	}
}

// TestChunkedSendNotResentAfterAReply: when a pooled session fails after
// the server answered part of the pipelined transaction, the chunk may
// have been taken, so the message is not sent again on a new session (it
// fails for a later retry); DATA's stale-session resend is kept for a
// session that fails before any reply.
func TestChunkedSendNotResentAfterAReply(t *testing.T) {
	srv, tr := chunkingTransport(t)
	if _, err := tr.Send(context.Background(), message()); err != nil {
		t.Fatal(err)
	}
	srv.mu.Lock()
	srv.dropAfterMail = true
	srv.mu.Unlock()
	_, err := tr.Send(context.Background(), message())
	if err == nil || !core.IsTemporary(err) || !strings.Contains(err.Error(), "message data") {
		t.Fatalf("session lost after MAIL's reply: err = %v, want a temporary failure of the message data", err)
	}
	if _, _, conns, delivered := srv.snapshot(); conns != 1 || delivered != 1 {
		t.Errorf("%d connections, %d delivered; want the message not resent (1, 1)", conns, delivered)
	}
}
