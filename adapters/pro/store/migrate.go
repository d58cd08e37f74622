package store

import (
	"context"
	"fmt"

	"github.com/mailsvc/mailsvc/adapters/store"
)

func init() { store.RegisterMigrations("pro", migrations) }

// mysqlTableOptions ends every MySQL CREATE TABLE, as in the service's
// own migrations.
const mysqlTableOptions = " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci"

// migrations is the Pro add-on's schema history, its versions recorded in
// {prefix}mailsvc_pro_migrations (see store.RegisterMigrations). Never
// edit or reorder an entry that has shipped: append a new version. Every
// statement is idempotent: the tables of a version may already exist,
// created by the service's own migration that held them before this
// list did (noted per version), and then the version changes nothing.
var migrations = []store.Migration{
	{
		// The service's own version 5 created these before.
		Version: 1,
		Name:    "routing rules, sender groups and daily send counters",
		MySQL: []string{
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_routing_rules (
				id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
				name VARCHAR(191) NOT NULL,
				conditions LONGTEXT NOT NULL,
				connection_id BIGINT UNSIGNED NOT NULL,
				priority INT NOT NULL DEFAULT 0,
				is_active TINYINT(1) NOT NULL DEFAULT 1,
				created_at DATETIME(6) NOT NULL,
				updated_at DATETIME(6) NOT NULL,
				PRIMARY KEY (id),
				KEY idx_priority (priority, id)
			)` + mysqlTableOptions,
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_sender_groups (
				sender VARCHAR(254) NOT NULL,
				strategy VARCHAR(16) NOT NULL,
				members LONGTEXT NOT NULL,
				updated_at DATETIME(6) NOT NULL,
				PRIMARY KEY (sender)
			)` + mysqlTableOptions,
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_send_counts (
				connection_id BIGINT UNSIGNED NOT NULL,
				day CHAR(10) NOT NULL,
				sent BIGINT UNSIGNED NOT NULL DEFAULT 0,
				PRIMARY KEY (day, connection_id)
			)` + mysqlTableOptions,
		},
		SQLite: []string{
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_routing_rules (
				id INTEGER PRIMARY KEY AUTOINCREMENT,
				name TEXT NOT NULL,
				conditions TEXT NOT NULL,
				connection_id INTEGER NOT NULL,
				priority INTEGER NOT NULL DEFAULT 0,
				is_active INTEGER NOT NULL DEFAULT 1,
				created_at DATETIME NOT NULL,
				updated_at DATETIME NOT NULL
			)`,
			`CREATE INDEX IF NOT EXISTS {prefix}mailsvc_routing_rules_priority ON {prefix}mailsvc_routing_rules (priority, id)`,
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_sender_groups (
				sender TEXT NOT NULL PRIMARY KEY,
				strategy TEXT NOT NULL,
				members TEXT NOT NULL,
				updated_at DATETIME NOT NULL
			)`,
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_send_counts (
				connection_id INTEGER NOT NULL,
				day TEXT NOT NULL,
				sent INTEGER NOT NULL DEFAULT 0,
				PRIMARY KEY (day, connection_id)
			) WITHOUT ROWID`,
		},
	},
	{
		// The service's own version 6 created this before.
		Version: 2,
		Name:    "the suppression list",
		MySQL: []string{
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_suppressions (
				id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
				email VARCHAR(254) NOT NULL,
				reason VARCHAR(32) NOT NULL,
				source_event VARCHAR(255) NOT NULL DEFAULT '',
				created_at DATETIME(6) NOT NULL,
				PRIMARY KEY (id),
				UNIQUE KEY uq_email (email)
			)` + mysqlTableOptions,
		},
		SQLite: []string{
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_suppressions (
				id INTEGER PRIMARY KEY AUTOINCREMENT,
				email TEXT NOT NULL COLLATE NOCASE UNIQUE,
				reason TEXT NOT NULL,
				source_event TEXT NOT NULL DEFAULT '',
				created_at DATETIME NOT NULL
			)`,
		},
	},
	{
		// The service's own versions 6, 8, 9, 11 and 24 created these
		// before: a database they migrated keeps its tables and rows, and
		// this version changes nothing there. A database they migrated
		// only in part (to a version from 6 to 23) gets the tables it
		// lacks, the repeated events' site column (the step, on SQLite),
		// and, when the event roll-ups are new while events are already
		// recorded, the roll-ups of those events, built as version 11
		// built them: only into empty tables, so nothing counts twice.
		Version: 3,
		Name:    "provider events, webhook replay memory and event roll-ups",
		MySQL: []string{
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_log_events (
				id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
				log_id BIGINT UNSIGNED NOT NULL,
				provider VARCHAR(32) NOT NULL,
				event VARCHAR(32) NOT NULL,
				occurred_at DATETIME(6) NOT NULL,
				detail LONGTEXT NOT NULL,
				created_at DATETIME(6) NOT NULL,
				PRIMARY KEY (id),
				KEY idx_log (log_id, id),
				CONSTRAINT {prefix}mailsvc_log_events_log FOREIGN KEY (log_id)
					REFERENCES {prefix}mailsvc_logs (id) ON DELETE CASCADE
			)` + mysqlTableOptions,
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_webhook_seen (
				provider VARCHAR(32) NOT NULL,
				event_id VARCHAR(191) NOT NULL,
				expires_at DATETIME(6) NOT NULL,
				PRIMARY KEY (provider, event_id),
				KEY idx_expires (expires_at)
			)` + mysqlTableOptions,
			`CREATE INDEX IF NOT EXISTS idx_occurred ON {prefix}mailsvc_log_events (occurred_at, provider, event, log_id)`,
			`CREATE INDEX IF NOT EXISTS idx_event_occurred ON {prefix}mailsvc_log_events (event, occurred_at, log_id)`,
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_event_buckets (
				width_minutes SMALLINT UNSIGNED NOT NULL,
				bucket_start DATETIME(6) NOT NULL,
				provider VARCHAR(32) NOT NULL,
				event VARCHAR(32) NOT NULL,
				connection_id BIGINT UNSIGNED NOT NULL,
				source VARCHAR(191) NOT NULL,
				shard TINYINT UNSIGNED NOT NULL DEFAULT 0,
				events BIGINT UNSIGNED NOT NULL DEFAULT 0,
				repeats BIGINT UNSIGNED NOT NULL DEFAULT 0,
				kind_repeats BIGINT UNSIGNED NOT NULL DEFAULT 0,
				PRIMARY KEY (width_minutes, bucket_start, provider, event, connection_id, source, shard)
			)` + mysqlTableOptions,
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_event_repeats (
				event_id BIGINT UNSIGNED NOT NULL,
				occurred_at DATETIME(6) NOT NULL,
				provider VARCHAR(32) NOT NULL,
				event VARCHAR(32) NOT NULL,
				connection_id BIGINT UNSIGNED NOT NULL,
				source VARCHAR(191) NOT NULL,
				provider_prev_at DATETIME(6) NULL,
				kind_prev_at DATETIME(6) NULL,
				site_id BIGINT UNSIGNED NOT NULL DEFAULT 1,
				PRIMARY KEY (occurred_at, event_id),
				UNIQUE KEY uq_event (event_id),
				KEY idx_event_occurred (event, occurred_at, kind_prev_at, connection_id, source)
			)` + mysqlTableOptions,
			`ALTER TABLE {prefix}mailsvc_event_repeats ADD COLUMN IF NOT EXISTS site_id BIGINT UNSIGNED NOT NULL DEFAULT 1, ALGORITHM=INSTANT`,
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_site_event_buckets (
				width_minutes SMALLINT UNSIGNED NOT NULL,
				bucket_start DATETIME(6) NOT NULL,
				site_id BIGINT UNSIGNED NOT NULL,
				provider VARCHAR(32) NOT NULL,
				event VARCHAR(32) NOT NULL,
				connection_id BIGINT UNSIGNED NOT NULL,
				source VARCHAR(191) NOT NULL,
				shard TINYINT UNSIGNED NOT NULL DEFAULT 0,
				events BIGINT UNSIGNED NOT NULL DEFAULT 0,
				repeats BIGINT UNSIGNED NOT NULL DEFAULT 0,
				kind_repeats BIGINT UNSIGNED NOT NULL DEFAULT 0,
				PRIMARY KEY (width_minutes, bucket_start, site_id, provider, event, connection_id, source, shard)
			)` + mysqlTableOptions,
			`INSERT INTO {prefix}mailsvc_event_repeats (event_id, occurred_at, provider, event, connection_id, source, provider_prev_at, kind_prev_at)
				SELECT id, occurred_at, provider, event, connection_id, source, provider_prev_at, kind_prev_at FROM (
					SELECT e.id, e.occurred_at, e.provider, e.event, COALESCE(l.sent_connection_id, 0) AS connection_id, l.source,
						LAG(e.occurred_at) OVER (PARTITION BY e.log_id, e.provider, e.event ORDER BY e.occurred_at, e.id) AS provider_prev_at,
						LAG(e.occurred_at) OVER (PARTITION BY e.log_id, e.event ORDER BY e.occurred_at, e.id) AS kind_prev_at
					FROM {prefix}mailsvc_log_events e JOIN {prefix}mailsvc_logs l ON l.id = e.log_id
				) chains WHERE (provider_prev_at IS NOT NULL OR kind_prev_at IS NOT NULL)` + whenRollupsEmpty + `
				ON DUPLICATE KEY UPDATE provider_prev_at = VALUES(provider_prev_at), kind_prev_at = VALUES(kind_prev_at)`,
			`INSERT INTO {prefix}mailsvc_event_buckets (width_minutes, bucket_start, provider, event, connection_id, source, shard, events, repeats, kind_repeats)
				SELECT 15, CAST(DATE_FORMAT(e.occurred_at, '%Y-%m-%d %H:00:00') AS DATETIME(6)) + INTERVAL (MINUTE(e.occurred_at) DIV 15) * 15 MINUTE,
					e.provider, e.event, COALESCE(l.sent_connection_id, 0), l.source, 0,
					COUNT(*), COUNT(r.provider_prev_at), COUNT(r.kind_prev_at)
				FROM {prefix}mailsvc_log_events e JOIN {prefix}mailsvc_logs l ON l.id = e.log_id
					LEFT JOIN {prefix}mailsvc_event_repeats r ON r.event_id = e.id
				WHERE NOT EXISTS (SELECT 1 FROM {prefix}mailsvc_event_buckets)
				GROUP BY 2, 3, 4, 5, 6
				ON DUPLICATE KEY UPDATE events = VALUES(events), repeats = VALUES(repeats), kind_repeats = VALUES(kind_repeats)`,
			`INSERT INTO {prefix}mailsvc_event_buckets (width_minutes, bucket_start, provider, event, connection_id, source, shard, events, repeats, kind_repeats)
				SELECT 60, CAST(DATE_FORMAT(bucket_start, '%Y-%m-%d %H:00:00') AS DATETIME(6)), provider, event, connection_id, source, 0,
					SUM(events), SUM(repeats), SUM(kind_repeats)
				FROM {prefix}mailsvc_event_buckets WHERE width_minutes = 15` + whenNoWidth(60) + ` GROUP BY 2, 3, 4, 5, 6
				ON DUPLICATE KEY UPDATE events = VALUES(events), repeats = VALUES(repeats), kind_repeats = VALUES(kind_repeats)`,
			`INSERT INTO {prefix}mailsvc_event_buckets (width_minutes, bucket_start, provider, event, connection_id, source, shard, events, repeats, kind_repeats)
				SELECT 1440, CAST(DATE(bucket_start) AS DATETIME(6)), provider, event, connection_id, source, 0,
					SUM(events), SUM(repeats), SUM(kind_repeats)
				FROM {prefix}mailsvc_event_buckets WHERE width_minutes = 15` + whenNoWidth(1440) + ` GROUP BY 2, 3, 4, 5, 6
				ON DUPLICATE KEY UPDATE events = VALUES(events), repeats = VALUES(repeats), kind_repeats = VALUES(kind_repeats)`,
		},
		SQLite: []string{
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_log_events (
				id INTEGER PRIMARY KEY AUTOINCREMENT,
				log_id INTEGER NOT NULL REFERENCES {prefix}mailsvc_logs (id) ON DELETE CASCADE,
				provider TEXT NOT NULL,
				event TEXT NOT NULL,
				occurred_at DATETIME NOT NULL,
				detail TEXT NOT NULL,
				created_at DATETIME NOT NULL
			)`,
			`CREATE INDEX IF NOT EXISTS {prefix}mailsvc_log_events_log ON {prefix}mailsvc_log_events (log_id, id)`,
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_webhook_seen (
				provider TEXT NOT NULL,
				event_id TEXT NOT NULL,
				expires_at DATETIME NOT NULL,
				PRIMARY KEY (provider, event_id)
			)`,
			`CREATE INDEX IF NOT EXISTS {prefix}mailsvc_webhook_seen_expires ON {prefix}mailsvc_webhook_seen (expires_at)`,
			`CREATE INDEX IF NOT EXISTS {prefix}mailsvc_log_events_occurred ON {prefix}mailsvc_log_events (occurred_at, provider, event, log_id)`,
			`CREATE INDEX IF NOT EXISTS {prefix}mailsvc_log_events_event_occurred ON {prefix}mailsvc_log_events (event, occurred_at, log_id)`,
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_event_buckets (
				width_minutes INTEGER NOT NULL,
				bucket_start DATETIME NOT NULL,
				provider TEXT NOT NULL,
				event TEXT NOT NULL,
				connection_id INTEGER NOT NULL,
				source TEXT NOT NULL,
				shard INTEGER NOT NULL DEFAULT 0,
				events INTEGER NOT NULL DEFAULT 0,
				repeats INTEGER NOT NULL DEFAULT 0,
				kind_repeats INTEGER NOT NULL DEFAULT 0,
				PRIMARY KEY (width_minutes, bucket_start, provider, event, connection_id, source, shard)
			)`,
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_event_repeats (
				event_id INTEGER NOT NULL PRIMARY KEY,
				occurred_at DATETIME NOT NULL,
				provider TEXT NOT NULL,
				event TEXT NOT NULL,
				connection_id INTEGER NOT NULL,
				source TEXT NOT NULL,
				provider_prev_at DATETIME NULL,
				kind_prev_at DATETIME NULL,
				site_id INTEGER NOT NULL DEFAULT 1
			)`,
			`CREATE INDEX IF NOT EXISTS {prefix}mailsvc_event_repeats_occurred ON {prefix}mailsvc_event_repeats
				(occurred_at, provider_prev_at, kind_prev_at, provider, event, connection_id, source)`,
			`CREATE INDEX IF NOT EXISTS {prefix}mailsvc_event_repeats_event_occurred ON {prefix}mailsvc_event_repeats
				(event, occurred_at, kind_prev_at, connection_id, source)`,
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_site_event_buckets (
				width_minutes INTEGER NOT NULL,
				bucket_start DATETIME NOT NULL,
				site_id INTEGER NOT NULL,
				provider TEXT NOT NULL,
				event TEXT NOT NULL,
				connection_id INTEGER NOT NULL,
				source TEXT NOT NULL,
				shard INTEGER NOT NULL DEFAULT 0,
				events INTEGER NOT NULL DEFAULT 0,
				repeats INTEGER NOT NULL DEFAULT 0,
				kind_repeats INTEGER NOT NULL DEFAULT 0,
				PRIMARY KEY (width_minutes, bucket_start, site_id, provider, event, connection_id, source, shard)
			)`,
			// Times are stored as the driver writes them in UTC
			// ("2006-01-02 15:04:05+00:00"), so bucket starts are built
			// in that form.
			`INSERT INTO {prefix}mailsvc_event_repeats (event_id, occurred_at, provider, event, connection_id, source, provider_prev_at, kind_prev_at)
				SELECT id, occurred_at, provider, event, connection_id, source, provider_prev_at, kind_prev_at FROM (
					SELECT e.id, e.occurred_at, e.provider, e.event, COALESCE(l.sent_connection_id, 0) AS connection_id, l.source,
						LAG(e.occurred_at) OVER (PARTITION BY e.log_id, e.provider, e.event ORDER BY e.occurred_at, e.id) AS provider_prev_at,
						LAG(e.occurred_at) OVER (PARTITION BY e.log_id, e.event ORDER BY e.occurred_at, e.id) AS kind_prev_at
					FROM {prefix}mailsvc_log_events e JOIN {prefix}mailsvc_logs l ON l.id = e.log_id
				) chains WHERE (provider_prev_at IS NOT NULL OR kind_prev_at IS NOT NULL)` + whenRollupsEmpty,
			`INSERT INTO {prefix}mailsvc_event_buckets (width_minutes, bucket_start, provider, event, connection_id, source, shard, events, repeats, kind_repeats)
				SELECT 15, strftime('%Y-%m-%d %H:', e.occurred_at) || printf('%02d', CAST(strftime('%M', e.occurred_at) AS INTEGER) / 15 * 15) || ':00+00:00',
					e.provider, e.event, COALESCE(l.sent_connection_id, 0), l.source, 0,
					COUNT(*), COUNT(r.provider_prev_at), COUNT(r.kind_prev_at)
				FROM {prefix}mailsvc_log_events e JOIN {prefix}mailsvc_logs l ON l.id = e.log_id
					LEFT JOIN {prefix}mailsvc_event_repeats r ON r.event_id = e.id
				WHERE NOT EXISTS (SELECT 1 FROM {prefix}mailsvc_event_buckets)
				GROUP BY 2, 3, 4, 5, 6`,
			`INSERT INTO {prefix}mailsvc_event_buckets (width_minutes, bucket_start, provider, event, connection_id, source, shard, events, repeats, kind_repeats)
				SELECT 60, strftime('%Y-%m-%d %H:00:00', bucket_start) || '+00:00', provider, event, connection_id, source, 0,
					SUM(events), SUM(repeats), SUM(kind_repeats)
				FROM {prefix}mailsvc_event_buckets WHERE width_minutes = 15` + whenNoWidth(60) + ` GROUP BY 2, 3, 4, 5, 6`,
			`INSERT INTO {prefix}mailsvc_event_buckets (width_minutes, bucket_start, provider, event, connection_id, source, shard, events, repeats, kind_repeats)
				SELECT 1440, strftime('%Y-%m-%d 00:00:00', bucket_start) || '+00:00', provider, event, connection_id, source, 0,
					SUM(events), SUM(repeats), SUM(kind_repeats)
				FROM {prefix}mailsvc_event_buckets WHERE width_minutes = 15` + whenNoWidth(1440) + ` GROUP BY 2, 3, 4, 5, 6`,
		},
		Step: addRepeatsSite,
	},
	{
		// The outcome roll-ups by source (15 minutes, hour and UTC day)
		// and by site (analytics.go, source_rollup.go, site_rollup.go).
		// The service's own versions 8, 11 and 24 created them before,
		// its version 11 filling the hour and day roll-ups by source from
		// the 15-minute ones: on a database those versions left, this
		// changes nothing. A database that stood between the service's
		// versions 8 and 11 holds 15-minute rows and no hour or day
		// roll-ups yet: they are built here from those rows as version 11
		// built them, only while the table is empty (so a retry after a
		// crash, or a database that already had them, keeps its rows).
		Version: 4,
		Name:    "outcome roll-ups by source and by site (analytics)",
		MySQL: []string{
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_source_buckets (
				bucket_start DATETIME(6) NOT NULL,
				source VARCHAR(191) NOT NULL,
				status VARCHAR(16) NOT NULL,
				shard TINYINT UNSIGNED NOT NULL DEFAULT 0,
				messages BIGINT UNSIGNED NOT NULL DEFAULT 0,
				PRIMARY KEY (bucket_start, source, status, shard)
			)` + mysqlTableOptions,
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_source_rollups (
				width_minutes SMALLINT UNSIGNED NOT NULL,
				bucket_start DATETIME(6) NOT NULL,
				source VARCHAR(191) NOT NULL,
				status VARCHAR(16) NOT NULL,
				shard TINYINT UNSIGNED NOT NULL DEFAULT 0,
				messages BIGINT UNSIGNED NOT NULL DEFAULT 0,
				PRIMARY KEY (width_minutes, bucket_start, source, status, shard)
			)` + mysqlTableOptions,
			`INSERT INTO {prefix}mailsvc_source_rollups (width_minutes, bucket_start, source, status, shard, messages)
				SELECT 60, CAST(DATE_FORMAT(bucket_start, '%Y-%m-%d %H:00:00') AS DATETIME(6)), source, status, 0, SUM(messages)
				FROM {prefix}mailsvc_source_buckets
				WHERE NOT EXISTS (SELECT 1 FROM {prefix}mailsvc_source_rollups)
				GROUP BY 2, 3, 4`,
			`INSERT INTO {prefix}mailsvc_source_rollups (width_minutes, bucket_start, source, status, shard, messages)
				SELECT 1440, CAST(DATE(bucket_start) AS DATETIME(6)), source, status, 0, SUM(messages)
				FROM {prefix}mailsvc_source_buckets
				WHERE NOT EXISTS (SELECT 1 FROM {prefix}mailsvc_source_rollups WHERE width_minutes = 1440)
				GROUP BY 2, 3, 4`,
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_site_rollups (
				width_minutes SMALLINT UNSIGNED NOT NULL,
				bucket_start DATETIME(6) NOT NULL,
				site_id BIGINT UNSIGNED NOT NULL,
				connection_id BIGINT UNSIGNED NOT NULL,
				source VARCHAR(191) NOT NULL,
				status VARCHAR(16) NOT NULL,
				shard TINYINT UNSIGNED NOT NULL DEFAULT 0,
				messages BIGINT UNSIGNED NOT NULL DEFAULT 0,
				PRIMARY KEY (width_minutes, bucket_start, site_id, connection_id, source, status, shard)
			)` + mysqlTableOptions,
		},
		SQLite: []string{
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_source_buckets (
				bucket_start DATETIME NOT NULL,
				source TEXT NOT NULL,
				status TEXT NOT NULL,
				shard INTEGER NOT NULL DEFAULT 0,
				messages INTEGER NOT NULL DEFAULT 0,
				PRIMARY KEY (bucket_start, source, status, shard)
			)`,
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_source_rollups (
				width_minutes INTEGER NOT NULL,
				bucket_start DATETIME NOT NULL,
				source TEXT NOT NULL,
				status TEXT NOT NULL,
				shard INTEGER NOT NULL DEFAULT 0,
				messages INTEGER NOT NULL DEFAULT 0,
				PRIMARY KEY (width_minutes, bucket_start, source, status, shard)
			)`,
			// Times are stored as the driver writes them in UTC
			// ("2006-01-02 15:04:05+00:00"), so bucket starts are built
			// in that form.
			`INSERT INTO {prefix}mailsvc_source_rollups (width_minutes, bucket_start, source, status, shard, messages)
				SELECT 60, strftime('%Y-%m-%d %H:00:00', bucket_start) || '+00:00', source, status, 0, SUM(messages)
				FROM {prefix}mailsvc_source_buckets
				WHERE NOT EXISTS (SELECT 1 FROM {prefix}mailsvc_source_rollups)
				GROUP BY 2, 3, 4`,
			`INSERT INTO {prefix}mailsvc_source_rollups (width_minutes, bucket_start, source, status, shard, messages)
				SELECT 1440, strftime('%Y-%m-%d 00:00:00', bucket_start) || '+00:00', source, status, 0, SUM(messages)
				FROM {prefix}mailsvc_source_buckets
				WHERE NOT EXISTS (SELECT 1 FROM {prefix}mailsvc_source_rollups WHERE width_minutes = 1440)
				GROUP BY 2, 3, 4`,
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_site_rollups (
				width_minutes INTEGER NOT NULL,
				bucket_start DATETIME NOT NULL,
				site_id INTEGER NOT NULL,
				connection_id INTEGER NOT NULL,
				source TEXT NOT NULL,
				status TEXT NOT NULL,
				shard INTEGER NOT NULL DEFAULT 0,
				messages INTEGER NOT NULL DEFAULT 0,
				PRIMARY KEY (width_minutes, bucket_start, site_id, connection_id, source, status, shard)
			)`,
		},
	},
}

// whenRollupsEmpty limits the backfill of the repeated events to a
// database whose event roll-ups are empty: new tables (the events
// recorded before are counted once, here), never roll-ups that the
// recording of events already keeps.
const whenRollupsEmpty = ` AND NOT EXISTS (SELECT 1 FROM {prefix}mailsvc_event_repeats)
					AND NOT EXISTS (SELECT 1 FROM {prefix}mailsvc_event_buckets)`

// whenNoWidth limits the backfill of a coarser bucket width (the sums of
// the 15-minute buckets just built) to roll-ups that hold none of that
// width yet: every recorded event writes all widths at once.
func whenNoWidth(minutes int) string {
	return fmt.Sprintf(` AND NOT EXISTS (SELECT 1 FROM {prefix}mailsvc_event_buckets WHERE width_minutes = %d)`, minutes)
}

// addRepeatsSite is version 3's step: on SQLite, which has no ADD COLUMN
// IF NOT EXISTS, it gives the repeated events the site column that the
// service's own version 24 added before, unless they have it (a database
// migrated by an earlier build, or the table created above). On MySQL a
// statement of the version does it.
func addRepeatsSite(ctx context.Context, db *store.DB, q store.MigrationConn) error {
	if db.Dialect() != store.DialectSQLite {
		return nil
	}
	has, err := db.Schema().ColumnExists(ctx, q, "{prefix}mailsvc_event_repeats", "site_id")
	if err != nil || has {
		return err
	}
	if _, err := q.ExecContext(ctx, db.Expand(`ALTER TABLE {prefix}mailsvc_event_repeats ADD COLUMN site_id INTEGER NOT NULL DEFAULT 1`)); err != nil {
		return fmt.Errorf("add the repeated events' site column: %w", err)
	}
	return nil
}
