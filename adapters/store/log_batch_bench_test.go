package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/store/storetest"
	"github.com/mailsvc/mailsvc/core"
)

// BenchmarkEnqueueConcurrent commits 4,000 1 KB logs from 20 concurrent
// callers (as 20 SMTP sessions do): one transaction each (EnqueueLog),
// then through GroupCommit with one group at a time and with the default;
// it reports logs committed per second.
func BenchmarkEnqueueConcurrent(b *testing.B) {
	for _, dialect := range []string{"mysql", "sqlite"} {
		for _, groups := range []int{0, 1, store.DefaultGroupCommitGroups} {
			b.Run(fmt.Sprintf("%s/groups=%d", dialect, groups), func(b *testing.B) {
				db := storetest.OpenDialect(b, dialect)
				enqueue := db.Logs().EnqueueLog
				if groups > 0 {
					g := store.NewGroupCommit(db.Logs())
					g.Groups = groups
					enqueue = g.EnqueueLog
				}
				const callers, total = 20, 4000
				for range b.N {
					var next atomic.Int64
					var wg sync.WaitGroup
					t0 := time.Now()
					for range callers {
						wg.Go(func() {
							for i := next.Add(1); i <= total; i = next.Add(1) {
								m := batchMessage(int(i))
								m.Text = strings.Repeat("x", 900)
								if err := enqueue(context.Background(), &core.Log{Message: m, Source: "smtp"}); err != nil {
									b.Error(err)
									return
								}
							}
						})
					}
					wg.Wait()
					b.ReportMetric(total/time.Since(t0).Seconds(), "logs/s")
				}
			})
		}
	}
}
