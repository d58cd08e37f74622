// Package store persists mailsvc's state in MySQL/MariaDB (the WordPress
// site's own database) or in an embedded SQLite file.
//
// Every table is named {prefix}mailsvc_<name>, where prefix is the site's
// table prefix (default "wp_"), so the store can live beside wp_options
// without clashing and two sites sharing a database stay apart. The schema
// is created and changed by the versioned migrations in migrate.go, never
// by gorm's AutoMigrate. An add-on module keeps its own tables in the same
// database through its own package: it registers its schema history with
// RegisterMigrations, reaches the database through Gorm, SQL, Expand,
// TableName and InSQLTransaction, and joins the service's own
// transactions: RegisterOutcomeCounter (module_outcomes.go) counts the
// final delivery outcomes in its tables in the transaction that records
// them, RegisterLogEraser (module_erase.go) adds its step to a personal
// data erase, and RegisterRollupTables has its sharded roll-ups
// compacted with the service's. The roll-up toolkit (RollupSpans,
// SpanWhere, UpsertCounters, ...) and the row loop (EachRow) are
// exported for it (the Pro add-on: adapters/pro/store).
//
// DB is the handle: it opens, migrates and closes the database, tells its
// dialect, expands {prefix} table names and runs transactions. The reads
// and writes are services, one per concept, each implementing its port in
// core and sharing the handle (services.go): LogService (core.LogStore,
// core.LogBodyStore), ConnectionService, SettingsService, JobService,
// NotificationService, OAuthService, AlertHistoryService, CaptureService,
// EmailControlService, HostHookService, PrivacyService, SiteService,
// LeaseService, SearchIndexService, RollupService (the roll-ups'
// compaction), SchemaService (the schema history's reads) and
// InstallationService (the tables and options uninstall removes). No type
// of the package has more than 30 exported methods
// (TestNoStoreTypeHasMoreThan30Methods). Services taken from the DB that InTransaction hands over
// run in its transaction.
//
// gorm models the rows that are plain records edited one at a time:
// connections, settings, notification channels and the OAuth refresh
// history. The queue (enqueue, claim, outcomes), the log search, the
// roll-ups and the other range reads are hand-tuned database/sql, for
// their locking (FOR UPDATE SKIP LOCKED), batching and index use; their
// row loops go through EachRow.
//
// All methods are safe for concurrent use; after Close they return errors.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/glebarez/sqlite"
	mysqldriver "github.com/go-sql-driver/mysql"
	"gorm.io/driver/mysql"
	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"
)

// Dialects returned by (*DB).Dialect.
const (
	DialectMySQL  = "mysql"
	DialectSQLite = "sqlite"
)

// DefaultPrefix is WordPress's default table prefix.
const DefaultPrefix = "wp_"

// BusyTimeout is how long an SQLite statement waits for a lock held by
// another connection or process before failing.
const BusyTimeout = 10 * time.Second

var prefixPattern = regexp.MustCompile(`^[A-Za-z0-9_]*$`)

// DB is an open store: the handle on one database with one table prefix.
// It opens, migrates and closes the database, tells its dialect, expands
// table names and runs transactions; the reads and writes are the
// services' (see services.go), which share the handle and its
// transactions.
type DB struct {
	*handle
}

// handle is what the handle and every service share: the connections,
// the dialect and the table prefix. Its methods are the helpers the
// services have in common (table-name expansion, transactions, row
// scans); it has no exported method, so a service's method set is its
// port.
type handle struct {
	gdb     *gorm.DB
	sqlDB   *sql.DB
	dialect string
	prefix  string
	logger  *slog.Logger
	// hostHooks is called after commits that wrote host hook events.
	hostHooks *hostHookSignal
	// readOnly is set by OpenExisting: opening creates nothing.
	readOnly bool
	// searchLimits, when set, replaces narrowAddresses and narrowLogs
	// (SetSearchNarrowLimits).
	searchLimits *[2]int
	// searchWindow, when set, replaces recentWindow
	// (SetSearchRecentWindow).
	searchWindow *int
	// db is the DB this handle belongs to: the services reach the tables
	// that are still the DB's own (the Pro roll-ups written with a log
	// import) through it.
	db *DB
}

// Open connects to the database named by dsn and applies any pending
// migrations (see Migrate). dsn is one of
//
//	sqlite:PATH          an SQLite file (its directory is created); WAL
//	                     journal, a busy timeout and foreign keys are on.
//	                     sqlite::memory: gives a private in-memory database.
//	mysql:DRIVER_DSN     MySQL/MariaDB through go-sql-driver/mysql, e.g.
//	                     mysql:user:pass@tcp(127.0.0.1:3306)/wordpress
//
// For MySQL, parseTime, UTC times and the utf8mb4 charset are forced
// whatever the DSN says. prefix is the table prefix, used exactly as given
// (pass DefaultPrefix when the site sets none); it must match
// [A-Za-z0-9_]*. A nil logger means slog.Default(). Errors never contain
// the DSN's password.
func Open(ctx context.Context, dsn string, prefix string, logger *slog.Logger) (*DB, error) {
	db, err := open(ctx, dsn, prefix, logger, false)
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		db.sqlDB.Close()
		return nil, err
	}
	return db, nil
}

// ErrNotInstalled is returned by OpenExisting for an SQLite file that does
// not exist: the service was never installed there.
var ErrNotInstalled = errors.New("the service's tables are not installed")

// OpenExisting connects to the database like Open but writes nothing: no
// migration, no directory or SQLite file created, no journal mode change.
// It is for commands that only read (mailsvc config, doctor, uninstall's
// checks): use SchemaVersion to learn whether the service's tables are
// there. An SQLite file that does not exist is ErrNotInstalled.
func OpenExisting(ctx context.Context, dsn string, prefix string, logger *slog.Logger) (*DB, error) {
	return open(ctx, dsn, prefix, logger, true)
}

// open connects to the database named by dsn (see Open); readOnly creates
// nothing, and an SQLite file that does not exist is then ErrNotInstalled.
func open(ctx context.Context, dsn string, prefix string, logger *slog.Logger, readOnly bool) (*DB, error) {
	if !prefixPattern.MatchString(prefix) {
		return nil, fmt.Errorf("open store: table prefix %q may only contain letters, digits and underscores", prefix)
	}
	if logger == nil {
		logger = slog.Default()
	}
	scheme, rest, ok := strings.Cut(dsn, ":")
	if !ok || rest == "" {
		return nil, errors.New(`open store: DSN must be "sqlite:PATH" or "mysql:USER:PASS@tcp(HOST:PORT)/DBNAME"`)
	}
	db := &DB{handle: &handle{prefix: prefix, logger: logger, hostHooks: &hostHookSignal{}, readOnly: readOnly}}
	db.handle.db = db
	var err error
	switch scheme {
	case DialectSQLite:
		db.dialect = DialectSQLite
		if path, _, _ := strings.Cut(rest, "?"); readOnly && path != ":memory:" {
			if _, statErr := os.Stat(path); errors.Is(statErr, os.ErrNotExist) {
				return nil, fmt.Errorf("open store: sqlite %s: %w", path, ErrNotInstalled)
			}
		}
		err = db.openSQLite(rest)
	case DialectMySQL:
		db.dialect = DialectMySQL
		err = db.openMySQL(ctx, rest)
	default:
		return nil, fmt.Errorf(`open store: unsupported DSN scheme %q: use "sqlite:" or "mysql:"`, scheme)
	}
	if err != nil {
		return nil, err
	}
	return db, nil
}

// SchemaVersion returns the highest schema version recorded in the
// database, or 0 when the service's tables are not installed (no
// migrations table). Compare it with LatestVersion.
func (db *SchemaService) SchemaVersion(ctx context.Context) (int, error) {
	tables, err := (&InstallationService{db.handle}).ServiceTables(ctx)
	if err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	if !slices.Contains(tables, db.tableName("migrations")) {
		return 0, nil
	}
	versions, err := db.AppliedVersions(ctx)
	if err != nil {
		return 0, fmt.Errorf("schema version: %w", err)
	}
	if len(versions) == 0 {
		return 0, nil
	}
	return versions[len(versions)-1], nil
}

func (db *DB) gormConfig() *gorm.Config {
	return &gorm.Config{
		Logger: stopQuiet{gormlogger.NewSlogLogger(db.logger, gormlogger.Config{
			SlowThreshold:             time.Second,
			LogLevel:                  gormlogger.Warn,
			IgnoreRecordNotFoundError: true,
			// Never log bound values: settings carry (encrypted) secrets.
			ParameterizedQueries: true,
		})},
		NowFunc:                func() time.Time { return now() },
		SkipDefaultTransaction: true,
	}
}

// stopQuiet is gorm's logger without the ERROR line of a query cut short
// because its own context was cancelled: the service stopping (SIGTERM)
// cancels the queries in flight, an expected stop that the service logs
// at INFO ("stopped"), not as an SQL error with its trace. A query that
// fails while its context is still live, or for a deadline, is logged as
// before.
type stopQuiet struct{ gormlogger.Interface }

func (l stopQuiet) LogMode(level gormlogger.LogLevel) gormlogger.Interface {
	return stopQuiet{l.Interface.LogMode(level)}
}

func (l stopQuiet) Trace(ctx context.Context, begin time.Time, fc func() (string, int64), err error) {
	if err != nil && ctx != nil && errors.Is(ctx.Err(), context.Canceled) &&
		(errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "interrupted")) {
		return
	}
	l.Interface.Trace(ctx, begin, fc, err)
}

// now is the store's clock: UTC, truncated to the microsecond precision of
// the DATETIME(6) columns so values read back equal values written.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

func (db *DB) openSQLite(path string) error {
	path, query, _ := strings.Cut(path, "?")
	params, err := url.ParseQuery(query)
	if err != nil {
		return fmt.Errorf("open store: sqlite DSN parameters: %w", err)
	}
	memory := path == ":memory:"
	if !memory && !db.readOnly {
		if dir := filepath.Dir(path); dir != "" {
			if err := os.MkdirAll(dir, 0o750); err != nil {
				return fmt.Errorf("open store: create sqlite directory: %w", err)
			}
		}
	}
	params.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()))
	params.Add("_pragma", "foreign_keys(1)")
	if !memory && !db.readOnly {
		params.Add("_pragma", "journal_mode(WAL)")
		params.Add("_pragma", "synchronous(NORMAL)")
	}
	// Every transaction takes the write lock when it begins, so two
	// writers wait for each other (busy_timeout) instead of failing on a
	// lock upgrade.
	// The driver writes times in its "sqlite" format by default; setting
	// _time_format explicitly would make it skip _txlock (it stops reading
	// parameters there), so it is left unset.
	params.Set("_txlock", "immediate")
	gdb, err := gorm.Open(sqlite.Open(path+"?"+params.Encode()), db.gormConfig())
	if err != nil {
		return fmt.Errorf("open store: sqlite %s: %w", path, err)
	}
	sqlDB, err := gdb.DB()
	if err != nil {
		return fmt.Errorf("open store: sqlite handle: %w", err)
	}
	if memory {
		// Each connection to :memory: is a separate database: keep one
		// connection open forever.
		sqlDB.SetMaxOpenConns(1)
		sqlDB.SetMaxIdleConns(1)
		sqlDB.SetConnMaxLifetime(0)
		sqlDB.SetConnMaxIdleTime(0)
	} else {
		sqlDB.SetMaxOpenConns(8)
		sqlDB.SetMaxIdleConns(4)
	}
	db.gdb, db.sqlDB = gdb, sqlDB
	return nil
}

func (db *DB) openMySQL(ctx context.Context, driverDSN string) error {
	cfg, err := mysqldriver.ParseDSN(driverDSN)
	if err != nil {
		// The driver's parse errors do not echo the DSN.
		return fmt.Errorf("open store: mysql DSN: %w", err)
	}
	if cfg.DBName == "" {
		return errors.New("open store: mysql DSN names no database (…/DBNAME)")
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	// The driver fills the placeholders itself unless the DSN says
	// otherwise: one round trip per statement instead of a server-side
	// prepare, execute and close (about a third more messages per second
	// through the queue's enqueue, claim and outcome writes).
	if !strings.Contains(driverDSN, "interpolateParams=") {
		cfg.InterpolateParams = true
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	if err := cfg.Apply(mysqldriver.Charset("utf8mb4", "utf8mb4_unicode_ci")); err != nil {
		return fmt.Errorf("open store: mysql charset: %w", err)
	}
	connector, err := mysqldriver.NewConnector(cfg)
	if err != nil {
		return fmt.Errorf("open store: mysql connector: %w", err)
	}
	sqlDB := sql.OpenDB(connector)
	sqlDB.SetMaxOpenConns(20)
	sqlDB.SetMaxIdleConns(10)
	// Below the server's wait_timeout (8h by default, often much less on
	// shared hosting), so the pool never hands out a connection the
	// server has dropped.
	sqlDB.SetConnMaxLifetime(3 * time.Minute)
	sqlDB.SetConnMaxIdleTime(time.Minute)
	pingCtx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	if err := sqlDB.PingContext(pingCtx); err != nil {
		sqlDB.Close()
		return fmt.Errorf("open store: mysql %s/%s: %w", cfg.Addr, cfg.DBName, err)
	}
	gdb, err := gorm.Open(mysql.New(mysql.Config{Conn: sqlDB}), db.gormConfig())
	if err != nil {
		sqlDB.Close()
		return fmt.Errorf("open store: mysql gorm: %w", err)
	}
	db.gdb, db.sqlDB = gdb, sqlDB
	return nil
}

// Gorm returns the gorm handle, for packages that keep their own tables in
// this database (use TableName for their names).
func (db *DB) Gorm() *gorm.DB { return db.gdb }

// Dialect returns DialectMySQL or DialectSQLite.
func (db *DB) Dialect() string { return db.dialect }

// Prefix returns the table prefix.
func (db *DB) Prefix() string { return db.prefix }

// TableName returns the full name of one of mailsvc's tables:
// TableName("connections") is "wp_mailsvc_connections" with prefix "wp_".
func (db *DB) TableName(base string) string { return db.tableName(base) }

// tableName is TableName, for the services.
func (h *handle) tableName(base string) string { return h.prefix + "mailsvc_" + base }

// SQL returns the database/sql handle, for packages that keep their own
// tables in this database and query them with SQL (use Expand or
// TableName for their names, InSQLTransaction for transactions).
func (db *DB) SQL() *sql.DB { return db.sqlDB }

// Expand returns stmt with every {prefix}name replaced by the quoted full
// table name: "SELECT 1 FROM {prefix}mailsvc_logs" reads the site's
// table.
func (db *DB) Expand(stmt string) string { return db.handle.expand(stmt) }

// expand is Expand, for the services.
func (h *handle) expand(stmt string) string {
	return prefixedName.ReplaceAllString(stmt, "`"+h.prefix+"$1`")
}

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.sqlDB.PingContext(ctx); err != nil {
		return fmt.Errorf("ping %s store: %w", db.dialect, err)
	}
	return nil
}

// Close closes every connection. Later calls on db return errors.
func (db *DB) Close() error {
	if err := db.sqlDB.Close(); err != nil {
		return fmt.Errorf("close %s store: %w", db.dialect, err)
	}
	return nil
}

// DatabaseNow returns the database server's clock in UTC (the doctor
// compares it with the process's).
func (db *DB) DatabaseNow(ctx context.Context) (time.Time, error) {
	var t time.Time
	var err error
	if db.dialect == DialectMySQL {
		err = db.sqlDB.QueryRowContext(ctx, "SELECT UTC_TIMESTAMP(6)").Scan(&t)
	} else {
		var s string
		if err = db.sqlDB.QueryRowContext(ctx, "SELECT strftime('%Y-%m-%d %H:%M:%f', 'now')").Scan(&s); err == nil {
			t, err = time.Parse("2006-01-02 15:04:05.999", s)
		}
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("read the database clock: %w", err)
	}
	return t.UTC(), nil
}
