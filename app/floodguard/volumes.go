package floodguard

import (
	"context"
	"fmt"
	"time"
)

// learnTimeout bounds one background learning read.
const learnTimeout = time.Minute

// maybeLearn starts learning the usual volumes in the background when
// they are older than LearnEvery (or were never learned) and no learning
// is under way.
func (g *Guard) maybeLearn(now time.Time) {
	if g.Volumes == nil {
		return
	}
	g.mu.Lock()
	due := !g.learning && (g.learnedAt.IsZero() || now.Sub(g.learnedAt) >= orDefault(g.LearnEvery, DefaultLearnEvery))
	if due {
		g.learning = true
	}
	g.mu.Unlock()
	if !due {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), learnTimeout)
		defer cancel()
		if err := g.Learn(ctx); err != nil {
			g.logger().Warn("flood guard: cannot learn the usual volumes; the last ones apply", "err", err)
		}
	}()
}

// Learn reads each source's usual hourly volume from the logs of the
// LearnWindow before the last hour (the hour itself is counted in
// memory). Sources no longer seen are forgotten.
func (g *Guard) Learn(ctx context.Context) error {
	now := g.now()
	recent := now.Add(-time.Hour)
	list, err := g.Volumes.SourceVolumes(ctx, now.Add(-orDefault(g.LearnWindow, DefaultLearnWindow)), recent)
	g.mu.Lock()
	defer g.mu.Unlock()
	g.learning = false
	g.learnedAt = now
	if err != nil {
		return fmt.Errorf("learn the usual volumes: %w", err)
	}
	usual := make(map[sourceKey]int64, len(list))
	for _, v := range list {
		usual[sourceKey{site: v.SiteID, source: v.Source}] = v.Usual()
	}
	g.usual = usual
	for k, s := range g.sources {
		if !s.flooding && s.hour.total(now) == 0 {
			delete(g.sources, k)
		}
	}
	return nil
}

// Usual returns the learned usual hourly volume of source of site.
func (g *Guard) Usual(site int64, source string) int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.usual[sourceKey{site: site, source: source}]
}
