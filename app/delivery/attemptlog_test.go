package delivery

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/mailsvc/mailsvc/core"
)

// lockedBuffer is a bytes.Buffer the workers may write while a test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Split(strings.TrimSpace(b.b.String()), "\n")
}

// TestAttemptLogLines checks the service's log lines of failed attempts:
// one WARN per attempt that will be retried, one ERROR for the final
// failure, each naming the connection, the recipients' domains (never an
// address) and the error with the connection's secrets masked; a
// delivered attempt writes none.
func TestAttemptLogLines(t *testing.T) {
	refused := core.Temporary(errors.New("dial tcp 127.0.0.1:25: connect: connection refused (key sk-SECRET-123)"))
	for _, tt := range []struct {
		name     string
		settings fakeSettings
		scripts  map[int64][]error
		want     []string // level and message of each line, in order
	}{
		{"refused three times, then failed", nil, map[int64][]error{1: {refused, refused, refused, refused}},
			[]string{"WARN delivery attempt failed: will retry", "WARN delivery attempt failed: will retry", "WARN delivery attempt failed: will retry", "ERROR delivery failed"}},
		{"permanent", nil, map[int64][]error{1: {perm}}, []string{"ERROR delivery failed"}},
		{"the provider echoes an address", nil, map[int64][]error{1: {core.Permanent(errors.New("550 5.1.1 <alice@example.com>: Recipient address rejected; bob@example.com too"))}}, []string{"ERROR delivery failed"}},
		{"delivered after one retry", nil, map[int64][]error{1: {refused}}, []string{"WARN delivery attempt failed: will retry"}},
		{"delivered at once", nil, nil, nil},
		{"handed to the fallback", fakeSettings{"fallback_connection_id": int64(2)}, map[int64][]error{1: {perm}},
			[]string{"WARN delivery attempt failed: handed to the fallback connection"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.settings, tt.scripts)
			e.svc.o.MaxRetries = 3
			base := e.svc.mustBase(t, e) - 1
			conn := e.conns.m[base+1]
			conn.Name = "Office SMTP"
			conn.Settings = core.Settings{"password": "sk-SECRET-123", "host": "127.0.0.1"}
			var buf lockedBuffer
			e.svc.o.Logger = slog.New(slog.NewTextHandler(&buf, nil))
			l := &core.Log{Message: core.Message{
				To:      []core.Address{{Email: "alice@Example.com"}, {Email: "bob@example.com"}},
				Cc:      []core.Address{{Email: "carol@other.test"}},
				Subject: "s", Text: "body",
			}}
			e.enqueue(t, l)
			e.drain(t)
			var got []string
			for _, line := range buf.lines() {
				if !strings.Contains(line, "delivery") {
					continue
				}
				level := strings.TrimPrefix(strings.Fields(line[strings.Index(line, "level="):])[0], "level=")
				msg := line[strings.Index(line, "msg=")+len("msg="):]
				msg = strings.Trim(msg[:strings.Index(msg, " log_id=")], `"`)
				got = append(got, level+" "+msg)
				for _, want := range []string{`connection="Office SMTP"`, "recipient_domains=example.com,other.test"} {
					if !strings.Contains(line, want) {
						t.Errorf("line %q lacks %s", line, want)
					}
				}
				for _, secret := range []string{"alice", "bob@", "carol", "sk-SECRET-123"} {
					if strings.Contains(line, secret) {
						t.Errorf("line %q shows %q", line, secret)
					}
				}
				if strings.Contains(line, "Recipient address rejected") && !strings.Contains(line, "<…@example.com>") {
					t.Errorf("line %q does not show the rejected recipient's domain", line)
				}
				if !strings.Contains(line, "error=") {
					t.Errorf("line %q has no error", line)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("log lines:\n%s\nwant:\n%s\n(all: %v)", strings.Join(got, "\n"), strings.Join(tt.want, "\n"), buf.lines())
			}
		})
	}
}
