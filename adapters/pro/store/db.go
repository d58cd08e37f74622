// Package store keeps the Pro add-on's tables in the service's database:
// the routing rules, sender groups and daily send counters of
// app/pro/routing (routing.go), the suppression list of
// app/pro/suppression (suppression.go), the provider events of
// app/pro/events with the webhook replay memory (events.go) and the event
// roll-ups (event_rollup.go), and the outcome roll-ups by source and by
// site (source_rollup.go, site_rollup.go) with the reads of
// app/pro/analytics over them, the service's outcome roll-ups and the log
// (analytics.go), each concept a service taken from the one DB
// (services.go: Routing, Suppressions, Events, Analytics) that implements
// its use case's ports. It works on the service's own handle (a
// adapters/store.DB: the same connection pool, table prefix and
// dialect), with gorm for the routing rules and sender groups, which it
// models as rows, and database/sql for the rest, and creates its tables
// through its own schema history (migrate.go), registered with
// store.RegisterMigrations when this package is linked: a build without
// the Pro add-on creates none of them. Linking it also registers the
// outcome counter that grows the roll-ups by source and by site in the
// transaction that records the outcomes (store.RegisterOutcomeCounter),
// the roll-ups for compaction with the service's
// (store.RegisterRollupTables), and the deletion of the events naming an
// erased address (store.RegisterLogEraser, events_erase.go).
package store

import (
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
)

// DB is the Pro add-on's tables on the service's database handle. It
// holds the handle rather than embedding it: its only exported methods
// are its services (services.go), and the service's own ports are taken
// from the handle itself.
type DB struct {
	base *store.DB
}

// New returns the Pro tables on db, an open, migrated handle (its
// migration applied this package's schema history too).
func New(db *store.DB) *DB { return &DB{base: db} }

// now is the time stored for a change: UTC, to the microsecond, as the
// service's own tables store it.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
