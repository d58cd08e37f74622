package debuglog

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"gorm.io/gorm"
)

// slowestKept is how many of the slowest queries a summary lists.
const slowestKept = 5

// QueryLog records the queries run through a gorm database and writes
// their summary (count, total time, slowest) as a QUERIES line when
// flushed at shutdown. Queries are recorded by their SQL text with
// placeholders, never with bound values, which may be secrets.
type QueryLog struct {
	log *Log

	mu      sync.Mutex
	count   int
	total   time.Duration
	slowest []queryTime
}

type queryTime struct {
	SQL        string  `json:"sql"`
	DurationMS float64 `json:"duration_ms"`
	d          time.Duration
}

const startKey = "debuglog:start"

// InstallQueries registers gorm callbacks on db that time every create,
// query, update, delete, row and raw statement. With the Queries channel
// off it installs nothing and returns nil; a nil *QueryLog's Flush does
// nothing.
func (l *Log) InstallQueries(db *gorm.DB) (*QueryLog, error) {
	if l == nil || !l.opts.Queries || db == nil {
		return nil, nil
	}
	q := &QueryLog{log: l}
	before := func(tx *gorm.DB) { tx.InstanceSet(startKey, time.Now()) }
	after := func(tx *gorm.DB) {
		v, ok := tx.InstanceGet(startKey)
		start, _ := v.(time.Time)
		if !ok || start.IsZero() || tx.Statement == nil {
			return
		}
		q.record(tx.Statement.SQL.String(), time.Since(start))
	}
	cb := db.Callback()
	regs := []struct {
		name   string
		before func(string, func(*gorm.DB)) error
		after  func(string, func(*gorm.DB)) error
	}{
		{"create", func(n string, f func(*gorm.DB)) error { return cb.Create().Before("*").Register(n, f) }, func(n string, f func(*gorm.DB)) error { return cb.Create().After("*").Register(n, f) }},
		{"query", func(n string, f func(*gorm.DB)) error { return cb.Query().Before("*").Register(n, f) }, func(n string, f func(*gorm.DB)) error { return cb.Query().After("*").Register(n, f) }},
		{"update", func(n string, f func(*gorm.DB)) error { return cb.Update().Before("*").Register(n, f) }, func(n string, f func(*gorm.DB)) error { return cb.Update().After("*").Register(n, f) }},
		{"delete", func(n string, f func(*gorm.DB)) error { return cb.Delete().Before("*").Register(n, f) }, func(n string, f func(*gorm.DB)) error { return cb.Delete().After("*").Register(n, f) }},
		{"row", func(n string, f func(*gorm.DB)) error { return cb.Row().Before("*").Register(n, f) }, func(n string, f func(*gorm.DB)) error { return cb.Row().After("*").Register(n, f) }},
		{"raw", func(n string, f func(*gorm.DB)) error { return cb.Raw().Before("*").Register(n, f) }, func(n string, f func(*gorm.DB)) error { return cb.Raw().After("*").Register(n, f) }},
	}
	for _, r := range regs {
		if err := r.before("debuglog:before_"+r.name, before); err != nil {
			return nil, fmt.Errorf("install query timing on %s: %w", r.name, err)
		}
		if err := r.after("debuglog:after_"+r.name, after); err != nil {
			return nil, fmt.Errorf("install query timing on %s: %w", r.name, err)
		}
	}
	return q, nil
}

func (q *QueryLog) record(sql string, d time.Duration) {
	if sql == "" {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.count++
	q.total += d
	if len(q.slowest) < slowestKept || d > q.slowest[len(q.slowest)-1].d {
		q.slowest = append(q.slowest, queryTime{SQL: sql, d: d, DurationMS: float64(d.Microseconds()) / 1000})
		sort.SliceStable(q.slowest, func(i, j int) bool { return q.slowest[i].d > q.slowest[j].d })
		if len(q.slowest) > slowestKept {
			q.slowest = q.slowest[:slowestKept]
		}
	}
}

// QuerySummary is the content of a QUERIES line.
type QuerySummary struct {
	Count   int         `json:"count"`
	TotalMS float64     `json:"total_ms"`
	Slowest []queryTime `json:"slowest"`
}

// Summary returns the queries recorded so far.
func (q *QueryLog) Summary() QuerySummary {
	if q == nil {
		return QuerySummary{}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return QuerySummary{Count: q.count, TotalMS: float64(q.total.Microseconds()) / 1000, Slowest: append([]queryTime{}, q.slowest...)}
}

// Flush writes the summary as a QUERIES line (at shutdown).
func (q *QueryLog) Flush() {
	if q == nil {
		return
	}
	q.log.write(TagQueries, q.Summary())
}
