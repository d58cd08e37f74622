package delivery

import (
	"context"
	"time"
)

// ReplicaTTL is how long a replica's heartbeat keeps it counted as live;
// each process beats every ReplicaTTL/3.
const ReplicaTTL = 15 * time.Second

// ReplicaCounter counts the live processes delivering from one queue
// (the store: a heartbeat row per process that expires). The engine
// splits each connection's max_per_second and daily quota between them.
type ReplicaCounter interface {
	// ReplicaHeartbeat records owner alive until now+ttl and returns how
	// many replicas are alive, itself included (at least 1).
	ReplicaHeartbeat(ctx context.Context, owner string, ttl time.Duration) (int, error)
	// ReplicaLeave forgets owner at once (a clean shutdown).
	ReplicaLeave(ctx context.Context, owner string) error
}

// beat records this process alive and learns how many replicas are.
func (s *pool) beat(ctx context.Context) {
	if s.o.Replicas == nil {
		return
	}
	n, err := s.o.Replicas.ReplicaHeartbeat(ctx, s.o.Owner, ReplicaTTL)
	if err != nil {
		if ctx.Err() == nil {
			s.o.Logger.Warn("replica heartbeat", "err", err)
		}
		return
	}
	if old := s.live.Swap(int64(n)); old != int64(n) {
		s.o.Logger.Info("live replicas", "count", n)
	}
}

// heartbeat keeps this process counted among the live replicas until ctx
// ends (Run made the first beat), and then leaves.
func (s *pool) heartbeat(ctx context.Context) {
	if s.o.Replicas == nil {
		return
	}
	for {
		s.sleep(ctx, ReplicaTTL/3, false)
		if ctx.Err() != nil {
			break
		}
		s.beat(ctx)
	}
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := s.o.Replicas.ReplicaLeave(lctx, s.o.Owner); err != nil {
		s.o.Logger.Warn("replica leave", "err", err)
	}
}
