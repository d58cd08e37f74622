package analytics

import (
	"context"
	"fmt"
	"sort"

	"github.com/mailsvc/mailsvc/app/pro/events"
	"github.com/mailsvc/mailsvc/core"
)

// ConnectionFigures compares one connection's figures. ID 0 counts the
// messages that reached no connection; Name and Driver are "" for a
// connection deleted since.
type ConnectionFigures struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Driver string `json:"driver"`
	Comparison
}

// SourceFigures compares one source's figures: a plugin or theme slug,
// "sendmail", "smtp", "test", or "" when the caller was not known.
type SourceFigures struct {
	Source string `json:"source"`
	Comparison
}

// Overview is GET /pro/analytics/overview.
type Overview struct {
	// TimeZone names the site's time zone in which dates are read.
	TimeZone string `json:"timezone"`
	// Period is the chosen range widened to whole 15-minute buckets;
	// PreviousPeriod the range of the same length just before it.
	Period         Period     `json:"period"`
	PreviousPeriod Period     `json:"previous_period"`
	Totals         Comparison `json:"totals"`
	// Connections lists every stored connection (for one site of a
	// network, those its messages went through) and any other with
	// outcomes in either period, by id.
	Connections []ConnectionFigures `json:"connections"`
	// Sources lists every source with outcomes in either period, the
	// most sent first.
	Sources []SourceFigures `json:"sources"`
}

// pair holds the figures of the chosen and the previous period.
type pair struct{ cur, prev Figures }

// Overview returns the delivery figures over q and the previous period of
// the same length, in total, per connection and per source. It reads the
// outcome roll-ups (by connection and by source) once over both periods,
// and the bounce and complaint events of each period.
func (s *Service) Overview(ctx context.Context, q RangeQuery) (*Overview, error) {
	p, loc, err := s.resolve(ctx, q)
	if err != nil {
		return nil, err
	}
	if s.Rollups == nil {
		return nil, core.Errorf(core.EUNAVAILABLE, "Delivery statistics are not available.")
	}
	cur := p.Aligned(loc)
	prev := cur.Previous()
	conns := map[int64]*pair{}
	sources := map[string]*pair{}
	var total pair
	// slot returns the figures of the period t is in, nil outside both.
	slot := func(pr *pair, inCur, inPrev bool) *Figures {
		switch {
		case inCur:
			return &pr.cur
		case inPrev:
			return &pr.prev
		}
		return nil
	}
	for _, per := range []struct {
		p     Period
		inCur bool
	}{{cur, true}, {prev, false}} {
		buckets, err := s.Rollups.OutcomeTotals(ctx, per.p.From.UTC(), per.p.To.UTC())
		if err != nil {
			return nil, fmt.Errorf("read outcome roll-ups: %w", err)
		}
		for _, b := range buckets {
			slot(&total, per.inCur, !per.inCur).addOutcome(b.Status, b.Count)
			slot(pairOf(conns, b.ConnectionID), per.inCur, !per.inCur).addOutcome(b.Status, b.Count)
		}
		sbuckets, err := s.Rollups.SourceTotals(ctx, per.p.From.UTC(), per.p.To.UTC())
		if err != nil {
			return nil, fmt.Errorf("read source roll-ups: %w", err)
		}
		for _, b := range sbuckets {
			slot(pairOf(sources, b.Source), per.inCur, !per.inCur).addOutcome(b.Status, b.Count)
		}
	}
	if s.Events != nil {
		for _, per := range []struct {
			p     Period
			inCur bool
		}{{cur, true}, {prev, false}} {
			tallies, err := s.Events.LogEventTallies(ctx, per.p.From.UTC(), per.p.To.UTC(), []string{events.EventBounced, events.EventComplained})
			if err != nil {
				return nil, fmt.Errorf("read provider events: %w", err)
			}
			for _, t := range tallies {
				slot(&total, per.inCur, !per.inCur).addEvent(t.Event, t.Messages)
				slot(pairOf(conns, t.ConnectionID), per.inCur, !per.inCur).addEvent(t.Event, t.Messages)
				slot(pairOf(sources, t.Source), per.inCur, !per.inCur).addEvent(t.Event, t.Messages)
			}
		}
	}
	stored, err := s.connections(ctx)
	if err != nil {
		return nil, err
	}
	if core.SiteScope(ctx) == 0 {
		// The whole network lists every connection; one site of a
		// network only those its messages went through, never another
		// site's own.
		for id := range stored {
			pairOf(conns, id)
		}
	}
	out := &Overview{TimeZone: loc.String(), Period: cur, PreviousPeriod: prev,
		Totals: compare(total.cur, total.prev), Connections: []ConnectionFigures{}, Sources: []SourceFigures{}}
	for id, pr := range conns {
		cf := ConnectionFigures{ID: id, Comparison: compare(pr.cur, pr.prev)}
		if c := stored[id]; c != nil {
			cf.Name, cf.Driver = c.Name, c.Driver
		}
		out.Connections = append(out.Connections, cf)
	}
	sort.Slice(out.Connections, func(i, j int) bool { return out.Connections[i].ID < out.Connections[j].ID })
	for src, pr := range sources {
		out.Sources = append(out.Sources, SourceFigures{Source: src, Comparison: compare(pr.cur, pr.prev)})
	}
	sort.Slice(out.Sources, func(i, j int) bool {
		a, b := out.Sources[i], out.Sources[j]
		if a.Current.Sent != b.Current.Sent {
			return a.Current.Sent > b.Current.Sent
		}
		return a.Source < b.Source
	})
	return out, nil
}

// pairOf returns m[k], created when missing.
func pairOf[K comparable](m map[K]*pair, k K) *pair {
	p := m[k]
	if p == nil {
		p = &pair{}
		m[k] = p
	}
	return p
}
