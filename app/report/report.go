package report

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/app/period"
	"github.com/mailsvc/mailsvc/core"
)

// Bounds of what a report reads and shows.
const (
	// MaxFailuresRead bounds the failed logs read for the failure
	// reasons: the most recent ones of the period.
	MaxFailuresRead = 1000
	// TopReasons is how many failure reasons a report lists.
	TopReasons = 5
	// MaxDayBars bounds the days shown one bar each.
	MaxDayBars = 62
)

// Totals counts the final outcomes of a period.
type Totals struct {
	// Sent counts the messages that reached a final status: Delivered +
	// Failed.
	Sent      int64 `json:"sent"`
	Delivered int64 `json:"delivered"`
	Failed    int64 `json:"failed"`
	// Partial counts the delivered messages some recipients of which were
	// refused (a part of Delivered).
	Partial int64 `json:"partial"`
	// SuccessRate is Delivered / Sent in percent (two decimals), nil when
	// nothing was sent.
	SuccessRate *float64 `json:"success_rate"`
}

func (t *Totals) add(b core.OutcomeBucket) {
	switch b.Status {
	case core.StatusDelivered:
		t.Delivered += b.Count
		t.Sent += b.Count
	case core.StatusFailed:
		t.Failed += b.Count
		t.Sent += b.Count
	case core.OutcomeCountPartial:
		t.Partial += b.Count
	}
}

func (t *Totals) rate() {
	t.SuccessRate = nil
	if t.Sent > 0 {
		r := math.Round(float64(t.Delivered)*10000/float64(t.Sent)) / 100
		t.SuccessRate = &r
	}
}

// Change compares a period with the one before it.
type Change struct {
	// Sent is the difference in messages sent; SentPercent the same in
	// percent of the previous period (nil when it sent nothing).
	Sent        int64    `json:"sent"`
	SentPercent *float64 `json:"sent_percent"`
	Failed      int64    `json:"failed"`
	// SuccessRatePoints is the difference of the success rates in
	// percentage points (nil when either period sent nothing).
	SuccessRatePoints *float64 `json:"success_rate_points"`
}

// ConnectionLine is one connection's part of a report. ID 0 counts the
// messages that reached no connection; Name is "" for a connection
// deleted since.
type ConnectionLine struct {
	ID        int64    `json:"id"`
	Name      string   `json:"name"`
	Driver    string   `json:"driver"`
	Active    bool     `json:"is_active"`
	Delivered int64    `json:"delivered"`
	Failed    int64    `json:"failed"`
	Rate      *float64 `json:"success_rate"`
	// PreviousSent counts its messages of the previous period.
	PreviousSent int64 `json:"previous_sent"`
	// Health is the verdict of its last health check (core.Health*), with
	// the error and the time of that check.
	Health        string     `json:"health_status"`
	HealthError   string     `json:"health_error,omitempty"`
	LastCheckedAt *time.Time `json:"last_checked_at,omitempty"`
	stored        bool
}

// Sent counts the connection's messages that reached a final status.
func (c ConnectionLine) Sent() int64 { return c.Delivered + c.Failed }

// DayLine counts one local day of a report's period.
type DayLine struct {
	Date      time.Time `json:"date"`
	Delivered int64     `json:"delivered"`
	Failed    int64     `json:"failed"`
}

// FailureReason is one reason messages failed for, with how many.
type FailureReason struct {
	Reason string `json:"reason"`
	Count  int    `json:"count"`
}

// QueueState is the queue when the report was made.
type QueueState struct {
	Queued         int        `json:"queued"`
	Sending        int        `json:"sending"`
	OldestQueuedAt *time.Time `json:"oldest_queued_at"`
}

// Report is the content of one summary report.
type Report struct {
	SiteName  string `json:"site_name"`
	SiteURL   string `json:"site_url"`
	TimeZone  string `json:"timezone"`
	Frequency string `json:"frequency"`
	Period    Period `json:"period"`
	Previous  Period `json:"previous"`

	Totals         Totals           `json:"totals"`
	PreviousTotals Totals           `json:"previous_totals"`
	Change         Change           `json:"change"`
	Connections    []ConnectionLine `json:"connections"`
	Days           []DayLine        `json:"days"`
	FailureReasons []FailureReason  `json:"failure_reasons"`
	// FailuresRead counts the failed logs the reasons were read from; it
	// is below Totals.Failed when more failed than MaxFailuresRead, or
	// when logs were purged or not kept.
	FailuresRead int               `json:"failures_read"`
	Queue        QueueState        `json:"queue"`
	Alerts       []core.AlertCount `json:"alerts"`
	AlertsTotal  int64             `json:"alerts_total"`
	GeneratedAt  time.Time         `json:"generated_at"`
}

// build gathers the report of period p (in loc).
func (s *Service) build(ctx context.Context, p Period, loc *time.Location, freq string) (*Report, error) {
	prev := p.Previous()
	r := &Report{TimeZone: loc.String(), Frequency: freq, Period: p, Previous: prev, GeneratedAt: s.now().In(loc)}
	r.SiteURL = s.SiteURL
	if s.Site != nil {
		name, err := s.Site.Name(ctx)
		if err != nil {
			return nil, fmt.Errorf("site name: %w", err)
		}
		r.SiteName = name
	}
	if r.SiteName == "" {
		r.SiteName = hostOf(r.SiteURL)
	}
	// One read of the roll-up covers both periods.
	buckets, err := s.Outcomes.OutcomeBuckets(ctx, period.FloorBucket(prev.From).UTC(), period.CeilBucket(p.To).UTC())
	if err != nil {
		return nil, fmt.Errorf("read outcome roll-up: %w", err)
	}
	cur := map[int64]*Totals{}
	before := map[int64]*Totals{}
	var days []DayLine
	if p.To.Sub(p.From) > 25*time.Hour && p.To.Sub(p.From) <= MaxDayBars*25*time.Hour {
		for d := period.Midnight(p.From, loc, 0); d.Before(p.To); d = period.Midnight(d, loc, 1) {
			days = append(days, DayLine{Date: d})
		}
	}
	for _, b := range buckets {
		switch {
		case contains(p, b.Start):
			r.Totals.add(b)
			tallyOf(cur, b.ConnectionID).add(b)
			if i := dayIndex(days, b.Start); i >= 0 {
				switch b.Status {
				case core.StatusDelivered:
					days[i].Delivered += b.Count
				case core.StatusFailed:
					days[i].Failed += b.Count
				}
			}
		case contains(prev, b.Start):
			r.PreviousTotals.add(b)
			tallyOf(before, b.ConnectionID).add(b)
		}
	}
	r.Totals.rate()
	r.PreviousTotals.rate()
	r.Change = change(r.Totals, r.PreviousTotals)
	r.Days = days
	if r.Connections, err = s.connections(ctx, cur, before); err != nil {
		return nil, err
	}
	if r.FailureReasons, r.FailuresRead, err = s.failureReasons(ctx, p); err != nil {
		return nil, err
	}
	if r.Queue, err = s.queue(ctx); err != nil {
		return nil, err
	}
	r.Alerts = []core.AlertCount{}
	if s.Alerts != nil {
		alerts, err := s.Alerts.CountAlerts(ctx, p.From.UTC(), p.To.UTC())
		if err != nil {
			return nil, fmt.Errorf("count alerts: %w", err)
		}
		for _, a := range alerts {
			r.AlertsTotal += a.Count
		}
		r.Alerts = append(r.Alerts, alerts...)
	}
	return r, nil
}

// contains reports whether the bucket starting at t falls in p. Buckets
// are 15 minutes wide and every zone's midnight falls on one's start, so
// a calendar period holds whole buckets.
func contains(p Period, t time.Time) bool {
	return !t.Before(period.FloorBucket(p.From)) && t.Before(period.CeilBucket(p.To))
}

func tallyOf(m map[int64]*Totals, id int64) *Totals {
	t := m[id]
	if t == nil {
		t = &Totals{}
		m[id] = t
	}
	return t
}

// dayIndex returns the index of the day holding t, or -1.
func dayIndex(days []DayLine, t time.Time) int {
	i := sort.Search(len(days), func(i int) bool { return days[i].Date.After(t) })
	return i - 1
}

func change(cur, prev Totals) Change {
	c := Change{Sent: cur.Sent - prev.Sent, Failed: cur.Failed - prev.Failed}
	if prev.Sent > 0 {
		v := math.Round(float64(c.Sent)*1000/float64(prev.Sent)) / 10
		c.SentPercent = &v
	}
	if cur.SuccessRate != nil && prev.SuccessRate != nil {
		v := math.Round((*cur.SuccessRate-*prev.SuccessRate)*100) / 100
		c.SuccessRatePoints = &v
	}
	return c
}

// connections lists every stored connection, and any other id with
// outcomes in either period, by volume then id.
func (s *Service) connections(ctx context.Context, cur, before map[int64]*Totals) ([]ConnectionLine, error) {
	byID := map[int64]*ConnectionLine{}
	var out []*ConnectionLine
	line := func(id int64) *ConnectionLine {
		if l := byID[id]; l != nil {
			return l
		}
		l := &ConnectionLine{ID: id, Health: core.HealthUnknown}
		byID[id] = l
		out = append(out, l)
		return l
	}
	if s.Connections != nil {
		conns, _, err := s.Connections.FindConnections(ctx, core.ConnectionFilter{})
		if err != nil {
			return nil, fmt.Errorf("list connections: %w", err)
		}
		for _, c := range conns {
			l := line(c.ID)
			l.Name, l.Driver, l.Active, l.stored = c.Name, c.Driver, c.IsActive, true
			if c.HealthStatus != "" {
				l.Health = c.HealthStatus
			}
			l.LastCheckedAt = c.LastCheckedAt
			if c.HealthStatus == core.HealthDown || c.HealthStatus == core.HealthDegraded {
				l.HealthError = c.LastError
			}
		}
	}
	for id, t := range cur {
		l := line(id)
		l.Delivered, l.Failed = t.Delivered, t.Failed
		t.rate()
		l.Rate = t.SuccessRate
	}
	for id, t := range before {
		line(id).PreviousSent = t.Sent
	}
	sort.SliceStable(out, func(i, j int) bool {
		if a, b := out[i].Sent(), out[j].Sent(); a != b {
			return a > b
		}
		return out[i].ID < out[j].ID
	})
	res := make([]ConnectionLine, 0, len(out))
	for _, l := range out {
		if !l.stored && l.Sent() == 0 && l.PreviousSent == 0 {
			continue
		}
		res = append(res, *l)
	}
	return res, nil
}

var (
	emailPattern = regexp.MustCompile(`<?[^\s<>@"',;]+@[^\s<>@"',;]+>?`)
	spaces       = regexp.MustCompile(`\s+`)
)

// Reason normalises a log's last error into a failure reason: its first
// line, addresses replaced with <address> (so that one refusal of many
// recipients counts as one reason), whitespace folded, at most 160
// characters.
func Reason(lastError string) string {
	r := strings.TrimSpace(lastError)
	if i := strings.IndexAny(r, "\r\n"); i >= 0 {
		r = r[:i]
	}
	r = emailPattern.ReplaceAllString(r, "<address>")
	r = strings.TrimSpace(spaces.ReplaceAllString(r, " "))
	if r == "" {
		return "(no error recorded)"
	}
	if rs := []rune(r); len(rs) > 160 {
		r = string(rs[:159]) + "…"
	}
	return r
}

// failureReasons counts the reasons of the failed logs created in p (the
// most recent MaxFailuresRead), most frequent first.
func (s *Service) failureReasons(ctx context.Context, p Period) ([]FailureReason, int, error) {
	out := []FailureReason{}
	if s.Logs == nil {
		return out, 0, nil
	}
	logs, _, err := s.Logs.FindLogs(ctx, core.LogFilter{Status: core.StatusFailed, CreatedFrom: p.From.UTC(), CreatedBefore: p.To.UTC(),
		Limit: MaxFailuresRead, CountUpTo: 1})
	if err != nil {
		return nil, 0, fmt.Errorf("read failed logs: %w", err)
	}
	counts := map[string]int{}
	for _, l := range logs {
		counts[Reason(l.LastError)]++
	}
	for r, n := range counts {
		out = append(out, FailureReason{Reason: r, Count: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Reason < out[j].Reason
	})
	if len(out) > TopReasons {
		out = out[:TopReasons]
	}
	return out, len(logs), nil
}

// queue reads the queue as it is now.
func (s *Service) queue(ctx context.Context) (QueueState, error) {
	var q QueueState
	if s.Queue == nil {
		return q, nil
	}
	counts, err := s.Queue.PendingCounts(ctx)
	if err != nil {
		return q, fmt.Errorf("queue counts: %w", err)
	}
	q.Queued, q.Sending = counts.Queued, counts.Sending
	if q.OldestQueuedAt, err = s.Queue.OldestQueuedAt(ctx); err != nil {
		return q, fmt.Errorf("oldest queued message: %w", err)
	}
	return q, nil
}

// hostOf returns the host of a URL, or the URL itself.
func hostOf(u string) string {
	s := u
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
	}
	if i := strings.IndexAny(s, "/?#"); i >= 0 {
		s = s[:i]
	}
	return s
}
