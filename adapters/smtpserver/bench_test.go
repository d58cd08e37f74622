package smtpserver

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
)

// BenchmarkSessions measures the listener alone (an in-memory queue): 20
// authenticated sessions sending 1 KB messages, in messages per second.
func BenchmarkSessions(b *testing.B) {
	const sessions = 20
	q := &fakeQueue{}
	s := start(b, Config{}, newAuth(), q)
	body := "From: Site <site@example.org>\r\nTo: Al <al@example.org>\r\nSubject: Hello\r\n\r\n" + strings.Repeat("x", 900) + "\r\n"
	clients := make([]*smtp.Client, sessions)
	for i := range clients {
		c, err := smtp.Dial(s.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Auth(sasl.NewPlainClient("", "admin", "abcd EFGH ijkl MNOP qrst UVWX")); err != nil {
			b.Fatal(err)
		}
		clients[i] = c
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	t0 := time.Now()
	for _, c := range clients {
		wg.Go(func() {
			for int(next.Add(1)) <= b.N {
				if _, err := smtpsink.Send(c, "site@example.org", []string{"al@example.org"}, body); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(t0).Seconds(), "msgs/s")
	for _, c := range clients {
		c.Close()
	}

}
