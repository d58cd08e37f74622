// Package migration imports the connections and email logs of other
// WordPress SMTP plugins (FluentSMTP, WP Mail SMTP, Easy WP SMTP, Post
// SMTP, SMTP Mailer, Gmail SMTP, WP SMTP / Solid Mail, SureMails) from
// the WordPress database the service shares with the site.
//
// Each plugin is one Source, in its own file. A Source only reads: it
// turns the plugin's options into Candidates (connections in our drivers'
// terms) and its log table into LogEntries. The Engine decides statuses,
// writes connections and logs, remembers what it imported and answers
// the routes and the command line.
package migration

import (
	"context"
	"errors"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Source ids, as the routes and `mailsvc import SOURCE` take them.
const (
	SourceFluentSMTP = "fluent-smtp"
	SourceWPMailSMTP = "wp-mail-smtp"
	SourceEasyWPSMTP = "easy-wp-smtp"
	SourcePostSMTP   = "post-smtp"
	SourceSMTPMailer = "smtp-mailer"
	SourceGmailSMTP  = "gmail-smtp"
	SourceWPSMTP     = "wp-smtp"
	SourceSureMails  = "suremails"
)

// Source reads one plugin's data from a Site. Implementations are
// stateless values registered with Register from an init function of
// their file; every method may be called concurrently.
type Source interface {
	// ID is the source id (one of the Source* constants).
	ID() string
	// Name is the plugin's display name ("FluentSMTP").
	Name() string
	// Detect reports whether the plugin left data on the site (its options
	// or its log table) and whether it is active. It must be cheap: a few
	// option reads and table probes, never a row count.
	Detect(ctx context.Context, site Site) (Detection, error)
	// Connections reads the plugin's connections and converts them. A
	// connection that cannot be converted is still returned (Driver ""
	// for unsupported, or with Missing/Issues set); an option that cannot
	// be read at all is an error in Setup.Errors, not a Go error. A Go
	// error means the site could not be read (database down).
	Connections(ctx context.Context, site Site) (*Setup, error)
	// Logs returns the reader of the plugin's email log, or nil when the
	// plugin keeps no log in the database.
	Logs() LogSource
}

// Detection is what Detect found.
type Detection struct {
	// Found is true when the plugin's settings or log table exist.
	Found bool
	// Active is true when the plugin is in the site's active plugins.
	Active bool
	// Version is the plugin's stored version when it keeps one ("" if not).
	Version string
}

// Setup is a source's connections, converted.
type Setup struct {
	Candidates []Candidate
	// DefaultKey and FallbackKey name the candidates the plugin uses as
	// its default and fallback connection ("" for none).
	DefaultKey  string
	FallbackKey string
	// Issues are source-wide remarks for the response's suggestions
	// (e.g. "email logging was off: only failures were logged").
	Issues []string
	// Errors are options that exist but cannot be read (a broken
	// serialized value); they go to the response's errors.
	Errors []string
}

// Candidate is one of the plugin's connections converted to one of our
// drivers. The Engine derives its status: unsupported when Driver is "",
// needs_password when Missing is not empty, needs_authorization for an
// OAuth driver without a refresh token in Settings, needs_review when
// Review is set or the settings fail the driver's validation, else ready.
type Candidate struct {
	// Key identifies the connection inside the source, stable across
	// imports (FluentSMTP's connection key, "primary", an additional
	// connection id). The Engine remembers source+Key → our connection id,
	// so importing twice updates instead of duplicating.
	Key string
	// Name is the connection name to create ("Amazon SES (from@x.com)").
	Name string
	// SourceSlug is the plugin's provider slug ("ses", "amazonses").
	SourceSlug string
	// Driver is our driver slug, "" when no driver fits (unsupported).
	Driver string
	// Settings are our driver's settings keys with decrypted values. A
	// secret that could not be decrypted is left out and listed in
	// Missing; never put an encrypted blob here.
	Settings map[string]any
	// Missing lists our settings keys the user must enter (a secret that
	// could not be decrypted, a credential kept in a constant of the
	// plugin).
	Missing []string
	// Issues are remarks on this connection for the user: constants of the
	// plugin that pinned a credential (name the MAILSVC_* equivalent, see
	// PinnedIssue), settings dropped in the conversion.
	Issues []string
	// Review asks the user to check the result before using it (a
	// conversion that is a guess).
	Review bool
}

// LogSource reads a plugin's email log in a stable order. Positions are
// non-negative int64 values that grow along that order (usually the
// table's auto-increment id); a source with two stores maps them into
// disjoint ranges (e.g. the second store's id + 1<<40) so that one
// position still orders every row.
type LogSource interface {
	// Available reports whether the log can be read; reason says why not
	// ("FluentSMTP's log table does not exist").
	Available(ctx context.Context, site Site) (ok bool, reason string, err error)
	// EstimateLogs returns a fast row count for the scan (Site.EstimateRows).
	EstimateLogs(ctx context.Context, site Site) (int64, error)
	// CountLogs counts the rows exactly; with a non-zero since, only the
	// rows logged at or after since.
	CountLogs(ctx context.Context, site Site, since time.Time) (int64, error)
	// ReadLogs returns up to limit entries whose Position is greater than
	// after, in ascending Position order. Fewer than limit means the end.
	// A row that cannot be converted is returned with Skip set, so the
	// position still advances.
	ReadLogs(ctx context.Context, site Site, after int64, limit int) ([]LogEntry, error)
}

// LogEntry is one row of a plugin's log, converted.
type LogEntry struct {
	// Position orders the row in its LogSource.
	Position int64
	// Time is when the message was logged, in UTC (the plugin's local
	// time converted with Site.Location).
	Time time.Time
	// Status is core.StatusDelivered, core.StatusFailed or
	// core.StatusQueued (a row still waiting in the plugin: the Engine
	// stores it as failed with a note, it is never sent).
	Status string
	// Message holds From, recipients, Subject, Text/HTML and headers as
	// the plugin logged them. Attachments are not carried (the plugins
	// keep only paths on their server).
	Message core.Message
	// Error is the plugin's error text for a failed message.
	Error string
	// Provider is the plugin's provider slug of the row when it has one.
	Provider string
	// Skip marks a row that cannot be imported (no recipient, unreadable);
	// SkipReason says why.
	Skip       bool
	SkipReason string
}

// Site is the WordPress site as a Source reads it. Table names are given
// without the prefix ("fsmpt_email_logs"); the Site adds it.
type Site interface {
	// Option returns an option's value, unserialized: nil, bool, int64,
	// float64, string, []any (a PHP array with keys 0..n-1 in order) or
	// map[string]any (any other PHP array; integer keys as decimal
	// strings). found is false when the option does not exist. A value
	// that is not valid PHP serialization comes back as its raw string
	// unless it starts like a serialized array or object, which is an
	// ErrUnreadable error.
	Option(ctx context.Context, name string) (value any, found bool, err error)
	// Unserialize decodes a PHP-serialized column value into the same
	// shapes as Option; a value that is not serialized is an error.
	Unserialize(value string) (any, error)
	// ActivePlugins returns the plugin files of the active plugins
	// ("fluent-smtp/fluent-smtp.php"), network-activated ones included.
	ActivePlugins(ctx context.Context) ([]string, error)
	// Constant returns a constant defined in wp-config.php (literal
	// values only), ok=false when not defined.
	Constant(name string) (value string, ok bool)
	// HasTable reports whether the table exists.
	HasTable(ctx context.Context, table string) (bool, error)
	// EstimateRows returns a fast row count of a whole table: the exact
	// count when the table is small, else the database's statistics
	// estimate (information_schema), never a full scan.
	EstimateRows(ctx context.Context, table string) (int64, error)
	// CountRows counts the rows of table matching where (SQL with ?
	// placeholders; "" for every row).
	CountRows(ctx context.Context, table, where string, args ...any) (int64, error)
	// Rows reads rows of a table, see RowQuery.
	Rows(ctx context.Context, q RowQuery) ([]Row, error)
	// Location is the site's time zone (timezone_string, else gmt_offset,
	// else UTC), to convert the plugins' site-local times.
	Location(ctx context.Context) (*time.Location, error)
	// Decrypt opens a secret stored by a plugin with the scheme's
	// algorithm and the site's keys. It returns ErrUndecryptable when the
	// value cannot be opened (wrong or missing key, not in the scheme's
	// format); the value is never echoed in the error.
	Decrypt(ctx context.Context, scheme Scheme, value string) (string, error)
}

// RowQuery selects rows of one table in keyset order: the rows whose Key
// column is greater than After, ascending by Key, at most Limit.
type RowQuery struct {
	Table string
	// Columns are the plain column names to read (quoted by the Site, so
	// `to` and `from` are fine). Values come back as the database's text,
	// NULL as absent from the Row: DATETIME and TIMESTAMP columns as
	// "2006-01-02 15:04:05" in the server's default session time zone
	// (what a plugin that wrote current_time('mysql') wrote).
	Columns []string
	// UnixColumns are TIMESTAMP columns holding real instants, read as
	// Unix seconds (UNIX_TIMESTAMP), whatever the session time zone.
	UnixColumns []string
	// Key is the integer key column (usually "id").
	Key   string
	After int64
	Limit int
	// Where adds a condition (SQL with ? placeholders), e.g.
	// "post_type = ?".
	Where string
	Args  []any
}

// Row is one row read by Site.Rows: column name → text value.
type Row map[string]string

// Scheme names how a plugin stored a secret.
type Scheme string

// Secret schemes.
const (
	// SchemeFluentSMTP is FluentSMTP's AES-256-CTR with
	// FLUENTMAIL_ENCRYPT_KEY/_SALT, else LOGGED_IN_KEY/LOGGED_IN_SALT.
	SchemeFluentSMTP Scheme = "fluentsmtp"
	// SchemeWPMailSMTP is WP Mail SMTP's libsodium secretbox with
	// WPMS_CRYPTO_KEY, else the option wp_mail_smtp_mail_key.
	SchemeWPMailSMTP Scheme = "wpmailsmtp"
	// SchemeEasyWPSMTP is Easy WP SMTP v2's secretbox with
	// EASY_WP_SMTP_CRYPTO_KEY, else the option easy_wp_smtp_mail_key.
	SchemeEasyWPSMTP Scheme = "easywpsmtp"
	// SchemeEasyWPSMTPv1 is Easy WP SMTP v1's AES-256-CTR keyed by
	// SHA-256 of the option swpsmtp_enc_key.
	SchemeEasyWPSMTPv1 Scheme = "easywpsmtp1"
	// SchemeBase64 is standard base64 (Post SMTP, SMTP Mailer, WP SMTP).
	SchemeBase64 Scheme = "base64"
	// SchemeBase64Unpadded is base64 with the '=' padding stripped
	// (SureMails).
	SchemeBase64Unpadded Scheme = "base64-unpadded"
)

// ErrUndecryptable is returned by Site.Decrypt for a value that cannot be
// opened with the site's keys.
var ErrUndecryptable = errors.New("secret cannot be decrypted with the site's keys")

// ErrUnreadable is returned by Site.Option for an option whose serialized
// value is broken (e.g. byte lengths changed by a charset conversion).
var ErrUnreadable = errors.New("option value is not readable PHP serialization")
