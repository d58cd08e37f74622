package app

import (
	"context"
	"fmt"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// HeldStore moves the logs the flood guard held (core.FloodStore).
type HeldStore interface {
	ReleaseHeld(ctx context.Context, ids []int64) (int, error)
	DiscardHeld(ctx context.Context, ids []int64) (int, error)
}

// heldChunk is how many held logs one step of a release or a discard
// reads and moves.
const heldChunk = 500

// maxHeldSteps bounds the steps of one release or discard.
const maxHeldSteps = 10000

// ReleaseHeld puts the held logs matching q's filters (those of GET
// /logs: status, if given, must be held) back in the queue, each once,
// and wakes the workers; it returns how many it released.
func (s *Logs) ReleaseHeld(ctx context.Context, q LogQuery) (int, error) {
	n, err := s.moveHeld(ctx, q, true)
	if n > 0 && s.HeldWake != nil {
		s.HeldWake()
	}
	return n, err
}

// DiscardHeld fails the held logs matching q's filters with
// core.FloodDiscardedError, each once, and returns how many it failed.
func (s *Logs) DiscardHeld(ctx context.Context, q LogQuery) (int, error) {
	return s.moveHeld(ctx, q, false)
}

// moveHeld releases (release) or discards the held logs matching q, a
// chunk at a time (each chunk read afresh: the logs moved are no longer
// held), among the logs queued before the request.
func (s *Logs) moveHeld(ctx context.Context, q LogQuery, release bool) (int, error) {
	if s.Held == nil {
		return 0, core.Errorf(core.ENOTFOUND, "The flood guard is not part of this service.")
	}
	move := s.Held.DiscardHeld
	if release {
		move = s.Held.ReleaseHeld
	}
	f, fields := logFilter(q)
	if q.Status != "" && q.Status != core.StatusHeld {
		fields["status"] = "Must be held, or left out: only held messages are released or discarded."
	}
	if err := s.checkFilter(f, fields); err != nil {
		return 0, err
	}
	f.Status, f.Offset, f.Limit, f.CountUpTo = core.StatusHeld, 0, heldChunk, 1
	if before := time.Now().UTC().Add(time.Microsecond); f.CreatedBefore.IsZero() || f.CreatedBefore.After(before) {
		f.CreatedBefore = before
	}
	total := 0
	for step := 0; step < maxHeldSteps; step++ {
		logs, _, err := s.Store.FindLogs(ctx, f)
		if err != nil {
			return total, fmt.Errorf("list held logs: %w", err)
		}
		if len(logs) == 0 {
			break
		}
		ids := make([]int64, len(logs))
		for i, l := range logs {
			ids[i] = l.ID
		}
		n, err := move(ctx, ids)
		total += n
		if err != nil {
			return total, err
		}
		if len(logs) < heldChunk || n == 0 {
			break
		}
	}
	return total, nil
}
