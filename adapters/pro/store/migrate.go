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
}
