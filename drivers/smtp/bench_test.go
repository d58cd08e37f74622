package smtp_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
	smtpdrv "github.com/mailsvc/mailsvc/drivers/smtp"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
)

// BenchmarkSend1KB sends the queue drain's 1 KB message (text only, one
// recipient, a fresh Message-ID and Date each) to a loopback smtpsink
// over pooled, pipelined sessions: from one goroutine over one session,
// and from ten over the pool of ten the driver keeps by default. The
// sink runs in the same process, so ns/op and allocs/op include its share;
// compare them across runs of the same code, not as the driver's alone.
func BenchmarkSend1KB(b *testing.B) {
	for _, sessions := range []int{1, 10} {
		b.Run(fmt.Sprintf("sessions=%d", sessions), func(b *testing.B) {
			sink, err := smtpsink.New()
			if err != nil {
				b.Fatal(err)
			}
			defer sink.Close()
			tr := newTransport(b, settings(sink, nil), core.DriverEnv{}, smtpdrv.Options{MaxConns: sessions})
			msg := &core.Message{
				From:    core.Address{Email: "shop@example.com"},
				To:      []core.Address{{Email: "buyer1@example.com"}},
				Subject: "msg-000001",
				Text:    strings.Repeat("x", 900),
			}
			ctx := context.Background()
			if _, err := tr.Send(ctx, msg); err != nil { // open the first session
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			if sessions == 1 {
				for range b.N {
					if _, err := tr.Send(ctx, msg); err != nil {
						b.Fatal(err)
					}
				}
			} else {
				b.SetParallelism((sessions + 1) / 2)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := tr.Send(ctx, msg); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "msgs/s")
			if c := sink.Connections(); c > sessions {
				b.Errorf("connections = %d, want at most %d", c, sessions)
			}
			sink.Reset()
		})
	}
}
