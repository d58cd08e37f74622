package store

import "github.com/mailsvc/mailsvc/adapters/store"

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
		// Version 3 is the provider events' (webhook events, replay
		// memory, event roll-ups), moved from the service's history on
		// another branch: this empty entry only holds its place until
		// that branch is merged, and must not ship empty.
		Version: 3,
		Name:    "the provider events (placeholder)",
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
