package dashboard

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/mailsvc/mailsvc/app/period"
	"github.com/mailsvc/mailsvc/core"
)

// PeriodStats counts the outcomes of one period.
type PeriodStats struct {
	Period
	Counts
	Total int64 `json:"total"`
	// SuccessRate is delivered / (delivered + failed) in percent, null
	// when both are 0.
	SuccessRate *float64 `json:"success_rate"`
}

func newPeriodStats(p Period, c Counts) PeriodStats {
	return PeriodStats{Period: p, Counts: c, Total: c.Delivered + c.Failed, SuccessRate: c.SuccessRate()}
}

// Totals counts messages per status: queued, retrying and sending live
// from the queue, delivered and failed over the chosen range.
type Totals struct {
	Queued int `json:"queued"`
	// Retrying counts the queued messages already tried that wait for
	// another attempt (a part of Queued); the rest of Queued is pending,
	// never tried yet.
	Retrying  int   `json:"retrying"`
	Sending   int   `json:"sending"`
	Delivered int64 `json:"delivered"`
	Failed    int64 `json:"failed"`
	// Partial counts the delivered messages some recipients of which
	// were refused (a part of Delivered).
	Partial int64 `json:"partial"`
	// SuccessRate is delivered / (delivered + failed + retrying) in
	// percent: a message retrying is not a success yet. Pending messages
	// are left out. Null when all three are 0.
	SuccessRate *float64 `json:"success_rate"`
	// Captured counts the messages the staging guard (or simulation
	// mode) holds, live: neither queued backlog nor failures.
	Captured int `json:"captured"`
}

// ConnectionStats counts one connection's outcomes over the chosen range,
// with its health now. ID 0 counts the messages that reached no
// connection; Name is "" for a connection deleted since.
type ConnectionStats struct {
	ID          int64    `json:"id"`
	Name        string   `json:"name"`
	Driver      string   `json:"driver"`
	Delivered   int64    `json:"delivered"`
	Failed      int64    `json:"failed"`
	SuccessRate *float64 `json:"success_rate"`
	// Health is healthy, degraded, failing or unknown, from the health
	// check and the real sends (health.Effective); HealthSince is when
	// it began failing (null unless failing).
	Health      string     `json:"health"`
	HealthSince *time.Time `json:"health_since"`
	// LastError is the last failure (real send or check, the later),
	// the connection's secrets masked, and LastErrorAt when (null when
	// only the check's error is known, which LastCheckedAt dates).
	LastError   string     `json:"last_error"`
	LastErrorAt *time.Time `json:"last_error_at"`
	// LastCheckedAt is the last health check, LastSentAt the last
	// message delivered through it (null when unknown).
	LastCheckedAt *time.Time `json:"last_checked_at"`
	LastSentAt    *time.Time `json:"last_sent_at"`
}

// Stats is GET /dashboard/stats.
type Stats struct {
	// TimeZone names the site's time zone in which days are counted.
	TimeZone   string      `json:"timezone"`
	Totals     Totals      `json:"totals"`
	Today      PeriodStats `json:"today"`
	Last7Days  PeriodStats `json:"last_7_days"`
	Last30Days PeriodStats `json:"last_30_days"`
	Range      PeriodStats `json:"range"`
	// Connections lists every stored connection (and any other that has
	// outcomes in the range), by id.
	Connections []ConnectionStats `json:"connections"`
	// EmailControls counts the core emails the email controls stopped
	// over the range; absent when the service keeps no such counts.
	EmailControls *SuppressedStats `json:"email_controls,omitempty"`
	// Capture is the staging guard's state (docs/staging.md); null
	// without a guard.
	Capture *core.CaptureState `json:"capture"`
	// Attention is what needs the owner's attention now.
	Attention *Attention `json:"attention"`
}

// Stats returns the delivery statistics: the live queue, today, the last
// 7 and 30 days (calendar days in the site's time zone, today included),
// and per connection over the range q (default the last 30 days). It reads
// the roll-up once, over the union of those periods.
func (s *Service) Stats(ctx context.Context, q RangeQuery) (*Stats, error) {
	loc, err := s.location(ctx)
	if err != nil {
		return nil, err
	}
	now := s.now()
	rng, fields := q.resolve(now, loc, DefaultDays)
	if err := core.Invalid(fields); err != nil {
		return nil, err
	}
	today, last7, last30 := period.LastDays(now, loc, 1), period.LastDays(now, loc, 7), period.LastDays(now, loc, 30)
	rng = rng.Aligned(loc)
	from, to := last30.From, last30.To
	if rng.From.Before(from) {
		from = rng.From
	}
	if rng.To.After(to) {
		to = rng.To
	}
	buckets, err := s.outcomes(ctx, from, to)
	if err != nil {
		return nil, err
	}
	queue, err := s.Queue.PendingCounts(ctx)
	if err != nil {
		return nil, fmt.Errorf("queue counts: %w", err)
	}
	var cToday, c7, c30, cRange Counts
	perConn := map[int64]*Counts{}
	for _, b := range buckets {
		if today.Contains(b.Start) {
			cToday.add(b)
		}
		if last7.Contains(b.Start) {
			c7.add(b)
		}
		if last30.Contains(b.Start) {
			c30.add(b)
		}
		if rng.Contains(b.Start) {
			cRange.add(b)
			c := perConn[b.ConnectionID]
			if c == nil {
				c = &Counts{}
				perConn[b.ConnectionID] = c
			}
			c.add(b)
		}
	}
	var stored []*core.Connection
	if s.Connections != nil {
		if stored, _, err = s.Connections.FindConnections(ctx, core.ConnectionFilter{}); err != nil {
			return nil, fmt.Errorf("list connections: %w", err)
		}
	}
	hs, err := s.connectionHealth(ctx, stored)
	if err != nil {
		return nil, err
	}
	conns := connectionStats(stored, hs, perConn)
	suppressed, err := s.suppressed(ctx, rng.From, rng.To, loc)
	if err != nil {
		return nil, err
	}
	var capture *core.CaptureState
	if s.Capture != nil {
		st, err := s.Capture.State(ctx)
		if err != nil {
			return nil, fmt.Errorf("capture state: %w", err)
		}
		capture = &st
	}
	attention, err := s.attention(ctx, stored, hs)
	if err != nil {
		return nil, err
	}
	out := &Stats{
		TimeZone: loc.String(),
		Totals: Totals{Queued: queue.Queued, Retrying: attention.Retrying, Sending: queue.Sending,
			Delivered: cRange.Delivered, Failed: cRange.Failed, Partial: cRange.Partial,
			SuccessRate: rate(cRange.Delivered, cRange.Failed+int64(attention.Retrying))},
		Today:         newPeriodStats(today, cToday),
		Last7Days:     newPeriodStats(last7, c7),
		Last30Days:    newPeriodStats(last30, c30),
		Range:         newPeriodStats(rng, cRange),
		Connections:   conns,
		EmailControls: suppressed,
		Capture:       capture,
		Attention:     attention,
	}
	if capture != nil {
		out.Totals.Captured = capture.Captured
	}
	return out, nil
}

// connectionStats names the per-connection counts, with each one's
// health: every stored connection, and the ids with outcomes that no
// longer exist.
func connectionStats(stored []*core.Connection, hs map[int64]connHealth, counts map[int64]*Counts) []ConnectionStats {
	out := []ConnectionStats{}
	seen := map[int64]bool{}
	for _, c := range stored {
		seen[c.ID] = true
		cs := connectionStatsOf(c.ID, c.Name, c.Driver, counts[c.ID])
		h := hs[c.ID]
		cs.Health, cs.HealthSince, cs.LastError, cs.LastErrorAt, cs.LastCheckedAt = h.status, h.since, h.err, h.errAt, c.LastCheckedAt
		if h.rec != nil {
			cs.LastSentAt = h.rec.LastSentAt
		}
		out = append(out, cs)
	}
	for id, c := range counts {
		if !seen[id] {
			cs := connectionStatsOf(id, "", "", c)
			cs.Health = core.HealthUnknown
			out = append(out, cs)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func connectionStatsOf(id int64, name, driver string, c *Counts) ConnectionStats {
	if c == nil {
		c = &Counts{}
	}
	return ConnectionStats{ID: id, Name: name, Driver: driver, Delivered: c.Delivered, Failed: c.Failed, SuccessRate: c.SuccessRate()}
}
