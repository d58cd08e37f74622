package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/internal/testdb"
)

// BenchmarkRecordAndClaim is the queue's share of a drain, without
// sending: 20,000 queued 1 KB logs, held by 8 owners 100 at a time, each
// group write recording half of every owner's hand as delivered (with its
// attempt) and claiming as many in its place, in one transaction, one
// write at a time (as the delivery service's recorder does). It reports
// logs per second and, where the MariaDB server runs on this machine, the
// server's CPU time per log and the redo log InnoDB writes per log: the
// cost the database puts on every message delivered. The redo figure
// does not depend on what else the machine runs.
//
// The "failed" run records every log as failed for good instead: the
// failure marks of the alert thresholds (failure_marks.go) are written
// then, and only then.
func BenchmarkRecordAndClaim(b *testing.B) {
	for _, status := range []string{core.StatusDelivered, core.StatusFailed} {
		b.Run(status, func(b *testing.B) { benchRecordAndClaim(b, status) })
	}
}

func benchRecordAndClaim(b *testing.B, status string) {
	const total, owners, hand = 20000, 8, 100
	for range b.N {
		b.StopTimer()
		dsn := testdb.MySQL(b)
		db, err := store.Open(context.Background(), dsn, store.DefaultPrefix, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		raw, err := sql.Open("mysql", testdb.DriverDSN(dsn))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { raw.Close() })
		ctx := context.Background()
		logs := make([]*core.Log, 0, 500)
		for i := range total {
			m := batchMessage(i)
			m.Cc = nil
			m.Text = strings.Repeat("x", 900)
			logs = append(logs, &core.Log{Message: m, Source: "bench"})
			if len(logs) == cap(logs) {
				if err := db.Logs().EnqueueLogs(ctx, logs); err != nil {
					b.Fatal(err)
				}
				logs = logs[:0]
			}
		}
		names := make([]string, owners)
		held := make([][]*core.Log, owners)
		for i := range names {
			names[i] = fmt.Sprintf("bench/w%d", i)
			got, err := db.Logs().ClaimLogs(ctx, names[i], hand, time.Minute)
			if err != nil {
				b.Fatal(err)
			}
			held[i] = got
		}
		conn := int64(1)
		cpu0, lsn0 := mariadbCPU(), redoLSN(b, raw)
		b.StartTimer()
		t0 := time.Now()
		done := 0
		for done < total {
			outs := make([][]core.LogOutcome, owners)
			claims := make([]int, owners)
			for i, h := range held {
				n := min(len(h), hand/2)
				for _, l := range h[:n] {
					at := time.Now().UTC()
					outs[i] = append(outs[i], core.LogOutcome{
						LogID: l.ID, Status: status, Attempts: 1, PhaseAttempts: 1,
						SentConnectionID: &conn, ProviderMessageID: fmt.Sprintf("queued as %d", l.ID),
						History: []core.Attempt{{LogID: l.ID, ConnectionID: conn, At: at, Outcome: core.OutcomeDelivered,
							Response: "250 2.0.0 Ok: queued", ProviderMessageID: fmt.Sprintf("queued as %d", l.ID), DurationMS: 1}},
					})
				}
				held[i] = h[n:]
				claims[i] = n
				done += n
			}
			if done == 0 {
				b.Fatal("nothing held")
			}
			_, claimed, err := db.Logs().RecordOutcomesAndClaim(ctx, names, outs, claims, time.Minute)
			if err != nil {
				b.Fatal(err)
			}
			for i := range held {
				held[i] = append(held[i], claimed[i]...)
			}
			empty := true
			for _, h := range held {
				empty = empty && len(h) == 0
			}
			if empty {
				break
			}
		}
		el := time.Since(t0)
		b.StopTimer()
		b.ReportMetric(float64(done)/el.Seconds(), "logs/s")
		if cpu1 := mariadbCPU(); cpu0 >= 0 && cpu1 > cpu0 {
			b.ReportMetric(float64((cpu1-cpu0).Microseconds())/float64(done), "db-µs/log")
		}
		b.ReportMetric(float64(redoLSN(b, raw)-lsn0)/float64(done), "redo-B/log")
	}
}

// redoLSN returns InnoDB's current log sequence number: the redo log's
// bytes written since the server was created.
func redoLSN(b *testing.B, raw *sql.DB) int64 {
	b.Helper()
	var name string
	var lsn int64
	if err := raw.QueryRow("SHOW GLOBAL STATUS LIKE 'Innodb_lsn_current'").Scan(&name, &lsn); err != nil {
		b.Fatalf("read the redo log's sequence number: %v", err)
	}
	return lsn
}

// mariadbCPU returns the CPU time (user and system) the local mariadbd
// process has used, or -1 when none runs here.
func mariadbCPU() time.Duration {
	comms, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, c := range comms {
		name, err := os.ReadFile(c)
		if err != nil || strings.TrimSpace(string(name)) != "mariadbd" {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(filepath.Dir(c), "stat"))
		if err != nil {
			return -1
		}
		// The fields after the command's closing parenthesis: utime is
		// the 12th, stime the 13th, in clock ticks (100 per second).
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) < 13 {
			return -1
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		s, _ := strconv.ParseInt(f[12], 10, 64)
		return time.Duration(u+s) * 10 * time.Millisecond
	}
	return -1
}
