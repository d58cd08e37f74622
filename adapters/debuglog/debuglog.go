// Package debuglog implements the spec's debug logging: a log root on
// disk, the channels switched on by the MAIL_SVC_DEBUG_* constants (HTTP
// OUT lines of drivers' requests, incoming request metadata and payloads,
// mail_svc_api_debug payloads, database query summaries), the secret
// visibility modes, and the stored SMTP transcripts served by the tools
// routes.
//
// The log root is <MAIL_SVC_DEBUG_LOG_DIR>/mail-svc-logs/ when that
// constant is set, else <data dir>/logs/: the standalone equivalent of the
// plugin's logs folder under the host's uploads directory. Channel lines
// go to <root>/debug.log (rotated to debug.log.1 past MaxFileBytes), SMTP
// transcripts to <root>/smtp-sessions/.
package debuglog

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Channel tags that start each line of debug.log.
const (
	TagHTTPOut        = "HTTP OUT"
	TagRequest        = "REQUEST"
	TagRequestPayload = "REQUEST PAYLOAD"
	TagMailer         = "MAILER"
	TagQueries        = "QUERIES"
)

// Defaults of Options.
const (
	DefaultMaxFileBytes = 10 << 20
	DefaultMaxBodyBytes = 4 << 10
	logFileName         = "debug.log"
)

// Options configure a debug log. Every channel is off unless set.
type Options struct {
	// Root is the log root directory.
	Root string
	// HTTP logs drivers' outgoing HTTP requests (MAIL_SVC_DEBUG_HTTP).
	HTTP bool
	// Request logs incoming REST requests (MAIL_SVC_DEBUG_REQUEST).
	Request bool
	// Mailer logs mail_svc_api_debug payloads (MAIL_SVC_DEBUG_MAILER).
	Mailer bool
	// Queries logs a query summary at shutdown (MAIL_SVC_DEBUG_QUERIES
	// together with SAVEQUERIES).
	Queries bool
	// Visibility of secrets in every line but REQUEST PAYLOAD.
	Visibility string
	// RequestVisibility of secrets in REQUEST PAYLOAD lines.
	RequestVisibility string
	// SensitiveKeys returns the extra sensitive keys (configuration and
	// the mail_svc_sensitive_keys filter), asked for each line; nil means
	// none.
	SensitiveKeys func() []string
	// MaxFileBytes rotates debug.log past this size; 0 means
	// DefaultMaxFileBytes.
	MaxFileBytes int64
	// MaxBodyBytes truncates logged bodies; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int
}

// Root returns the log root the constants select: <MAIL_SVC_DEBUG_LOG_DIR>/mail-svc-logs
// when set, else <dataDir>/logs.
func Root(consts *core.Constants, dataDir string) string {
	if dir := consts.String("MAIL_SVC_DEBUG_LOG_DIR"); dir != "" {
		return filepath.Join(dir, "mail-svc-logs")
	}
	return filepath.Join(dataDir, "logs")
}

// OptionsFrom reads every debug logging constant.
func OptionsFrom(consts *core.Constants, dataDir string, sensitiveKeys func() []string) Options {
	return Options{
		Root:              Root(consts, dataDir),
		HTTP:              consts.Bool("MAIL_SVC_DEBUG_HTTP"),
		Request:           consts.Bool("MAIL_SVC_DEBUG_REQUEST"),
		Mailer:            consts.Bool("MAIL_SVC_DEBUG_MAILER"),
		Queries:           consts.Bool("MAIL_SVC_DEBUG_QUERIES") && consts.Bool("SAVEQUERIES"),
		Visibility:        consts.SecretVisibility(),
		RequestVisibility: consts.RequestSecretVisibility(),
		SensitiveKeys:     sensitiveKeys,
	}
}

// APIDebugResponseEnabled reports whether raw diagnostics may be attached
// to API responses: the legacy MAIL_SVC_DEBUG_ATTACH_API_DEBUG constant,
// passed through the mail_svc_api_debug_response_enabled filter.
func APIDebugResponseEnabled(consts *core.Constants, hooks *core.Hooks) bool {
	v, ok := hooks.ApplyFilters(core.HookAPIDebugResponseEnable, consts.Bool("MAIL_SVC_DEBUG_ATTACH_API_DEBUG")).(bool)
	return ok && v
}

// Log writes the debug channels' lines to <root>/debug.log. It is safe for
// concurrent use; the file is created on the first line.
type Log struct {
	opts Options
	now  func() time.Time

	mu   sync.Mutex
	f    *os.File
	size int64
	err  error // the last write error, reported once by Close
}

// New returns a debug log with opts.
func New(opts Options) *Log {
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = DefaultMaxFileBytes
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = DefaultMaxBodyBytes
	}
	return &Log{opts: opts, now: time.Now}
}

// Options returns the options the log was made with.
func (l *Log) Options() Options { return l.opts }

// Path returns the path of debug.log.
func (l *Log) Path() string { return filepath.Join(l.opts.Root, logFileName) }

// redactor returns the redactor of every channel but REQUEST PAYLOAD.
func (l *Log) redactor() Redactor {
	return Redactor{Visibility: l.opts.Visibility, Extra: l.extraSensitiveKeys()}
}

// extraSensitiveKeys returns Options.SensitiveKeys' keys.
func (l *Log) extraSensitiveKeys() []string {
	if l.opts.SensitiveKeys == nil {
		return nil
	}
	return l.opts.SensitiveKeys()
}

// requestRedactor returns the redactor of REQUEST PAYLOAD lines.
func (l *Log) requestRedactor() Redactor {
	v := l.opts.RequestVisibility
	if v == "" {
		v = l.opts.Visibility
	}
	return Redactor{Visibility: v, Extra: l.extraSensitiveKeys()}
}

// truncate shortens a logged body to MaxBodyBytes.
func (l *Log) truncate(s string) string {
	if len(s) <= l.opts.MaxBodyBytes {
		return s
	}
	return fmt.Sprintf("%s...[truncated, %d bytes in all]", s[:l.opts.MaxBodyBytes], len(s))
}

// write appends one line: a UTC timestamp, the channel tag and fields as
// a JSON object.
func (l *Log) write(tag string, fields any) {
	payload, err := json.Marshal(fields)
	if err != nil {
		payload = []byte(fmt.Sprintf("%q", fmt.Sprint(fields)))
	}
	line := fmt.Sprintf("%s %s %s\n", l.now().UTC().Format("2006-01-02T15:04:05.000Z"), tag, payload)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.open(); err != nil {
		l.err = err
		return
	}
	if l.size+int64(len(line)) > l.opts.MaxFileBytes && l.size > 0 {
		l.rotate()
		if err := l.open(); err != nil {
			l.err = err
			return
		}
	}
	n, err := l.f.WriteString(line)
	l.size += int64(n)
	if err != nil {
		l.err = err
	}
}

func (l *Log) open() error {
	if l.f != nil {
		return nil
	}
	if err := os.MkdirAll(l.opts.Root, 0o700); err != nil {
		return fmt.Errorf("create debug log root: %w", err)
	}
	f, err := os.OpenFile(l.Path(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open debug log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("stat debug log: %w", err)
	}
	l.f, l.size = f, st.Size()
	return nil
}

func (l *Log) rotate() {
	_ = l.f.Close()
	l.f = nil
	_ = os.Rename(l.Path(), l.Path()+".1")
}

// Close closes the file and returns the last write error, if any.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var err error
	if l.f != nil {
		err = l.f.Close()
		l.f = nil
	}
	if l.err != nil {
		err = fmt.Errorf("debug log: %w", l.err)
	}
	return err
}
