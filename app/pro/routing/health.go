package routing

import (
	"context"
	"maps"
	"slices"

	"github.com/mailsvc/mailsvc/app/delivery"
	"github.com/mailsvc/mailsvc/core"
)

var _ delivery.ConnectionFailureObserver = (*Service)(nil)

// HealthMarker stores a connection as down (app/health.SendFailures);
// conn is the connection as last read, so the marker can tell a
// transition.
type HealthMarker interface {
	MarkDown(ctx context.Context, conn *core.Connection, reason string) error
}

// ConnectionFailed implements delivery.ConnectionFailureObserver: a send
// through connection id failed at the connection level, so the
// connection is down. Choose passes over it at once in this process (its
// snapshot is changed), and on other replicas once they read the stored
// status that Health writes (within CacheTTL). A connection already down
// is left alone, so a burst of failures writes once. The health check job
// brings it back up when it answers again.
func (s *Service) ConnectionFailed(ctx context.Context, id int64, reason string) {
	snap, err := s.load(ctx)
	if err != nil {
		return
	}
	s.mu.Lock()
	if s.snap != nil {
		snap = s.snap
	}
	prev := snap.conns[id]
	if prev == nil || prev.HealthStatus == core.HealthDown {
		s.mu.Unlock()
		return
	}
	if s.snap != nil {
		s.snap = snap.withDown(id)
	}
	s.mu.Unlock()
	if s.Health == nil {
		return
	}
	if err := s.Health.MarkDown(ctx, prev, reason); err != nil {
		s.logger().Warn("sender groups: cannot mark a failing connection down", "connection", id, "error", err)
	}
}

// withDown returns a copy of snap in which connection id is down;
// snapshots are shared by readers, so nothing of snap is changed.
func (snap *snapshot) withDown(id int64) *snapshot {
	out := *snap
	out.conns = maps.Clone(snap.conns)
	out.connList = slices.Clone(snap.connList)
	c := *snap.conns[id]
	c.HealthStatus = core.HealthDown
	out.conns[id] = &c
	for i, lc := range out.connList {
		if lc.ID == id {
			out.connList[i] = &c
		}
	}
	return &out
}
