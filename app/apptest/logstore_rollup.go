package apptest

import (
	"context"
	"fmt"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// countOutcome adds one final outcome to the roll-ups; s.mu is held.
func (s *LogStore) countOutcome(at time.Time, conn *int64, status string) {
	if status != core.StatusDelivered && status != core.StatusFailed && status != core.OutcomeCountPartial {
		return
	}
	k := outcomeKey{start: at.UTC().Truncate(core.OutcomeBucketSize), status: status}
	if conn != nil {
		k.conn = *conn
	}
	s.buckets[k]++
}

// OutcomeBuckets returns the roll-up counters whose bucket starts in
// [from, to), ordered by start, connection and status, as
// store.LogService.OutcomeBuckets does: every final outcome recorded or imported
// counts, and deleting logs lowers nothing.
func (s *LogStore) OutcomeBuckets(_ context.Context, from, to time.Time) ([]core.OutcomeBucket, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []core.OutcomeBucket{}
	for k, n := range s.buckets {
		if !k.start.Before(from) && k.start.Before(to) {
			out = append(out, core.OutcomeBucket{Start: k.start, ConnectionID: k.conn, Status: k.status, Count: n})
		}
	}
	core.SortOutcomeBuckets(out)
	return out, nil
}

// ImportLogs inserts imported delivered or failed logs with their own
// times, as store.LogService.ImportLogs does (all or none; IDs set; roll-ups grown
// by DeliveredAt or UpdatedAt).
func (s *LogStore) ImportLogs(_ context.Context, logs []*core.Log) error {
	for i, l := range logs {
		if l == nil || (l.Status != core.StatusDelivered && l.Status != core.StatusFailed) {
			return core.InvalidField("status", fmt.Sprintf("Imported log %d must be delivered or failed.", i))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now().UTC()
	for _, l := range logs {
		if l.CreatedAt.IsZero() {
			l.CreatedAt = now
		}
		if l.UpdatedAt.IsZero() {
			l.UpdatedAt = l.CreatedAt
		}
		at := l.UpdatedAt
		if l.Status == core.StatusDelivered {
			if l.DeliveredAt == nil || l.DeliveredAt.IsZero() {
				d := l.UpdatedAt
				l.DeliveredAt = &d
			}
			at = *l.DeliveredAt
		} else {
			l.DeliveredAt = nil
		}
		l.NextAttemptAt, l.LeaseOwner, l.LeaseUntil = l.CreatedAt, "", nil
		s.nextID++
		l.ID = s.nextID
		c := cloneLog(l)
		c.BodyMode, c.RedactedCount, c.AttachmentsKept = "", 0, true
		for i := range c.History {
			s.nextAtID++
			c.History[i].ID, c.History[i].LogID = s.nextAtID, l.ID
		}
		s.rows[l.ID] = c
		s.countOutcome(at, l.SentConnectionID, l.Status)
	}
	return nil
}
