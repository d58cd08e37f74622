// Package dashboard serves the admin dashboard: delivery statistics and
// chart data computed in the site's time zone from the roll-up of final
// outcomes, the recent activity from the email log, and the onboarding
// wizard that creates the first connection, makes it the default and
// sends a test email through it.
package dashboard

import (
	"context"
	"fmt"
	"time"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/period"
	"github.com/mailsvc/mailsvc/core"
)

// OutcomeCounter reads the roll-up of final delivery outcomes.
type OutcomeCounter interface {
	// OutcomeBuckets returns the counts of final outcomes per 15-minute
	// UTC bucket (core.OutcomeBucketSize), connection and status, for the
	// buckets whose Start is in [from, to), ordered by Start.
	OutcomeBuckets(ctx context.Context, from, to time.Time) ([]core.OutcomeBucket, error)
}

// QueueCounter counts the messages waiting or being sent: the Queued and
// Sending fields of its answer (the others are left zero). It reads only
// the queue's own index, so it stays cheap on a log of millions of rows.
type QueueCounter interface {
	PendingCounts(ctx context.Context) (core.QueueStats, error)
}

// LogFinder lists logs newest first (core.LogStore.FindLogs).
type LogFinder interface {
	FindLogs(ctx context.Context, f core.LogFilter) ([]*core.Log, int, error)
}

// ConnectionFinder lists the stored connections (core.ConnectionStore),
// for the names beside the counts.
type ConnectionFinder interface {
	FindConnections(ctx context.Context, f core.ConnectionFilter) ([]*core.Connection, int, error)
}

// Site reads what the dashboard needs of the WordPress site.
type Site interface {
	// TimeZone returns the site's time zone as wp_timezone() does:
	// timezone_string, else gmt_offset, else UTC.
	TimeZone(ctx context.Context) (*time.Location, error)
	// AdminEmail returns the site's admin address, or "" when unknown.
	AdminEmail(ctx context.Context) (string, error)
}

// ConnectionEditor creates and updates connections with the driver's
// validation, secrets encrypted and answers masked (app.Connections).
type ConnectionEditor interface {
	Get(ctx context.Context, id int64) (*core.Connection, error)
	Create(ctx context.Context, in app.ConnectionInput) (*core.Connection, error)
	Update(ctx context.Context, id int64, in app.ConnectionInput) (*core.Connection, error)
	// Delete removes a connection that no setting points at.
	Delete(ctx context.Context, id int64) error
}

// SettingsEditor reads and updates the free settings (app.Settings).
type SettingsEditor interface {
	Get(ctx context.Context) (map[string]any, error)
	Update(ctx context.Context, patch map[string]any) (map[string]any, error)
}

// ConnectionTester sends a test email through a connection
// (app.ConnectionActions.TestConnection).
type ConnectionTester interface {
	TestConnection(ctx context.Context, id int64, to string) (*app.TestEmailResult, error)
}

// Service is the dashboard. Outcomes, Queue, Logs and Connections serve
// the statistics, chart and activity; Store, Editor, Settings and Tester
// the onboarding wizard.
type Service struct {
	Outcomes    OutcomeCounter
	Queue       QueueCounter
	Logs        LogFinder
	Connections ConnectionFinder
	// Site gives the time zone and the admin address; nil means UTC and
	// no admin address (standalone).
	Site Site
	// EmailControls gives the counts of core emails the email controls
	// stopped (GET /dashboard/stats); nil leaves them out.
	EmailControls core.EmailControlCounter

	// Store keeps the wizard's state in the settings scope
	// ScopeOnboarding.
	Store    core.SettingsStore
	Editor   ConnectionEditor
	Settings SettingsEditor
	Tester   ConnectionTester
	// Use, on a multisite network, limits the wizard (which sets the
	// network's default connection) to the network's connections: a
	// connection a site created for itself is answered as a missing one.
	// Nil (a single site) lets it name any connection.
	Use core.ConnectionUse

	// Capture, when set, is the staging guard, whose state the stats
	// show.
	Capture CaptureReader
	// Retrying, when set, counts the messages waiting for a retry (the
	// stats' retrying count and the attention's next attempt).
	Retrying RetryCounter
	// SendHealth, when set, gives the health of the connections' real
	// sends, beside the health check's verdict.
	SendHealth SendHealthReader

	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// CaptureReader reads the staging guard's state (app/capture).
type CaptureReader interface {
	State(ctx context.Context) (core.CaptureState, error)
}

func (s *Service) now() time.Time { return core.NowFrom(s.Now) }

// location returns the site's time zone, UTC without a Site.
func (s *Service) location(ctx context.Context) (*time.Location, error) {
	return period.Zone(ctx, s.Site)
}

// outcomes reads the roll-up over [from, to).
func (s *Service) outcomes(ctx context.Context, from, to time.Time) ([]core.OutcomeBucket, error) {
	if s.Outcomes == nil {
		return nil, core.Errorf(core.EUNAVAILABLE, "Delivery statistics are not available.")
	}
	b, err := s.Outcomes.OutcomeBuckets(ctx, from.UTC(), to.UTC())
	if err != nil {
		return nil, fmt.Errorf("read outcome roll-up: %w", err)
	}
	return b, nil
}
