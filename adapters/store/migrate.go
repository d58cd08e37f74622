package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Migration is one versioned schema change, written out per dialect.
// Statements name tables as {prefix}name, expanded to the quoted, prefixed
// identifier (see Expand). A migration
// runs at most once per (database, prefix); its version is recorded in
// {prefix}mailsvc_migrations (a module's: see RegisterMigrations) in the
// same step (in the same transaction on SQLite; MySQL commits DDL
// implicitly, so there CREATE statements use IF NOT EXISTS to make a
// retry after a crash safe).
type Migration struct {
	Version int
	Name    string
	MySQL   []string
	SQLite  []string
	// Step, when set, runs after the version's statements, on the same
	// connection (MySQL) or in the same transaction (SQLite), before the
	// version is recorded: for a change a statement cannot say on both
	// dialects, such as adding a column only when it is missing (SQLite
	// has no ADD COLUMN IF NOT EXISTS; see ColumnExists). Like the
	// statements it must be safe to run again. An error stops Migrate.
	Step func(ctx context.Context, db *DB, q MigrationConn) error
}

// migration is the service's own list's name for a Migration.
type migration = Migration

// mysqlTableOptions ends every MySQL CREATE TABLE.
const mysqlTableOptions = " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci"

// migrations is the schema history, in version order. Never edit or
// reorder an entry that has shipped: append a new version that alters the
// tables deliberately (ALTER TABLE ...), with both dialects written out.
var migrations = []migration{
	{
		Version: 1,
		Name:    "connections and settings",
		MySQL: []string{
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_connections (
				id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
				name VARCHAR(191) NOT NULL,
				driver VARCHAR(64) NOT NULL,
				is_active TINYINT(1) NOT NULL DEFAULT 1,
				settings LONGTEXT NOT NULL,
				health_status VARCHAR(32) NOT NULL DEFAULT 'unknown',
				created_at DATETIME(6) NOT NULL,
				updated_at DATETIME(6) NOT NULL,
				PRIMARY KEY (id),
				KEY idx_driver (driver)
			)` + mysqlTableOptions,
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_settings (
				scope VARCHAR(64) NOT NULL,
				setting_key VARCHAR(191) NOT NULL,
				setting_value LONGTEXT NOT NULL,
				updated_at DATETIME(6) NOT NULL,
				PRIMARY KEY (scope, setting_key)
			)` + mysqlTableOptions,
		},
		SQLite: []string{
			`CREATE TABLE {prefix}mailsvc_connections (
				id INTEGER PRIMARY KEY AUTOINCREMENT,
				name TEXT NOT NULL,
				driver TEXT NOT NULL,
				is_active INTEGER NOT NULL DEFAULT 1,
				settings TEXT NOT NULL,
				health_status TEXT NOT NULL DEFAULT 'unknown',
				created_at DATETIME NOT NULL,
				updated_at DATETIME NOT NULL
			)`,
			`CREATE INDEX {prefix}mailsvc_connections_driver ON {prefix}mailsvc_connections (driver)`,
			`CREATE TABLE {prefix}mailsvc_settings (
				scope TEXT NOT NULL,
				setting_key TEXT NOT NULL,
				setting_value TEXT NOT NULL,
				updated_at DATETIME NOT NULL,
				PRIMARY KEY (scope, setting_key)
			)`,
		},
	},
	{
		Version: 2,
		Name:    "email log and delivery queue",
		MySQL: []string{
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_logs (
				id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
				status VARCHAR(16) NOT NULL,
				connection_id BIGINT UNSIGNED NULL,
				sent_connection_id BIGINT UNSIGNED NULL,
				source VARCHAR(191) NOT NULL DEFAULT '',
				recipients TEXT NOT NULL,
				subject TEXT NOT NULL,
				text_body LONGTEXT NOT NULL,
				html_body LONGTEXT NOT NULL,
				message LONGTEXT NOT NULL,
				attempts INT NOT NULL DEFAULT 0,
				phase_attempts INT NOT NULL DEFAULT 0,
				used_fallback TINYINT(1) NOT NULL DEFAULT 0,
				simulated TINYINT(1) NOT NULL DEFAULT 0,
				provider_message_id VARCHAR(255) NOT NULL DEFAULT '',
				last_error TEXT NOT NULL,
				next_attempt_at DATETIME(6) NOT NULL,
				lease_owner VARCHAR(191) NULL,
				lease_until DATETIME(6) NULL,
				created_at DATETIME(6) NOT NULL,
				updated_at DATETIME(6) NOT NULL,
				delivered_at DATETIME(6) NULL,
				PRIMARY KEY (id),
				KEY idx_claim (status, next_attempt_at),
				KEY idx_lease (status, lease_until),
				KEY idx_created (created_at)
			)` + mysqlTableOptions,
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_log_attempts (
				id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
				log_id BIGINT UNSIGNED NOT NULL,
				connection_id BIGINT UNSIGNED NOT NULL,
				attempted_at DATETIME(6) NOT NULL,
				outcome VARCHAR(32) NOT NULL,
				response TEXT NOT NULL,
				error TEXT NOT NULL,
				provider_message_id VARCHAR(255) NOT NULL DEFAULT '',
				duration_ms BIGINT NOT NULL DEFAULT 0,
				PRIMARY KEY (id),
				KEY idx_log (log_id),
				CONSTRAINT {prefix}mailsvc_log_attempts_log FOREIGN KEY (log_id)
					REFERENCES {prefix}mailsvc_logs (id) ON DELETE CASCADE
			)` + mysqlTableOptions,
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_leases (
				name VARCHAR(191) NOT NULL,
				owner VARCHAR(191) NOT NULL,
				lease_until DATETIME(6) NOT NULL,
				PRIMARY KEY (name)
			)` + mysqlTableOptions,
		},
		SQLite: []string{
			`CREATE TABLE {prefix}mailsvc_logs (
				id INTEGER PRIMARY KEY AUTOINCREMENT,
				status TEXT NOT NULL,
				connection_id INTEGER NULL,
				sent_connection_id INTEGER NULL,
				source TEXT NOT NULL DEFAULT '',
				recipients TEXT NOT NULL,
				subject TEXT NOT NULL,
				text_body TEXT NOT NULL,
				html_body TEXT NOT NULL,
				message TEXT NOT NULL,
				attempts INTEGER NOT NULL DEFAULT 0,
				phase_attempts INTEGER NOT NULL DEFAULT 0,
				used_fallback INTEGER NOT NULL DEFAULT 0,
				simulated INTEGER NOT NULL DEFAULT 0,
				provider_message_id TEXT NOT NULL DEFAULT '',
				last_error TEXT NOT NULL,
				next_attempt_at DATETIME NOT NULL,
				lease_owner TEXT NULL,
				lease_until DATETIME NULL,
				created_at DATETIME NOT NULL,
				updated_at DATETIME NOT NULL,
				delivered_at DATETIME NULL
			)`,
			`CREATE INDEX {prefix}mailsvc_logs_claim ON {prefix}mailsvc_logs (status, next_attempt_at)`,
			`CREATE INDEX {prefix}mailsvc_logs_lease ON {prefix}mailsvc_logs (status, lease_until)`,
			`CREATE INDEX {prefix}mailsvc_logs_created ON {prefix}mailsvc_logs (created_at)`,
			`CREATE TABLE {prefix}mailsvc_log_attempts (
				id INTEGER PRIMARY KEY AUTOINCREMENT,
				log_id INTEGER NOT NULL REFERENCES {prefix}mailsvc_logs (id) ON DELETE CASCADE,
				connection_id INTEGER NOT NULL,
				attempted_at DATETIME NOT NULL,
				outcome TEXT NOT NULL,
				response TEXT NOT NULL,
				error TEXT NOT NULL,
				provider_message_id TEXT NOT NULL DEFAULT '',
				duration_ms INTEGER NOT NULL DEFAULT 0
			)`,
			`CREATE INDEX {prefix}mailsvc_log_attempts_log ON {prefix}mailsvc_log_attempts (log_id)`,
			`CREATE TABLE {prefix}mailsvc_leases (
				name TEXT NOT NULL PRIMARY KEY,
				owner TEXT NOT NULL,
				lease_until DATETIME NOT NULL
			)`,
		},
	},
	{
		Version: 3,
		Name:    "oauth, health checks, alert channels and scheduled jobs",
		MySQL: []string{
			`ALTER TABLE {prefix}mailsvc_connections
				ADD COLUMN IF NOT EXISTS oauth_status VARCHAR(32) NOT NULL DEFAULT '',
				ADD COLUMN IF NOT EXISTS last_checked_at DATETIME(6) NULL,
				ADD COLUMN IF NOT EXISTS last_error TEXT NULL`,
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_oauth_states (
				state_hash CHAR(64) NOT NULL,
				provider VARCHAR(32) NOT NULL,
				user_id BIGINT UNSIGNED NOT NULL,
				connection_id BIGINT UNSIGNED NOT NULL,
				code_verifier TEXT NOT NULL,
				redirect_uri TEXT NOT NULL,
				expires_at DATETIME(6) NOT NULL,
				PRIMARY KEY (state_hash),
				KEY idx_expires (expires_at)
			)` + mysqlTableOptions,
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_oauth_refresh_history (
				id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
				connection_id BIGINT UNSIGNED NOT NULL,
				attempted_at DATETIME(6) NOT NULL,
				trigger_name VARCHAR(32) NOT NULL,
				outcome VARCHAR(16) NOT NULL,
				error TEXT NOT NULL,
				expires_at DATETIME(6) NULL,
				PRIMARY KEY (id),
				KEY idx_connection (connection_id, id)
			)` + mysqlTableOptions,
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_notifications (
				id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
				name VARCHAR(191) NOT NULL,
				type VARCHAR(32) NOT NULL,
				is_active TINYINT(1) NOT NULL DEFAULT 1,
				events TEXT NOT NULL,
				settings LONGTEXT NOT NULL,
				created_at DATETIME(6) NOT NULL,
				updated_at DATETIME(6) NOT NULL,
				PRIMARY KEY (id)
			)` + mysqlTableOptions,
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_jobs (
				name VARCHAR(64) NOT NULL,
				owner VARCHAR(191) NOT NULL,
				last_run_at DATETIME(6) NOT NULL,
				finished_at DATETIME(6) NULL,
				last_error TEXT NULL,
				PRIMARY KEY (name)
			)` + mysqlTableOptions,
		},
		SQLite: []string{
			`ALTER TABLE {prefix}mailsvc_connections ADD COLUMN oauth_status TEXT NOT NULL DEFAULT ''`,
			`ALTER TABLE {prefix}mailsvc_connections ADD COLUMN last_checked_at DATETIME NULL`,
			`ALTER TABLE {prefix}mailsvc_connections ADD COLUMN last_error TEXT NULL`,
			`CREATE TABLE {prefix}mailsvc_oauth_states (
				state_hash TEXT NOT NULL PRIMARY KEY,
				provider TEXT NOT NULL,
				user_id INTEGER NOT NULL,
				connection_id INTEGER NOT NULL,
				code_verifier TEXT NOT NULL,
				redirect_uri TEXT NOT NULL,
				expires_at DATETIME NOT NULL
			)`,
			`CREATE TABLE {prefix}mailsvc_oauth_refresh_history (
				id INTEGER PRIMARY KEY AUTOINCREMENT,
				connection_id INTEGER NOT NULL,
				attempted_at DATETIME NOT NULL,
				trigger_name TEXT NOT NULL,
				outcome TEXT NOT NULL,
				error TEXT NOT NULL,
				expires_at DATETIME NULL
			)`,
			`CREATE INDEX {prefix}mailsvc_oauth_refresh_history_conn ON {prefix}mailsvc_oauth_refresh_history (connection_id, id)`,
			`CREATE TABLE {prefix}mailsvc_notifications (
				id INTEGER PRIMARY KEY AUTOINCREMENT,
				name TEXT NOT NULL,
				type TEXT NOT NULL,
				is_active INTEGER NOT NULL DEFAULT 1,
				events TEXT NOT NULL,
				settings TEXT NOT NULL,
				created_at DATETIME NOT NULL,
				updated_at DATETIME NOT NULL
			)`,
			`CREATE TABLE {prefix}mailsvc_jobs (
				name TEXT NOT NULL PRIMARY KEY,
				owner TEXT NOT NULL,
				last_run_at DATETIME NOT NULL,
				finished_at DATETIME NULL,
				last_error TEXT NULL
			)`,
		},
	},
	{
		Version: 4,
		Name:    "log search and outcome roll-ups",
		MySQL: []string{
			`ALTER TABLE {prefix}mailsvc_logs
				ADD COLUMN IF NOT EXISTS recipients_indexed TINYINT(1) NOT NULL DEFAULT 0`,
			`CREATE INDEX IF NOT EXISTS idx_status_created ON {prefix}mailsvc_logs (status, created_at)`,
			`CREATE INDEX IF NOT EXISTS idx_recipients_indexed ON {prefix}mailsvc_logs (recipients_indexed)`,
			`CREATE FULLTEXT INDEX IF NOT EXISTS ft_subject ON {prefix}mailsvc_logs (subject)`,
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_log_recipients (
				log_id BIGINT UNSIGNED NOT NULL,
				kind VARCHAR(3) NOT NULL,
				email VARCHAR(254) NOT NULL,
				PRIMARY KEY (log_id, kind, email),
				KEY idx_email (email, log_id),
				CONSTRAINT {prefix}mailsvc_log_recipients_log FOREIGN KEY (log_id)
					REFERENCES {prefix}mailsvc_logs (id) ON DELETE CASCADE
			)` + mysqlTableOptions,
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_outcome_buckets (
				bucket_start DATETIME(6) NOT NULL,
				connection_id BIGINT UNSIGNED NOT NULL,
				status VARCHAR(16) NOT NULL,
				shard TINYINT UNSIGNED NOT NULL DEFAULT 0,
				messages BIGINT UNSIGNED NOT NULL DEFAULT 0,
				PRIMARY KEY (bucket_start, connection_id, status, shard)
			)` + mysqlTableOptions,
		},
		SQLite: []string{
			`ALTER TABLE {prefix}mailsvc_logs ADD COLUMN recipients_indexed INTEGER NOT NULL DEFAULT 0`,
			`CREATE INDEX {prefix}mailsvc_logs_status_created ON {prefix}mailsvc_logs (status, created_at)`,
			`CREATE INDEX {prefix}mailsvc_logs_recipients_indexed ON {prefix}mailsvc_logs (id) WHERE recipients_indexed = 0`,
			`CREATE TABLE {prefix}mailsvc_log_recipients (
				log_id INTEGER NOT NULL REFERENCES {prefix}mailsvc_logs (id) ON DELETE CASCADE,
				kind TEXT NOT NULL,
				email TEXT NOT NULL COLLATE NOCASE,
				PRIMARY KEY (log_id, kind, email)
			) WITHOUT ROWID`,
			`CREATE INDEX {prefix}mailsvc_log_recipients_email ON {prefix}mailsvc_log_recipients (email, log_id)`,
			`CREATE VIRTUAL TABLE {prefix}mailsvc_logs_fts USING fts5(subject)`,
			// New logs enter the recipients table and the FTS5 index in
			// batches (the claim, IndexLogRecipients, ImportLogs): an
			// enqueue stays one INSERT. Rows not yet indexed carry
			// recipients_indexed = 0 and are searched through the partial
			// index below. The rows already here are indexed the same way.
			`CREATE TRIGGER {prefix}mailsvc_logs_fts_delete AFTER DELETE ON {prefix}mailsvc_logs BEGIN
				DELETE FROM {prefix}mailsvc_logs_fts WHERE rowid = old.id;
			END`,
			`CREATE TRIGGER {prefix}mailsvc_logs_fts_update AFTER UPDATE OF subject ON {prefix}mailsvc_logs BEGIN
				UPDATE {prefix}mailsvc_logs_fts SET subject = new.subject WHERE rowid = old.id;
			END`,
			`CREATE TABLE {prefix}mailsvc_outcome_buckets (
				bucket_start DATETIME NOT NULL,
				connection_id INTEGER NOT NULL,
				status TEXT NOT NULL,
				shard INTEGER NOT NULL DEFAULT 0,
				messages INTEGER NOT NULL DEFAULT 0,
				PRIMARY KEY (bucket_start, connection_id, status, shard)
			)`,
		},
	},
	{
		// The routing rules, sender groups and daily send counters are
		// the Pro add-on's: its own schema history creates them
		// (adapters/pro/store, migration 1). Databases migrated before
		// keep the tables this version created.
		Version: 5,
		Name:    "routing rules, sender groups and daily send counters",
	},
	{
		// The suppression list, the provider events and the webhook
		// replay memory are the Pro add-on's: its own schema history
		// creates them (adapters/pro/store, migrations 2 and 3).
		// Databases migrated before keep the tables this version created.
		Version: 6,
		Name:    "provider webhook events and the suppression list",
		MySQL: []string{
			`CREATE INDEX IF NOT EXISTS idx_provider_message_id ON {prefix}mailsvc_logs (provider_message_id)`,
		},
		SQLite: []string{
			`CREATE INDEX {prefix}mailsvc_logs_provider_message_id ON {prefix}mailsvc_logs (provider_message_id)`,
		},
	},
	{
		Version: 7,
		Name:    "live replicas (the rate-limit budget split)",
		MySQL: []string{
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_replicas (
				owner VARCHAR(191) NOT NULL,
				expires_at DATETIME(6) NOT NULL,
				PRIMARY KEY (owner),
				KEY idx_expires (expires_at)
			)` + mysqlTableOptions,
		},
		SQLite: []string{
			`CREATE TABLE {prefix}mailsvc_replicas (
				owner TEXT NOT NULL PRIMARY KEY,
				expires_at DATETIME NOT NULL
			) WITHOUT ROWID`,
		},
	},
	{
		// The outcome roll-ups by source and the provider events' time
		// index are the Pro add-on's: its own schema history creates them
		// (adapters/pro/store, migrations 3 and 4). Databases migrated
		// before keep what this version created.
		Version: 8,
		Name:    "outcome roll-ups by source and the provider event time index (Pro analytics)",
	},
	{
		// The bounces and complaints of a range (LogEventTallies) are a
		// few hundredths of its events: read them alone, by event and time.
		// On MySQL each then reads its log's connection and source from a
		// narrow index rather than the log's row: a million logs outgrow
		// the buffer pool, and those reads from the clustered rows cost
		// about ten times as much. The provider events' index by kind and
		// time is the Pro add-on's (adapters/pro/store, migration 3);
		// the logs' index stays here.
		Version: 9,
		Name:    "provider events by kind and time, logs' connection and source by id (Pro analytics overview)",
		MySQL: []string{
			`CREATE INDEX IF NOT EXISTS idx_id_connection_source ON {prefix}mailsvc_logs (id, sent_connection_id, source)`,
		},
	},
	{
		// On MySQL a subject-word search matches hundreds of logs: sorted
		// by date from the wide logs table (bodies included), each match
		// is a read from disk once the table outgrows the buffer pool. The
		// subject's FULLTEXT index moves to a narrow side table (log id,
		// time, subject) that the search reads alone, down to the page's
		// ids; the logs table no longer maintains a FULLTEXT index on
		// every enqueue. The side table is written where the recipients
		// rows are (recipients_indexed marks both), and the existing logs
		// are copied here; the FULLTEXT index is built after the copy.
		// SQLite keeps its FTS5 table.
		Version: 10,
		Name:    "subject search in a narrow side table",
		MySQL: []string{
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_log_subjects (
				log_id BIGINT UNSIGNED NOT NULL,
				created_at DATETIME(6) NOT NULL,
				subject TEXT NOT NULL,
				PRIMARY KEY (log_id),
				CONSTRAINT {prefix}mailsvc_log_subjects_log FOREIGN KEY (log_id)
					REFERENCES {prefix}mailsvc_logs (id) ON DELETE CASCADE
			)` + mysqlTableOptions,
			`INSERT IGNORE INTO {prefix}mailsvc_log_subjects (log_id, created_at, subject)
				SELECT id, created_at, subject FROM {prefix}mailsvc_logs`,
			`CREATE FULLTEXT INDEX IF NOT EXISTS ft_subject ON {prefix}mailsvc_log_subjects (subject)`,
			`ALTER TABLE {prefix}mailsvc_logs DROP INDEX IF EXISTS ft_subject`,
		},
		SQLite: nil,
	},
	{
		// Coarser roll-ups beside the 15-minute ones, so that a range
		// reads about one row per day and key (see log_rollup.go): the
		// outcomes by connection and by source per hour and UTC day,
		// and the provider events per bucket (15 minutes, hour, day),
		// provider, event, sending connection and source, with the
		// repeats that keep "messages" (distinct logs) exact over any
		// range (see adapters/pro/store/event_rollup.go), clustered by
		// time on MySQL since they are read by time (the overview's bounces and complaints
		// by kind and time). All are built here from what the
		// 15-minute roll-ups and the provider events hold; the upserts
		// set rather than add, so a retry after a crash changes nothing.
		// The roll-ups by source (hour and day) and the provider event
		// roll-ups are the Pro add-on's: its own schema history creates
		// and fills them (adapters/pro/store, migrations 3 and 4);
		// databases migrated before keep those this version created.
		Version: 11,
		Name:    "hour and day roll-ups, provider event roll-ups (Pro analytics)",
		MySQL: []string{
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_outcome_rollups (
				width_minutes SMALLINT UNSIGNED NOT NULL,
				bucket_start DATETIME(6) NOT NULL,
				connection_id BIGINT UNSIGNED NOT NULL,
				status VARCHAR(16) NOT NULL,
				shard TINYINT UNSIGNED NOT NULL DEFAULT 0,
				messages BIGINT UNSIGNED NOT NULL DEFAULT 0,
				PRIMARY KEY (width_minutes, bucket_start, connection_id, status, shard)
			)` + mysqlTableOptions,
			`INSERT INTO {prefix}mailsvc_outcome_rollups (width_minutes, bucket_start, connection_id, status, shard, messages)
				SELECT 60, CAST(DATE_FORMAT(bucket_start, '%Y-%m-%d %H:00:00') AS DATETIME(6)), connection_id, status, 0, SUM(messages)
				FROM {prefix}mailsvc_outcome_buckets GROUP BY 2, 3, 4
				ON DUPLICATE KEY UPDATE messages = VALUES(messages)`,
			`INSERT INTO {prefix}mailsvc_outcome_rollups (width_minutes, bucket_start, connection_id, status, shard, messages)
				SELECT 1440, CAST(DATE(bucket_start) AS DATETIME(6)), connection_id, status, 0, SUM(messages)
				FROM {prefix}mailsvc_outcome_buckets GROUP BY 2, 3, 4
				ON DUPLICATE KEY UPDATE messages = VALUES(messages)`,
		},
		SQLite: []string{
			`CREATE TABLE {prefix}mailsvc_outcome_rollups (
				width_minutes INTEGER NOT NULL,
				bucket_start DATETIME NOT NULL,
				connection_id INTEGER NOT NULL,
				status TEXT NOT NULL,
				shard INTEGER NOT NULL DEFAULT 0,
				messages INTEGER NOT NULL DEFAULT 0,
				PRIMARY KEY (width_minutes, bucket_start, connection_id, status, shard)
			)`,
			// Times are stored as the driver writes them in UTC
			// ("2006-01-02 15:04:05+00:00"), so bucket starts are built
			// in that form.
			`INSERT INTO {prefix}mailsvc_outcome_rollups (width_minutes, bucket_start, connection_id, status, shard, messages)
				SELECT 60, strftime('%Y-%m-%d %H:00:00', bucket_start) || '+00:00', connection_id, status, 0, SUM(messages)
				FROM {prefix}mailsvc_outcome_buckets GROUP BY 2, 3, 4`,
			`INSERT INTO {prefix}mailsvc_outcome_rollups (width_minutes, bucket_start, connection_id, status, shard, messages)
				SELECT 1440, strftime('%Y-%m-%d 00:00:00', bucket_start) || '+00:00', connection_id, status, 0, SUM(messages)
				FROM {prefix}mailsvc_outcome_buckets GROUP BY 2, 3, 4`,
		},
	},
	{
		// Attachment bytes leave the message column (base64 inside JSON,
		// read by every listing and decoded through several copies) for
		// a table of binary chunks that only the send path and a single
		// log's view read (see log_attachments.go). Existing rows keep
		// their bytes in the column and are read as before.
		Version: 12,
		Name:    "attachment bytes in binary chunks beside the logs",
		MySQL: []string{
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_log_attachments (
				log_id BIGINT UNSIGNED NOT NULL,
				position INT NOT NULL,
				chunk INT NOT NULL,
				size BIGINT NOT NULL,
				data MEDIUMBLOB NOT NULL,
				PRIMARY KEY (log_id, position, chunk),
				CONSTRAINT {prefix}mailsvc_log_attachments_log FOREIGN KEY (log_id)
					REFERENCES {prefix}mailsvc_logs (id) ON DELETE CASCADE
			)` + mysqlTableOptions,
		},
		SQLite: []string{
			`CREATE TABLE {prefix}mailsvc_log_attachments (
				log_id INTEGER NOT NULL REFERENCES {prefix}mailsvc_logs (id) ON DELETE CASCADE,
				position INTEGER NOT NULL,
				chunk INTEGER NOT NULL,
				size INTEGER NOT NULL,
				data BLOB NOT NULL,
				PRIMARY KEY (log_id, position, chunk)
			)`,
		},
	},
	{
		// Every message changes its status twice (claimed, then
		// decided), and each change rewrites its entry in every index
		// holding the status or the columns set with it: about a fifth
		// of the database's work per delivered message went into two
		// indexes that no longer earn it. The lease index served only
		// the reaper, which now reads the few sending rows through the
		// claim index (status first); the (id, connection, source)
		// index served the provider-event tallies that read the event
		// roll-ups since version 11.
		Version: 13,
		Name:    "fewer indexes written per delivered message",
		MySQL: []string{
			`ALTER TABLE {prefix}mailsvc_logs DROP INDEX IF EXISTS idx_lease`,
			`ALTER TABLE {prefix}mailsvc_logs DROP INDEX IF EXISTS idx_id_connection_source`,
		},
		SQLite: []string{
			`DROP INDEX IF EXISTS {prefix}mailsvc_logs_lease`,
		},
	},
	{
		// A queued row grows twice: its claim fills the lease columns
		// and lengthens the status, its outcome fills the sent
		// connection, the delivery time and the provider's message id.
		// InnoDB writes a row that grows past its page's free space by
		// reorganising the page, which cost some 12 KB of redo log per
		// delivered 1 KB message. A queued row now carries queueReserve
		// bytes that the claim gives up as much of as it adds, and the
		// outcome gives up the rest: the row never grows, and each
		// update reuses its own space (about 3 KB of redo in all). See
		// queue_reserve.go. The column comes with no reserve in the rows
		// already there (history, mostly: a table rebuilt by the ALTER
		// does not grow) and its default gives one to every row inserted
		// after. SQLite rewrites rows whole anyway.
		Version: 14,
		Name:    "room reserved in queued rows for the claim and the outcome",
		MySQL: []string{
			`ALTER TABLE {prefix}mailsvc_logs ADD COLUMN IF NOT EXISTS queue_reserve VARBINARY(` + queueReserveMax + `) NULL DEFAULT NULL`,
			`ALTER TABLE {prefix}mailsvc_logs ALTER COLUMN queue_reserve SET DEFAULT ` + queueReserveDefault,
		},
	},
	{
		// Personal data requests (privacy.go) find the logs naming an
		// address as sender or Reply-To as well as recipient: the
		// addresses table gains those kinds (the search still matches
		// recipients only), written from here on where the recipients
		// rows are, and copied here from the message column of the logs
		// already there (the sender and the first three Reply-To
		// addresses; a message column that is not JSON is passed over).
		// The address index gains the kind before the log id, so that an
		// address search reads the recipient rows of an address alone and
		// not the site's own sender address's row of every log. The new
		// index is built after the copy and before the old one goes.
		Version: 15,
		Name:    "sender and Reply-To addresses in the addresses table (personal data requests)",
		MySQL: append(senderIndexBackfill(`JSON_VALID(message)`, `LOWER(JSON_UNQUOTE(JSON_EXTRACT(message, '%s')))`, "CHAR_LENGTH", "INSERT IGNORE"),
			`CREATE INDEX IF NOT EXISTS idx_email_kind ON {prefix}mailsvc_log_recipients (email, kind, log_id)`,
			`ALTER TABLE {prefix}mailsvc_log_recipients DROP INDEX IF EXISTS idx_email`),
		SQLite: append(senderIndexBackfill(`json_valid(message)`, `LOWER(json_extract(message, '%s'))`, "LENGTH", "INSERT OR IGNORE"),
			`CREATE INDEX IF NOT EXISTS {prefix}mailsvc_log_recipients_email_kind ON {prefix}mailsvc_log_recipients (email, kind, log_id)`,
			`DROP INDEX IF EXISTS {prefix}mailsvc_log_recipients_email`),
	},
	{
		// The host hook outbox (host_hooks.go): events the bridge runs in
		// WordPress as do_action(), each claimed by one PHP request at a
		// time. A log's host_hooks flags, set by the bridge when it
		// queues a message, name the hooks its final outcome fires
		// (core.HostHookFlag*): 0, the default, writes no outbox row, so
		// the delivery path pays nothing for sites without listeners.
		Version: 16,
		Name:    "host hook outbox and the hooks a queued message fires",
		MySQL: []string{
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_hook_events (
				id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
				hook VARCHAR(191) NOT NULL,
				args LONGTEXT NOT NULL,
				created_at DATETIME(6) NOT NULL,
				claimed_by VARCHAR(64) NULL,
				claimed_at DATETIME(6) NULL,
				attempts INT NOT NULL DEFAULT 0,
				done_at DATETIME(6) NULL,
				last_error TEXT NULL,
				PRIMARY KEY (id),
				KEY idx_pending (done_at, id),
				KEY idx_claimed (claimed_by),
				KEY idx_created (created_at)
			)` + mysqlTableOptions,
			`ALTER TABLE {prefix}mailsvc_logs ADD COLUMN IF NOT EXISTS host_hooks TINYINT UNSIGNED NOT NULL DEFAULT 0`,
		},
		SQLite: []string{
			`CREATE TABLE {prefix}mailsvc_hook_events (
				id INTEGER PRIMARY KEY AUTOINCREMENT,
				hook TEXT NOT NULL,
				args TEXT NOT NULL,
				created_at DATETIME NOT NULL,
				claimed_by TEXT NULL,
				claimed_at DATETIME NULL,
				attempts INTEGER NOT NULL DEFAULT 0,
				done_at DATETIME NULL,
				last_error TEXT NULL
			)`,
			`CREATE INDEX {prefix}mailsvc_hook_events_pending ON {prefix}mailsvc_hook_events (done_at, id)`,
			`CREATE INDEX {prefix}mailsvc_hook_events_claimed ON {prefix}mailsvc_hook_events (claimed_by)`,
			`CREATE INDEX {prefix}mailsvc_hook_events_created ON {prefix}mailsvc_hook_events (created_at)`,
			`ALTER TABLE {prefix}mailsvc_logs ADD COLUMN host_hooks INTEGER NOT NULL DEFAULT 0`,
		},
	},
	{
		// What the log keeps of a body (the log_body setting): the mode
		// applied when the message reached a final state ('' while the
		// body is still the whole message), how many values were
		// redacted, and whether the attachments' bytes were kept. The
		// defaults describe every existing row and every row the
		// WordPress bridge inserts, so its INSERTs need no change;
		// MariaDB adds such columns in place (no table copy).
		Version: 17,
		Name:    "log body modes",
		MySQL: []string{
			`ALTER TABLE {prefix}mailsvc_logs
				ADD COLUMN IF NOT EXISTS body_mode VARCHAR(16) NOT NULL DEFAULT '',
				ADD COLUMN IF NOT EXISTS redacted_count INT NOT NULL DEFAULT 0,
				ADD COLUMN IF NOT EXISTS attachments_kept TINYINT(1) NOT NULL DEFAULT 1`,
		},
		SQLite: []string{
			`ALTER TABLE {prefix}mailsvc_logs ADD COLUMN body_mode TEXT NOT NULL DEFAULT ''`,
			`ALTER TABLE {prefix}mailsvc_logs ADD COLUMN redacted_count INTEGER NOT NULL DEFAULT 0`,
			`ALTER TABLE {prefix}mailsvc_logs ADD COLUMN attachments_kept INTEGER NOT NULL DEFAULT 1`,
		},
	},
	{
		// Per-recipient outcomes (a JSON list, written only when a
		// message's recipients did not all get it in one go) and the
		// count of refused ones (the dashboard's partial deliveries); the
		// further provider message ids of a message sent in several
		// calls, so that webhook events about any of them find the log.
		Version: 18,
		Name:    "per-recipient outcomes and a log's further provider message ids",
		MySQL: []string{
			`ALTER TABLE {prefix}mailsvc_logs
				ADD COLUMN IF NOT EXISTS recipient_outcomes LONGTEXT NULL,
				ADD COLUMN IF NOT EXISTS recipients_refused INT NOT NULL DEFAULT 0`,
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_log_provider_ids (
				provider_message_id VARCHAR(255) NOT NULL,
				log_id BIGINT UNSIGNED NOT NULL,
				PRIMARY KEY (provider_message_id, log_id),
				KEY idx_log (log_id),
				CONSTRAINT {prefix}mailsvc_log_provider_ids_log FOREIGN KEY (log_id)
					REFERENCES {prefix}mailsvc_logs (id) ON DELETE CASCADE
			)` + mysqlTableOptions,
		},
		SQLite: []string{
			`ALTER TABLE {prefix}mailsvc_logs ADD COLUMN recipient_outcomes TEXT NULL`,
			`ALTER TABLE {prefix}mailsvc_logs ADD COLUMN recipients_refused INTEGER NOT NULL DEFAULT 0`,
			`CREATE TABLE {prefix}mailsvc_log_provider_ids (
				provider_message_id TEXT NOT NULL,
				log_id INTEGER NOT NULL REFERENCES {prefix}mailsvc_logs (id) ON DELETE CASCADE,
				PRIMARY KEY (provider_message_id, log_id)
			)`,
			`CREATE INDEX {prefix}mailsvc_log_provider_ids_log ON {prefix}mailsvc_log_provider_ids (log_id)`,
		},
	},
	{
		// The email controls (email_control.go): how many WordPress core
		// emails of each kind the bridge stopped, one counter per kind
		// per day (the site's calendar day, 'YYYY-MM-DD'), which the
		// bridge increments with one upsert as it stops an email.
		Version: 19,
		Name:    "email control counts",
		MySQL: []string{
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_email_control_counts (
				kind VARCHAR(64) NOT NULL,
				day CHAR(10) NOT NULL,
				suppressed BIGINT UNSIGNED NOT NULL DEFAULT 0,
				PRIMARY KEY (kind, day),
				KEY idx_day (day)
			)` + mysqlTableOptions,
		},
		SQLite: []string{
			`CREATE TABLE {prefix}mailsvc_email_control_counts (
				kind TEXT NOT NULL,
				day TEXT NOT NULL,
				suppressed INTEGER NOT NULL DEFAULT 0,
				PRIMARY KEY (kind, day)
			)`,
			`CREATE INDEX {prefix}mailsvc_email_control_counts_day ON {prefix}mailsvc_email_control_counts (day)`,
		},
	},
	{
		// The alerts raised (after folding), for the summary report's
		// "alerts raised" (docs/reports.md); pruned after a year.
		Version: 20,
		Name:    "alert history",
		MySQL: []string{
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_alert_history (
				id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
				event VARCHAR(64) NOT NULL,
				connection_id BIGINT UNSIGNED NOT NULL DEFAULT 0,
				connection_name VARCHAR(191) NOT NULL DEFAULT '',
				title VARCHAR(255) NOT NULL DEFAULT '',
				raised_at DATETIME(6) NOT NULL,
				PRIMARY KEY (id),
				KEY idx_raised (raised_at)
			)` + mysqlTableOptions,
		},
		SQLite: []string{
			`CREATE TABLE {prefix}mailsvc_alert_history (
				id INTEGER PRIMARY KEY AUTOINCREMENT,
				event TEXT NOT NULL,
				connection_id INTEGER NOT NULL DEFAULT 0,
				connection_name TEXT NOT NULL DEFAULT '',
				title TEXT NOT NULL DEFAULT '',
				raised_at DATETIME NOT NULL
			)`,
			`CREATE INDEX {prefix}mailsvc_alert_history_raised ON {prefix}mailsvc_alert_history (raised_at)`,
		},
	},
	{
		// Alert thresholds (a channel alerts on delivery_failed only after
		// threshold_count final failures within threshold_minutes;
		// threshold_alerted_at is the channel's last threshold alert,
		// claimed by one replica), and the original of a log resent to
		// other recipients. The failures are counted from
		// {prefix}mailsvc_failure_marks, one row per log failed for good,
		// written with the outcome and pruned after the longest window:
		// no index on the logs, whose every status change would have
		// rewritten it.
		Version: 21,
		Name:    "alert thresholds and resends to other recipients",
		MySQL: []string{
			`ALTER TABLE {prefix}mailsvc_notifications
				ADD COLUMN IF NOT EXISTS threshold_count INT NOT NULL DEFAULT 1,
				ADD COLUMN IF NOT EXISTS threshold_minutes INT NOT NULL DEFAULT 0,
				ADD COLUMN IF NOT EXISTS threshold_alerted_at DATETIME(6) NULL`,
			`ALTER TABLE {prefix}mailsvc_logs
				ADD COLUMN IF NOT EXISTS resent_from BIGINT UNSIGNED NULL`,
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_failure_marks (
				failed_at DATETIME(6) NOT NULL,
				log_id BIGINT UNSIGNED NOT NULL,
				PRIMARY KEY (failed_at, log_id)
			)` + mysqlTableOptions,
		},
		SQLite: []string{
			`ALTER TABLE {prefix}mailsvc_notifications ADD COLUMN threshold_count INTEGER NOT NULL DEFAULT 1`,
			`ALTER TABLE {prefix}mailsvc_notifications ADD COLUMN threshold_minutes INTEGER NOT NULL DEFAULT 0`,
			`ALTER TABLE {prefix}mailsvc_notifications ADD COLUMN threshold_alerted_at DATETIME NULL`,
			`ALTER TABLE {prefix}mailsvc_logs ADD COLUMN resent_from INTEGER NULL`,
			`CREATE TABLE {prefix}mailsvc_failure_marks (
				failed_at DATETIME NOT NULL,
				log_id INTEGER NOT NULL,
				PRIMARY KEY (failed_at, log_id)
			) WITHOUT ROWID`,
		},
	},
	{
		// The staging guard: a captured log that was released is let go
		// (docs/staging.md). Captured logs are listed through the
		// (status, created_at) index.
		Version: 22,
		Name:    "released captured logs",
		MySQL: []string{
			`ALTER TABLE {prefix}mailsvc_logs
				ADD COLUMN IF NOT EXISTS capture_released TINYINT(1) NOT NULL DEFAULT 0`,
		},
		SQLite: []string{
			`ALTER TABLE {prefix}mailsvc_logs ADD COLUMN capture_released INTEGER NOT NULL DEFAULT 0`,
		},
	},
	{
		// Multisite networks (docs/multisite.md): one queue and log for
		// the whole network, each log carrying the id of the site (blog)
		// that sent it. Every log already there was sent by a single site
		// or a network's main site, so the default 1 describes it, and the
		// bridge of an older version writes 1 too. MariaDB adds a column
		// with a default at the end of the table instantly
		// (ALGORITHM=INSTANT: metadata only, no table copy); the index
		// that scopes a site's listings is built online beside the rows
		// (INPLACE, LOCK=NONE), the queue working on meanwhile. The
		// quota usage table counts each site's messages per day and per
		// month, and remembers the alerts sent for that period, in the
		// database so that every replica sees the same count.
		Version: 23,
		Name:    "the site of a log and per-site quota usage (multisite)",
		MySQL: []string{
			`ALTER TABLE {prefix}mailsvc_logs ADD COLUMN IF NOT EXISTS site_id BIGINT UNSIGNED NOT NULL DEFAULT 1, ALGORITHM=INSTANT`,
			`ALTER TABLE {prefix}mailsvc_logs ADD INDEX IF NOT EXISTS idx_site_created (site_id, created_at), ALGORITHM=INPLACE, LOCK=NONE`,
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_site_quota_usage (
				site_id BIGINT UNSIGNED NOT NULL,
				period VARCHAR(16) NOT NULL,
				used BIGINT NOT NULL DEFAULT 0,
				alerted_80 TINYINT(1) NOT NULL DEFAULT 0,
				alerted_100 TINYINT(1) NOT NULL DEFAULT 0,
				updated_at DATETIME(6) NOT NULL,
				PRIMARY KEY (site_id, period)
			)` + mysqlTableOptions,
		},
		SQLite: []string{
			`ALTER TABLE {prefix}mailsvc_logs ADD COLUMN site_id INTEGER NOT NULL DEFAULT 1`,
			`CREATE INDEX {prefix}mailsvc_logs_site_created ON {prefix}mailsvc_logs (site_id, created_at)`,
			`CREATE TABLE {prefix}mailsvc_site_quota_usage (
				site_id INTEGER NOT NULL,
				period TEXT NOT NULL,
				used INTEGER NOT NULL DEFAULT 0,
				alerted_80 INTEGER NOT NULL DEFAULT 0,
				alerted_100 INTEGER NOT NULL DEFAULT 0,
				updated_at DATETIME NOT NULL,
				PRIMARY KEY (site_id, period)
			)`,
		},
	},
	{
		// The Pro analytics of one site of a network (docs/multisite.md):
		// the outcome and provider event roll-ups by site, kept beside
		// the network's for the sites other than the main one (site 1),
		// whose figures are the network's less the other sites'. So a
		// single site writes nothing more, and every roll-up counted
		// before this migration is the main site's. Two new, empty
		// tables, and a column with a default on the repeated events
		// (instant on MariaDB): nothing is rebuilt or copied. The
		// roll-ups by site and the repeated events' site column are the
		// Pro add-on's: its own schema history creates them
		// (adapters/pro/store, migrations 3 and 4); databases migrated
		// before keep what this version created.
		Version: 24,
		Name:    "roll-ups by site (multisite analytics)",
	},
	{
		// The address dictionary of the log search (log_search_addresses.go):
		// each distinct recipient address once, with its domain reversed
		// (a domain and its subdomains are one index range) and, filled in
		// the background, the three-character pieces of its local part
		// (a fragment search reads the pieces, not every address). The
		// per-log rows stay in the addresses table. The logs already here
		// are entered by the service in the background, in batches of log
		// ids up to the highest id at this migration (the progress row);
		// until it is done a search by domain, prefix or fragment says it
		// is partial. Nothing here reads or rewrites the logs table.
		Version: 25,
		Name:    "address dictionary of the log search (domain, prefix, fragment)",
		MySQL: []string{
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_search_addresses (
				email VARCHAR(254) NOT NULL,
				domain_rev VARCHAR(254) NOT NULL,
				grams_done TINYINT(1) NOT NULL DEFAULT 0,
				PRIMARY KEY (email),
				KEY idx_domain_rev (domain_rev),
				KEY idx_grams_done (grams_done)
			)` + mysqlTableOptions,
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_search_grams (
				gram VARCHAR(3) NOT NULL,
				email VARCHAR(254) NOT NULL,
				PRIMARY KEY (gram, email),
				KEY idx_email (email)
			)` + mysqlTableOptions,
			`CREATE TABLE IF NOT EXISTS {prefix}mailsvc_search_progress (
				name VARCHAR(64) NOT NULL,
				done_up_to BIGINT NOT NULL DEFAULT 0,
				target BIGINT NOT NULL DEFAULT 0,
				pass_target BIGINT NOT NULL DEFAULT 0,
				cursor_email VARCHAR(254) NOT NULL DEFAULT '',
				PRIMARY KEY (name)
			)` + mysqlTableOptions,
			`INSERT IGNORE INTO {prefix}mailsvc_search_progress (name, done_up_to, target)
				SELECT 'addresses', 0, COALESCE(MAX(id), 0) FROM {prefix}mailsvc_logs`,
			`INSERT IGNORE INTO {prefix}mailsvc_search_progress (name) VALUES ('sweep')`,
		},
		SQLite: []string{
			`CREATE TABLE {prefix}mailsvc_search_addresses (
				email TEXT NOT NULL PRIMARY KEY COLLATE NOCASE,
				domain_rev TEXT NOT NULL,
				grams_done INTEGER NOT NULL DEFAULT 0
			) WITHOUT ROWID`,
			`CREATE INDEX {prefix}mailsvc_search_addresses_domain_rev ON {prefix}mailsvc_search_addresses (domain_rev)`,
			`CREATE INDEX {prefix}mailsvc_search_addresses_grams_pending ON {prefix}mailsvc_search_addresses (email) WHERE grams_done = 0`,
			`CREATE TABLE {prefix}mailsvc_search_grams (
				gram TEXT NOT NULL,
				email TEXT NOT NULL COLLATE NOCASE,
				PRIMARY KEY (gram, email)
			) WITHOUT ROWID`,
			`CREATE INDEX {prefix}mailsvc_search_grams_email ON {prefix}mailsvc_search_grams (email)`,
			`CREATE TABLE {prefix}mailsvc_search_progress (
				name TEXT NOT NULL PRIMARY KEY,
				done_up_to INTEGER NOT NULL DEFAULT 0,
				target INTEGER NOT NULL DEFAULT 0,
				pass_target INTEGER NOT NULL DEFAULT 0,
				cursor_email TEXT NOT NULL DEFAULT ''
			)`,
			`INSERT OR IGNORE INTO {prefix}mailsvc_search_progress (name, done_up_to, target)
				SELECT 'addresses', 0, COALESCE(MAX(id), 0) FROM {prefix}mailsvc_logs`,
			`INSERT OR IGNORE INTO {prefix}mailsvc_search_progress (name) VALUES ('sweep')`,
		},
	},
	{
		// The flood guard: a held log that was released is let go
		// (docs/delivery.md "The flood guard"). Held logs are listed
		// through the (status, created_at) index. MariaDB adds a column
		// with a default at the end of the table instantly.
		Version: 26,
		Name:    "released held logs (flood guard)",
		MySQL: []string{
			`ALTER TABLE {prefix}mailsvc_logs
				ADD COLUMN IF NOT EXISTS flood_released TINYINT(1) NOT NULL DEFAULT 0`,
		},
		SQLite: []string{
			`ALTER TABLE {prefix}mailsvc_logs ADD COLUMN flood_released INTEGER NOT NULL DEFAULT 0`,
		},
	},
	{
		// A log's manual resends are counted: each is a new sending of
		// its message, whose idempotency key at the providers that take
		// one (Resend, Emailit) must differ from the first sending's
		// (docs/drivers.md). Read by claims only; MariaDB adds a column
		// with a default at the end of the table instantly.
		Version: 27,
		Name:    "manual resends counted",
		MySQL: []string{
			`ALTER TABLE {prefix}mailsvc_logs
				ADD COLUMN IF NOT EXISTS resends INT UNSIGNED NOT NULL DEFAULT 0`,
		},
		SQLite: []string{
			`ALTER TABLE {prefix}mailsvc_logs ADD COLUMN resends INTEGER NOT NULL DEFAULT 0`,
		},
	},
}

// senderIndexBackfill returns the statements of migration 15 in one
// dialect: valid says the message column is JSON, extract reads a JSON
// path of it (a %s), length is the character length function and insert
// the INSERT that skips rows already there.
func senderIndexBackfill(valid, extract, length, insert string) []string {
	var out []string
	for _, a := range []struct{ kind, path string }{
		{recipientFrom, "$.from.email"},
		{recipientReplyTo, "$.reply_to[0].email"},
		{recipientReplyTo, "$.reply_to[1].email"},
		{recipientReplyTo, "$.reply_to[2].email"},
	} {
		e := fmt.Sprintf(extract, a.path)
		out = append(out, insert+` INTO {prefix}mailsvc_log_recipients (log_id, kind, email)
			SELECT id, '`+a.kind+`', `+e+` FROM {prefix}mailsvc_logs
			WHERE `+valid+` AND `+e+` IS NOT NULL AND `+e+` <> '' AND `+length+`(`+e+`) <= 254`)
	}
	return out
}

// LatestVersion is the schema version this build migrates to.
func LatestVersion() int { return migrations[len(migrations)-1].Version }

// migrationLockWait is how long Migrate waits on MySQL for another process
// that is migrating the same tables.
const migrationLockWait = 60 * time.Second

// Migrate brings the schema up to LatestVersion. It is idempotent: a
// second call, or a call on an up-to-date database, changes nothing.
// Processes starting at once are safe: on MySQL they serialise on a named
// lock (GET_LOCK) for this database and prefix; on SQLite each runs in one
// write transaction, so the second sees the first's work. A database
// already at a later version than this build knows is left as it is, with
// a warning.
func (db *DB) Migrate(ctx context.Context) error {
	var err error
	switch db.dialect {
	case DialectMySQL:
		err = db.migrateMySQL(ctx)
	case DialectSQLite:
		err = db.migrateSQLite(ctx)
	default:
		err = fmt.Errorf("unknown dialect %q", db.dialect)
	}
	if err != nil {
		return fmt.Errorf("migrate %s store (prefix %q): %w", db.dialect, db.prefix, err)
	}
	return nil
}

// AppliedVersions returns the migration versions recorded in the
// database, ascending.
func (db *SchemaService) AppliedVersions(ctx context.Context) ([]int, error) {
	var out []int
	err := db.gdb.WithContext(ctx).Table(db.tableName("migrations")).
		Order("version").Pluck("version", &out).Error
	if err != nil {
		return nil, fmt.Errorf("read applied migrations: %w", err)
	}
	return out, nil
}

// MigrationConn is what migrations run on: a pinned *sql.Conn on MySQL, a
// *sql.Tx on SQLite.
type MigrationConn interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func (db *DB) migrateMySQL(ctx context.Context) error {
	conn, err := db.sqlDB.Conn(ctx)
	if err != nil {
		return fmt.Errorf("get connection: %w", err)
	}
	defer conn.Close()

	var schema sql.NullString
	if err := conn.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&schema); err != nil {
		return fmt.Errorf("read database name: %w", err)
	}
	sum := sha256.Sum256([]byte(schema.String + "\x00" + db.prefix))
	lock := "mailsvc_migrate_" + hex.EncodeToString(sum[:12]) // < 64 chars
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, ?)", lock, int(migrationLockWait.Seconds())).Scan(&got); err != nil {
		return fmt.Errorf("take migration lock: %w", err)
	}
	if !got.Valid || got.Int64 != 1 {
		return fmt.Errorf("another process held the migration lock for over %s", migrationLockWait)
	}
	defer func() {
		// Release on the same connection, even when ctx is done.
		rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := conn.ExecContext(rctx, "DO RELEASE_LOCK(?)", lock); err != nil {
			db.logger.Warn("release migration lock", "err", err)
		}
	}()

	return db.applyHistories(ctx, conn, mysqlMigrationsTable, func(m migration) []string { return m.MySQL })
}

// mysqlMigrationsTable and sqliteMigrationsTable create a table of
// applied versions: {prefix}mailsvc_migrations for the service's own,
// {prefix}mailsvc_<module>_migrations for a module's ({table} stands for
// the name).
const (
	mysqlMigrationsTable = `CREATE TABLE IF NOT EXISTS {table} (
		version INT NOT NULL,
		name VARCHAR(191) NOT NULL,
		applied_at DATETIME(6) NOT NULL,
		PRIMARY KEY (version)
	)` + mysqlTableOptions
	sqliteMigrationsTable = `CREATE TABLE IF NOT EXISTS {table} (
		version INTEGER NOT NULL PRIMARY KEY,
		name TEXT NOT NULL,
		applied_at DATETIME NOT NULL
	)`
)

// applyHistories applies the service's own migrations, then each
// registered module's.
func (db *DB) applyHistories(ctx context.Context, q MigrationConn, createTable string, stmts func(migration) []string) error {
	if err := db.applyMigrations(ctx, q, "{prefix}mailsvc_migrations", migrations, createTable, stmts); err != nil {
		return err
	}
	moduleMu.RLock()
	histories := slices.Clone(moduleHistories)
	moduleMu.RUnlock()
	for _, h := range histories {
		if err := db.applyMigrations(ctx, q, "{prefix}mailsvc_"+h.module+"_migrations", h.list, createTable, stmts); err != nil {
			return fmt.Errorf("module %s: %w", h.module, err)
		}
	}
	return nil
}

func (db *DB) migrateSQLite(ctx context.Context) error {
	// The DSN's _txlock=immediate makes BeginTx take the write lock, so a
	// concurrent migrator waits (busy_timeout) and then sees our result.
	tx, err := db.sqlDB.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	if err := db.applyHistories(ctx, tx, sqliteMigrationsTable, func(m migration) []string { return m.SQLite }); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// applyMigrations applies the migrations of list not yet recorded in
// table (a {prefix} name), recording each.
func (db *DB) applyMigrations(ctx context.Context, q MigrationConn, table string, list []migration, createTable string, stmts func(migration) []string) error {
	if _, err := q.ExecContext(ctx, db.expand(strings.ReplaceAll(createTable, "{table}", table))); err != nil {
		return fmt.Errorf("create migrations table: %w", err)
	}
	applied, err := readVersions(ctx, q, db.expand("SELECT version FROM "+table))
	if err != nil {
		return err
	}
	latest := 0
	if len(list) > 0 {
		latest = list[len(list)-1].Version
	}
	for v := range applied {
		if v > latest {
			db.logger.Warn("database schema is newer than this build",
				"prefix", db.prefix, "table", db.expand(table), "version", v, "known", latest)
		}
	}
	for _, m := range list {
		if applied[m.Version] {
			continue
		}
		for i, s := range stmts(m) {
			if _, err := q.ExecContext(ctx, db.expand(s)); err != nil {
				return fmt.Errorf("migration %d (%s), statement %d: %w", m.Version, m.Name, i+1, err)
			}
		}
		if m.Step != nil {
			if err := m.Step(ctx, db, q); err != nil {
				return fmt.Errorf("migration %d (%s), step: %w", m.Version, m.Name, err)
			}
		}
		if _, err := q.ExecContext(ctx,
			db.expand("INSERT INTO "+table+" (version, name, applied_at) VALUES (?, ?, ?)"),
			m.Version, m.Name, now()); err != nil {
			return fmt.Errorf("record migration %d: %w", m.Version, err)
		}
		db.logger.Info("applied schema migration", "dialect", db.dialect, "prefix", db.prefix, "history", db.expand(table), "version", m.Version, "name", m.Name)
	}
	return nil
}

// ColumnExists reports whether table (a {prefix} name) has column, read
// through q: for a migration's Step.
func (db *SchemaService) ColumnExists(ctx context.Context, q MigrationConn, table, column string) (bool, error) {
	query := `SELECT COUNT(*) FROM information_schema.columns
		WHERE table_schema = DATABASE() AND table_name = ? AND column_name = ?`
	if db.dialect == DialectSQLite {
		query = `SELECT COUNT(*) FROM pragma_table_info(?) WHERE name = ?`
	}
	name := strings.TrimPrefix(table, "{prefix}")
	if name != table {
		name = db.prefix + name
	}
	n := 0
	err := EachRow(ctx, q, "read the columns of "+name, query, []any{name, column}, func(r RowScanner) error { return r.Scan(&n) })
	return n > 0, err
}

func readVersions(ctx context.Context, q MigrationConn, query string) (map[int]bool, error) {
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("read applied migrations: %w", err)
	}
	defer rows.Close()
	out := map[int]bool{}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("scan applied migration: %w", err)
		}
		out[v] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read applied migrations: %w", err)
	}
	return out, nil
}

var prefixedName = regexp.MustCompile(`\{prefix\}(\w+)`)

// expand replaces each {prefix}name with the quoted identifier
// `<prefix>name` (both dialects accept backquotes; quoting keeps a prefix
// that starts with a digit valid). Open validates the prefix to contain
// only [A-Za-z0-9_], so it is safe in an identifier.
func (db *DB) expand(stmt string) string {
	return prefixedName.ReplaceAllString(stmt, "`"+db.prefix+"$1`")
}
