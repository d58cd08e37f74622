package health

import (
	"context"
	"fmt"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// SendFailures marks a connection down when delivery meets a
// connection-level failure on it (unreachable, no answer in time,
// credentials refused), without waiting for the next health check, so
// that failover passes over it at once. The health check job brings it
// back: the first check that passes stores healthy and raises
// core.EventConnectionRecovered. Set the fields before use.
type SendFailures struct {
	State HealthStore
	// Alerts, when set, hears of the connection going down.
	Alerts core.Alerter
	// Site names the site in alerts.
	Site string
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// MarkDown stores conn as down with reason (an attempt's error, which the
// drivers already scrub of secrets) and raises core.EventConnectionDown
// when conn, as the caller last read it, was not down already.
func (f *SendFailures) MarkDown(ctx context.Context, conn *core.Connection, reason string) error {
	now := time.Now().UTC()
	if f.Now != nil {
		now = f.Now().UTC()
	}
	h := core.ConnectionHealth{Status: core.HealthDown, CheckedAt: now, Error: "Delivery failed: " + reason}
	if err := f.State.UpdateConnectionHealth(context.WithoutCancel(ctx), conn.ID, h); err != nil {
		return fmt.Errorf("mark connection %d down: %w", conn.ID, err)
	}
	if f.Alerts != nil && conn.HealthStatus != core.HealthDown {
		f.Alerts.Raise(context.WithoutCancel(ctx), core.Alert{
			Event:        core.EventConnectionDown,
			Title:        fmt.Sprintf("Connection down: %s", conn.Name),
			Message:      fmt.Sprintf("Sending through connection %d %q (%s) failed: %s", conn.ID, conn.Name, conn.Driver, reason),
			ConnectionID: conn.ID, ConnectionName: conn.Name, Site: f.Site, At: now,
		})
	}
	return nil
}
