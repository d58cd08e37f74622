package dashboard

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/mailsvc/mailsvc/app/health"
	"github.com/mailsvc/mailsvc/core"
)

// FailedWindow is how far back Attention counts failed messages.
const FailedWindow = 24 * time.Hour

// ServiceRunning is Attention.Service when the service answers (the
// bridge says "down" itself when it does not).
const ServiceRunning = "running"

// RetryCounter counts the queued messages waiting for a retry and their
// earliest next attempt (store.LogService.Retrying).
type RetryCounter interface {
	Retrying(ctx context.Context) (int, *time.Time, error)
}

// SendHealthReader reads the health of the connections' real sends
// (health.SendHealth.Read).
type SendHealthReader interface {
	Read(ctx context.Context) (map[int64]health.SendRecord, error)
}

// FailingConnection is a connection whose health is failing.
type FailingConnection struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
	// Since is when it began failing: the first of the failed attempts in
	// a row, or the health check that found it down.
	Since *time.Time `json:"since"`
	// LastError is the last failure, the connection's secrets masked.
	LastError string `json:"last_error"`
}

// Attention is what needs the site owner's attention (GET
// /dashboard/attention, and the attention object of GET
// /dashboard/stats).
type Attention struct {
	// Service is ServiceRunning.
	Service            string              `json:"service"`
	FailingConnections []FailingConnection `json:"failing_connections"`
	// Retrying counts the queued messages that were tried and wait for
	// another attempt; NextAttemptAt is the earliest of their next
	// attempts (null without any).
	Retrying      int        `json:"retrying"`
	NextAttemptAt *time.Time `json:"next_attempt_at"`
	// Failed24h counts the messages created in the last 24 hours that
	// failed for good and are still failed (a resent message is queued
	// again), up to 1000; LastFailedID is the newest of them.
	Failed24h    int    `json:"failed_24h"`
	LastFailedID *int64 `json:"last_failed_id"`
	// Held counts the messages held, waiting for the owner: Captured
	// (those the staging guard holds, status captured) + FloodHeld (those
	// the flood guard holds, status held; up to 1000).
	Held      int `json:"held"`
	Captured  int `json:"captured"`
	FloodHeld int `json:"flood_held"`
	// Count is Failed24h + Held: the messages that need the owner, shown
	// on wp-admin's Mail menu.
	Count int `json:"count"`
}

// connHealth is a connection's health from its check and its sends:
// the status, since when it fails, and the later of the check's and the
// sends' errors (errAt nil for the check's, which its LastCheckedAt
// dates).
type connHealth struct {
	status string
	since  *time.Time
	rec    *health.SendRecord
	err    string
	errAt  *time.Time
}

// connectionHealth returns the effective health of each connection.
func (s *Service) connectionHealth(ctx context.Context, conns []*core.Connection) (map[int64]connHealth, error) {
	var recs map[int64]health.SendRecord
	if s.SendHealth != nil {
		var err error
		if recs, err = s.SendHealth.Read(ctx); err != nil {
			return nil, fmt.Errorf("send health: %w", err)
		}
	}
	out := make(map[int64]connHealth, len(conns))
	for _, c := range conns {
		var rec *health.SendRecord
		if r, ok := recs[c.ID]; ok {
			rec = &r
		}
		h := connHealth{status: health.Effective(c, rec), rec: rec, err: c.LastError}
		if rec != nil && rec.LastError != "" && rec.LastErrorAt != nil && (c.LastCheckedAt == nil || rec.LastErrorAt.After(*c.LastCheckedAt)) {
			h.err, h.errAt = rec.LastError, rec.LastErrorAt
		}
		if h.status == health.SendFailing {
			if rec != nil && rec.Status == health.SendFailing {
				since := rec.Since
				h.since = &since
			} else {
				h.since = c.LastCheckedAt
			}
		}
		out[c.ID] = h
	}
	return out, nil
}

// Attention returns what needs the owner's attention now.
func (s *Service) Attention(ctx context.Context) (*Attention, error) {
	var conns []*core.Connection
	if s.Connections != nil {
		var err error
		if conns, _, err = s.Connections.FindConnections(ctx, core.ConnectionFilter{}); err != nil {
			return nil, fmt.Errorf("list connections: %w", err)
		}
	}
	hs, err := s.connectionHealth(ctx, conns)
	if err != nil {
		return nil, err
	}
	return s.attention(ctx, conns, hs)
}

func (s *Service) attention(ctx context.Context, conns []*core.Connection, hs map[int64]connHealth) (*Attention, error) {
	a := &Attention{Service: ServiceRunning, FailingConnections: []FailingConnection{}}
	for _, c := range conns {
		h := hs[c.ID]
		if !c.IsActive || h.status != health.SendFailing {
			continue
		}
		a.FailingConnections = append(a.FailingConnections, FailingConnection{ID: c.ID, Name: c.Name, Since: h.since, LastError: h.err})
	}
	sort.Slice(a.FailingConnections, func(i, j int) bool { return a.FailingConnections[i].ID < a.FailingConnections[j].ID })
	if s.Retrying != nil {
		n, next, err := s.Retrying.Retrying(ctx)
		if err != nil {
			return nil, fmt.Errorf("retrying messages: %w", err)
		}
		a.Retrying, a.NextAttemptAt = n, next
	}
	if s.Logs != nil {
		failed, total, err := s.Logs.FindLogs(ctx, core.LogFilter{Status: core.StatusFailed, CreatedFrom: s.now().Add(-FailedWindow), CountUpTo: 1000, Limit: 1})
		if err != nil {
			return nil, fmt.Errorf("failed messages: %w", err)
		}
		a.Failed24h = min(total, 1000)
		if len(failed) > 0 {
			id := failed[0].ID
			a.LastFailedID = &id
		}
	}
	if s.Capture != nil {
		st, err := s.Capture.State(ctx)
		if err != nil {
			return nil, fmt.Errorf("capture state: %w", err)
		}
		a.Captured = st.Captured
	}
	if s.Logs != nil {
		_, total, err := s.Logs.FindLogs(ctx, core.LogFilter{Status: core.StatusHeld, CountUpTo: 1000, Limit: 1})
		if err != nil {
			return nil, fmt.Errorf("held messages: %w", err)
		}
		a.FloodHeld = min(total, 1000)
	}
	a.Held = a.Captured + a.FloodHeld
	a.Count = a.Failed24h + a.Held
	return a, nil
}
