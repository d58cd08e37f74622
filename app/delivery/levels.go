package delivery

import (
	"context"
	"strconv"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// LevelScope is the settings scope where the engine keeps each
// connection's concurrency level across restarts: the key is the
// connection id, the value the fleet's level (this process's level times
// the live replicas). It is runtime state, not configuration: no export
// or settings page shows it.
const LevelScope = "delivery_concurrency"

// levelSaveEvery is how often the levels that moved are written.
const levelSaveEvery = 5 * time.Second

// loadLevels reads the remembered levels, so that each connection's lane
// starts at its share of the fleet's last level instead of
// StartConcurrency. A failed read leaves them unknown.
func (s *pool) loadLevels(ctx context.Context) {
	if s.o.LevelStore == nil {
		return
	}
	m, err := s.o.LevelStore.LoadSettings(ctx, LevelScope)
	if err != nil {
		s.o.Logger.Warn("read the remembered concurrency levels", "err", err)
		return
	}
	remembered := make(map[int64]int, len(m))
	for k, v := range m {
		id, err := strconv.ParseInt(k, 10, 64)
		n, ok := core.AsInt(v)
		if err == nil && ok && n > 0 {
			remembered[id] = int(min(n, core.MaxConnectionConcurrency))
		}
	}
	s.lanes.mu.Lock()
	s.lanes.remembered = remembered
	s.lanes.mu.Unlock()
}

// saveLevels writes the levels that moved since the last write (all of
// them when all is set).
func (s *pool) saveLevels(ctx context.Context, all bool) {
	if s.o.LevelStore == nil {
		return
	}
	replicas := int(max(s.live.Load(), 1))
	s.lanes.mu.Lock()
	ls := make(map[int64]*lane, len(s.lanes.m))
	for id, ln := range s.lanes.m {
		ls[id] = ln
	}
	s.lanes.mu.Unlock()
	values := map[string]any{}
	for id, ln := range ls {
		if level, changed := ln.level(); changed || all {
			values[strconv.FormatInt(id, 10)] = int64(min(level*replicas, core.MaxConnectionConcurrency))
		}
	}
	if len(values) == 0 {
		return
	}
	if err := s.o.LevelStore.SaveSettings(ctx, LevelScope, values); err != nil {
		s.o.Logger.Warn("remember the concurrency levels", "err", err)
	}
}

// keepLevels writes the levels that moved every levelSaveEvery until ctx
// ends (Run writes them all once the last sends are done).
func (s *pool) keepLevels(ctx context.Context) {
	if s.o.LevelStore == nil {
		return
	}
	for {
		s.sleep(ctx, levelSaveEvery, false)
		if ctx.Err() != nil {
			return
		}
		s.saveLevels(ctx, false)
	}
}
