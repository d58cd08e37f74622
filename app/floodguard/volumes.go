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
	last := g.learnedAt.Load()
	if last != 0 && now.Sub(time.Unix(0, last)) < orDefault(g.LearnEvery, DefaultLearnEvery) {
		return
	}
	if !g.learning.CompareAndSwap(false, true) {
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
// memory). Sources whose hour is empty and that are not flooding are
// forgotten.
func (g *Guard) Learn(ctx context.Context) error {
	now := g.now()
	defer g.learning.Store(false)
	defer g.learnedAt.Store(now.UnixNano())
	list, err := g.Volumes.SourceVolumes(ctx, now.Add(-orDefault(g.LearnWindow, DefaultLearnWindow)), now.Add(-time.Hour))
	if err != nil {
		return fmt.Errorf("learn the usual volumes: %w", err)
	}
	usual := make(map[sourceKey]int64, len(list))
	for _, v := range list {
		usual[sourceKey{site: v.SiteID, source: v.Source}] = v.Usual()
	}
	g.usual.Store(&usual)
	g.sources.Range(func(k, v any) bool {
		if s := v.(*sourceState); !s.flooding.Load() && s.hour.total(now) == 0 {
			g.sources.Delete(k)
		}
		return true
	})
	return nil
}

// Usual returns the learned usual hourly volume of source of site.
func (g *Guard) Usual(site int64, source string) int64 {
	if m := g.usual.Load(); m != nil {
		return (*m)[sourceKey{site: site, source: source}]
	}
	return 0
}
