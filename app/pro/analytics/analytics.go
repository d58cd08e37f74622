// Package analytics is the Pro add-on's delivery analytics: the overview
// (sent, delivered, failed, bounce and complaint rates per connection and
// per source, against the previous period of the same length), the
// deliverability per provider from the provider webhook events, and the
// CSV export of the log. The overview and the deliverability read only
// roll-ups (of the outcomes and of the provider events, by day, hour and
// 15 minutes), never the log or the events themselves, so their cost
// hardly grows with the log or the range; the export reads the log in
// keyset pages and streams them.
package analytics

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/mailsvc/mailsvc/app/period"
	"github.com/mailsvc/mailsvc/core"
)

// RollupReader reads the roll-ups of final delivery outcomes, summed by
// the database over a range of 15-minute UTC buckets (the whole days and
// hours of the range from coarser roll-ups, to the same sums).
type RollupReader interface {
	// OutcomeTotals sums the final outcomes whose bucket starts in
	// [from, to) per connection and status.
	OutcomeTotals(ctx context.Context, from, to time.Time) ([]core.OutcomeBucket, error)
	// SourceTotals sums the same outcomes per source and status.
	SourceTotals(ctx context.Context, from, to time.Time) ([]SourceBucket, error)
}

// EventReader reads the roll-ups of the provider webhook events.
type EventReader interface {
	// EventCounts counts the events that happened in [from, to) (15-minute
	// boundaries) per provider and event: the events and the distinct
	// messages.
	EventCounts(ctx context.Context, from, to time.Time) ([]EventCount, error)
	// LogEventTallies counts the distinct logs that received one of
	// events in [from, to), per event, sending connection and source.
	LogEventTallies(ctx context.Context, from, to time.Time, events []string) ([]LogEventTally, error)
}

// LogExporter reads the log in keyset pages (store.DB.ExportLogs).
type LogExporter interface {
	// ExportLogs returns the next page of logs created in [p.From, p.To)
	// in (CreatedAt, ID) order after the cursor of p.
	ExportLogs(ctx context.Context, p LogExportPage) ([]ExportedLog, error)
}

// ConnectionFinder lists the stored connections, for their names and
// drivers.
type ConnectionFinder interface {
	FindConnections(ctx context.Context, f core.ConnectionFilter) ([]*core.Connection, int, error)
}

// Service serves the three analytics routes.
type Service struct {
	Rollups     RollupReader
	Events      EventReader
	Logs        LogExporter
	Connections ConnectionFinder
	// Location returns the site's time zone, in which dates and days are
	// read; nil means UTC.
	Location func(ctx context.Context) (*time.Location, error)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger reports an export that failed after its first row was
	// written; nil means slog.Default().
	Logger *slog.Logger
}

func (s *Service) now() time.Time { return core.NowFrom(s.Now) }

func (s *Service) logger() *slog.Logger { return core.LoggerOr(s.Logger) }

// location returns the site's time zone (UTC when unknown).
func (s *Service) location(ctx context.Context) (*time.Location, error) {
	return period.Zone(ctx, period.ZoneFunc(s.Location))
}

// connections returns the stored connections by id.
func (s *Service) connections(ctx context.Context) (map[int64]*core.Connection, error) {
	out := map[int64]*core.Connection{}
	if s.Connections == nil {
		return out, nil
	}
	conns, _, err := s.Connections.FindConnections(ctx, core.ConnectionFilter{})
	if err != nil {
		return nil, fmt.Errorf("list connections: %w", err)
	}
	for _, c := range conns {
		out[c.ID] = c
	}
	return out, nil
}

// resolve reads q in the site's time zone.
func (s *Service) resolve(ctx context.Context, q RangeQuery) (Period, *time.Location, error) {
	loc, err := s.location(ctx)
	if err != nil {
		return Period{}, nil, err
	}
	p, fields := q.resolve(s.now(), loc)
	if err := core.Invalid(fields); err != nil {
		return Period{}, nil, err
	}
	return p, loc, nil
}
