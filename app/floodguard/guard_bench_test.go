package floodguard

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// BenchmarkGuardHolds is the guard's cost per message on the delivery
// path: ten sources of one site, 65,536 different messages (a subject of
// their own and a body of about 2 KB, so each is a new fingerprint until
// they come round again), none flooding (the usual case).
func BenchmarkGuardHolds(b *testing.B) {
	g := &Guard{Settings: fixedSettings{"flood_volume_floor": int64(1 << 40)}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	now := time.Now()
	body := strings.Repeat("Hello, this is the body of an order confirmation. ", 40)
	logs := make([]*core.Log, 1<<16)
	for i := range logs {
		logs[i] = &core.Log{ID: int64(i), SiteID: 1, Source: fmt.Sprintf("plugin-%d", i%10), CreatedAt: now,
			Message: core.Message{Subject: fmt.Sprintf("Order %d", i), Text: body,
				To: []core.Address{{Email: fmt.Sprintf("customer%d@example.com", i)}}}}
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if _, hold := g.Holds(ctx, logs[i%len(logs)]); hold {
			b.Fatal("held")
		}
	}
}

// BenchmarkGuardHoldsParallel is BenchmarkGuardHolds from as many
// goroutines at once as the delivery path decides messages with.
func BenchmarkGuardHoldsParallel(b *testing.B) {
	g := &Guard{Settings: fixedSettings{"flood_volume_floor": int64(1 << 40)}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	now := time.Now()
	body := strings.Repeat("Hello, this is the body of an order confirmation. ", 40)
	logs := make([]*core.Log, 1<<16)
	for i := range logs {
		logs[i] = &core.Log{ID: int64(i), SiteID: 1, Source: "shop", CreatedAt: now,
			Message: core.Message{Subject: fmt.Sprintf("Order %d", i), Text: body,
				To: []core.Address{{Email: fmt.Sprintf("customer%d@example.com", i)}}}}
	}
	ctx := context.Background()
	var next atomic.Int64
	b.SetParallelism(50)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, hold := g.Holds(ctx, logs[next.Add(1)%int64(len(logs))]); hold {
				b.Error("held")
				return
			}
		}
	})
}
