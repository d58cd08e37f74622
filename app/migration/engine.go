package migration

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/core"
)

// Limits of the import request (spec: Limits).
const (
	// LogChunk is how many log rows one import call moves.
	LogChunk = 200
	// MaxLogs is the upper bound of max_logs.
	MaxLogs = 20000
	// StateScope is the settings scope where the Engine remembers what it
	// imported: source+key → connection id, and each source's log
	// high-water position.
	StateScope = "migration"
)

// Connection statuses of an import response (spec: States).
const (
	StatusReady              = "ready"
	StatusNeedsPassword      = "needs_password"
	StatusNeedsAuthorization = "needs_authorization"
	StatusNeedsReview        = "needs_review"
	StatusUnsupported        = "unsupported"
)

// ConnectionWriter creates and updates connections with validation,
// encryption and pins (*app.Connections).
type ConnectionWriter interface {
	Get(ctx context.Context, id int64) (*core.Connection, error)
	Create(ctx context.Context, in app.ConnectionInput) (*core.Connection, error)
	Update(ctx context.Context, id int64, in app.ConnectionInput) (*core.Connection, error)
}

// SettingsWriter updates the free settings (*app.Settings): the default
// and fallback connection.
type SettingsWriter interface {
	Update(ctx context.Context, patch map[string]any) (map[string]any, error)
}

// LogImporter stores finished logs as they are, never sending them: one
// transaction per call, recipients and roll-ups kept in step
// (*store.LogService.ImportLogs).
type LogImporter interface {
	ImportLogs(ctx context.Context, logs []*core.Log) error
}

// LogBodyKeeper applies the log_body settings to logs just imported
// (*logbody.Keeper): they are redacted (or lose their bodies) as the
// delivered logs of the service are.
type LogBodyKeeper interface {
	KeepBodies(ctx context.Context, logs []*core.Log) error
}

// Engine runs scans and imports against one site.
type Engine struct {
	// Site is the WordPress site read; nil in standalone mode, where a
	// scan finds nothing and every import is refused as unavailable.
	Site        Site
	Connections ConnectionWriter
	Settings    SettingsWriter
	// State is the settings store holding StateScope.
	State core.SettingsStore
	Logs  LogImporter
	// Bodies, when set, applies the log_body settings to each chunk of
	// imported logs; nil keeps them whole (`mailsvc logs redact` applies
	// the settings later).
	Bodies LogBodyKeeper
	// Sources overrides the registered sources (tests); nil means Sources().
	Sources []Source
	// SensitiveKeys returns the extra sensitive keys (configuration and the
	// mail_svc_sensitive_keys filter), masked in the response like the
	// connection routes mask them; nil means none.
	SensitiveKeys func() []string
}

func (e *Engine) sources() []Source {
	if e.Sources != nil {
		return e.Sources
	}
	return Sources()
}

func (e *Engine) lookup(id string) (Source, bool) {
	for _, s := range e.sources() {
		if s.ID() == id {
			return s, true
		}
	}
	return nil, false
}

// ScanEntry is one source found on the site.
type ScanEntry struct {
	Source  string `json:"source"`
	Name    string `json:"name"`
	Active  bool   `json:"active"`
	Version string `json:"version,omitempty"`
	// Connections and LogRows are nil when counts were skipped.
	Connections *int `json:"connections"`
	// LogsAvailable says whether the plugin keeps a log the import reads.
	LogsAvailable bool   `json:"logs_available"`
	LogRows       *int64 `json:"log_rows"`
	// LogRowsEstimated is true when LogRows is the database's estimate.
	LogRowsEstimated bool     `json:"log_rows_estimated"`
	Errors           []string `json:"errors"`
}

// Scan lists the sources found on the site. With counts, each entry has
// its connection count and its log row count (EstimateLogs: exact for a
// small table, the statistics estimate for a large one).
func (e *Engine) Scan(ctx context.Context, counts bool) ([]ScanEntry, error) {
	out := []ScanEntry{}
	if e.Site == nil {
		return out, nil
	}
	for _, src := range e.sources() {
		det, err := src.Detect(ctx, e.Site)
		if err != nil {
			return nil, fmt.Errorf("detect %s: %w", src.ID(), err)
		}
		if !det.Found {
			continue
		}
		entry := ScanEntry{Source: src.ID(), Name: src.Name(), Active: det.Active, Version: det.Version, Errors: []string{}}
		if ls := src.Logs(); ls != nil {
			ok, _, err := ls.Available(ctx, e.Site)
			if err != nil {
				return nil, fmt.Errorf("probe %s logs: %w", src.ID(), err)
			}
			entry.LogsAvailable = ok
			if ok && counts {
				n, err := ls.EstimateLogs(ctx, e.Site)
				if err != nil {
					return nil, fmt.Errorf("count %s logs: %w", src.ID(), err)
				}
				entry.LogRows = &n
				entry.LogRowsEstimated = n > ExactCountBelow
			}
		}
		if counts {
			setup, err := src.Connections(ctx, e.Site)
			if err != nil {
				return nil, fmt.Errorf("read %s connections: %w", src.ID(), err)
			}
			n := len(setup.Candidates)
			entry.Connections = &n
			entry.Errors = append(entry.Errors, setup.Errors...)
		}
		if counts && entry.LogRows == nil {
			zero := int64(0)
			entry.LogRows = &zero
		}
		out = append(out, entry)
	}
	return out, nil
}

// ExactCountBelow is the table size under which Site.EstimateRows counts
// exactly; above it the count is the statistics estimate.
const ExactCountBelow = 100000

// ImportRequest is the MigrationImportRequest.
type ImportRequest struct {
	Source            string `json:"source"`
	DryRun            bool   `json:"dry_run"`
	ImportConnections *bool  `json:"import_connections"`
	ImportLogs        bool   `json:"import_logs"`
	// MaxLogs caps the rows a log run imports (0 or nil: no cap).
	MaxLogs     *int64 `json:"max_logs"`
	RestartLogs bool   `json:"restart_logs"`
	// RetentionDays, on a dry run, counts the logs newer than that many days.
	RetentionDays *int64 `json:"retention_days"`
	// Cursor continues a log run: the logs.cursor of the previous answer.
	Cursor string `json:"cursor"`
}

// Conversion names the source's provider slug and our driver.
type Conversion struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// ConnectionReport is one connection of an import response.
type ConnectionReport struct {
	Key          string        `json:"key"`
	Name         string        `json:"name"`
	Status       string        `json:"status"`
	Missing      []string      `json:"missing"`
	Issues       []string      `json:"issues"`
	Conversion   Conversion    `json:"conversion"`
	WasDefault   bool          `json:"was_default"`
	WasFallback  bool          `json:"was_fallback"`
	ConnectionID *int64        `json:"connection_id"`
	Settings     core.Settings `json:"settings"`
	// Updated is true when an earlier import's connection was updated.
	Updated bool `json:"updated"`
}

// LogReport is the logs object of an import response.
type LogReport struct {
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
	// Total is the number of rows in the source's log.
	Total int64 `json:"total"`
	// Imported and Skipped count this call's rows; ImportedTotal the whole
	// run (the cursor chain).
	Imported      int    `json:"imported"`
	Skipped       int    `json:"skipped"`
	ImportedTotal int64  `json:"imported_total"`
	Cursor        string `json:"cursor"`
	Done          bool   `json:"done"`
	// InRetention (dry run with retention_days) counts the rows newer than
	// the retention: the ones retention would keep.
	InRetention *int64 `json:"in_retention,omitempty"`
}

// ImportResult is the answer of an import.
type ImportResult struct {
	Source      string             `json:"source"`
	DryRun      bool               `json:"dry_run"`
	Connections []ConnectionReport `json:"connections"`
	Logs        LogReport          `json:"logs"`
	Suggestions []string           `json:"suggestions"`
	Errors      []string           `json:"errors"`
}

// cursor is the decoded logs.cursor: where a run stands.
type cursor struct {
	Source   string `json:"s"`
	Position int64  `json:"p"`
	Imported int64  `json:"n"`
	Total    int64  `json:"t"`
}

func (c cursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (cursor, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, false
	}
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil || c.Source == "" || c.Position < 0 || c.Imported < 0 {
		return cursor{}, false
	}
	return c, true
}

// validate checks the request before anything is read or written.
func (e *Engine) validate(ctx context.Context, req ImportRequest) (Source, *cursor, error) {
	fields := map[string]string{}
	var src Source
	switch s, ok := e.lookup(req.Source); {
	case req.Source == "":
		fields["source"] = "This field is required."
	case !ok:
		fields["source"] = fmt.Sprintf("Unknown source %q. Known sources: %s.", req.Source, strings.Join(e.ids(), ", "))
	default:
		src = s
	}
	if req.MaxLogs != nil && (*req.MaxLogs < 0 || *req.MaxLogs > MaxLogs) {
		fields["max_logs"] = fmt.Sprintf("Must be between 0 and %d.", MaxLogs)
	}
	if req.RetentionDays != nil && *req.RetentionDays < 0 {
		fields["retention_days"] = "Must be 0 or more."
	}
	var cur *cursor
	if req.Cursor != "" && !req.RestartLogs {
		c, ok := decodeCursor(req.Cursor)
		switch {
		case !ok:
			fields["cursor"] = "Not a cursor returned by this import."
		case src != nil && c.Source != src.ID():
			fields["cursor"] = fmt.Sprintf("This cursor belongs to the import of %s, not %s.", c.Source, src.ID())
		default:
			cur = &c
		}
	}
	if err := core.Invalid(fields); err != nil {
		return nil, nil, err
	}
	if e.Site == nil {
		return nil, nil, core.InvalidField("source", fmt.Sprintf("%s is not available: mailsvc runs standalone, without a WordPress site to import from.", src.Name()))
	}
	det, err := src.Detect(ctx, e.Site)
	if err != nil {
		return nil, nil, fmt.Errorf("detect %s: %w", src.ID(), err)
	}
	if !det.Found {
		return nil, nil, core.InvalidField("source", fmt.Sprintf("%s is not present on this site: none of its settings or logs were found.", src.Name()))
	}
	return src, cur, nil
}

func (e *Engine) ids() []string {
	var ids []string
	for _, s := range e.sources() {
		ids = append(ids, s.ID())
	}
	return ids
}

// Import assesses (DryRun) or imports a source's connections and one
// chunk of its log. Bad input is a validation error and writes nothing.
func (e *Engine) Import(ctx context.Context, req ImportRequest) (*ImportResult, error) {
	src, cur, err := e.validate(ctx, req)
	if err != nil {
		return nil, err
	}
	res := &ImportResult{Source: src.ID(), DryRun: req.DryRun, Connections: []ConnectionReport{}, Suggestions: []string{}, Errors: []string{}}
	state, err := e.loadState(ctx)
	if err != nil {
		return nil, err
	}
	if err := e.importConnections(ctx, src, req, state, res); err != nil {
		return nil, err
	}
	if err := e.importLogs(ctx, src, req, cur, state, res); err != nil {
		return nil, err
	}
	return res, nil
}

func (e *Engine) loadState(ctx context.Context) (map[string]any, error) {
	if e.State == nil {
		return map[string]any{}, nil
	}
	st, err := e.State.LoadSettings(ctx, StateScope)
	if err != nil {
		return nil, fmt.Errorf("load migration state: %w", err)
	}
	return st, nil
}

func (e *Engine) saveState(ctx context.Context, values map[string]any) error {
	if e.State == nil {
		return nil
	}
	if err := e.State.SaveSettings(ctx, StateScope, values); err != nil {
		return fmt.Errorf("save migration state: %w", err)
	}
	return nil
}

func connStateKey(source, key string) string { return "connection:" + source + ":" + key }
func logStateKey(source string) string       { return "logs:" + source }

// assess derives a candidate's status and the issues that explain it.
func (e *Engine) assess(c Candidate) ConnectionReport {
	r := ConnectionReport{
		Key: c.Key, Name: c.Name,
		Missing:    append([]string{}, c.Missing...),
		Issues:     append([]string{}, c.Issues...),
		Conversion: Conversion{From: c.SourceSlug, To: c.Driver},
		Settings:   core.Settings{},
	}
	sort.Strings(r.Missing)
	d, ok := core.LookupDriver(c.Driver)
	if c.Driver == "" || !ok {
		r.Status = StatusUnsupported
		r.Issues = append(r.Issues, fmt.Sprintf("No mailsvc driver sends through %q: create this connection by hand.", c.SourceSlug))
		r.Conversion.To = ""
		return r
	}
	var extra []string
	if e.SensitiveKeys != nil {
		extra = e.SensitiveKeys()
	}
	r.Settings = core.MaskSecrets(core.Settings(c.Settings).Clone(), func(k string) bool { return sensitive(d, k, extra) })
	switch {
	case len(c.Missing) > 0:
		r.Status = StatusNeedsPassword
	case d.OAuthProvider != "" && core.Settings(c.Settings).String(core.KeyRefreshToken) == "":
		r.Status = StatusNeedsAuthorization
		r.Issues = append(r.Issues, "Authorize this connection again (Connections → Authorize): its OAuth token cannot be carried over.")
	case c.Review:
		r.Status = StatusNeedsReview
	default:
		r.Status = StatusReady
	}
	if r.Status == StatusReady || r.Status == StatusNeedsAuthorization || r.Status == StatusNeedsReview {
		if err := d.ValidateSettings(core.Settings(c.Settings).Clone()); err != nil {
			r.Status = StatusNeedsReview
			fields := core.ErrorFields(err)
			keys := make([]string, 0, len(fields))
			for k := range fields {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				r.Issues = append(r.Issues, fmt.Sprintf("%s: %s", k, fields[k]))
			}
			if len(fields) == 0 {
				r.Issues = append(r.Issues, core.ErrorMessage(err))
			}
		}
	}
	return r
}

// sensitive is the connection routes' rule: the driver's schema, or a key
// whose name says it is a secret.
func sensitive(d *core.Driver, key string, extra []string) bool {
	if f := d.Field(key); f != nil && f.Sensitive {
		return true
	}
	return core.IsSensitiveKey(key, extra)
}

// creatable reports whether a connection of this status is written: the
// ones that validate. needs_password and unsupported ones are reported
// for the user to create by hand.
func creatable(status string) bool {
	return status == StatusReady || status == StatusNeedsAuthorization
}

func (e *Engine) importConnections(ctx context.Context, src Source, req ImportRequest, state map[string]any, res *ImportResult) error {
	setup, err := src.Connections(ctx, e.Site)
	if err != nil {
		return fmt.Errorf("read %s connections: %w", src.ID(), err)
	}
	res.Errors = append(res.Errors, setup.Errors...)
	res.Suggestions = append(res.Suggestions, setup.Issues...)
	write := !req.DryRun && (req.ImportConnections == nil || *req.ImportConnections)
	newState := map[string]any{}
	patch := map[string]any{}
	for _, c := range setup.Candidates {
		r := e.assess(c)
		r.WasDefault = c.Key != "" && c.Key == setup.DefaultKey
		r.WasFallback = c.Key != "" && c.Key == setup.FallbackKey
		if id, ok := core.AsInt(state[connStateKey(src.ID(), c.Key)]); ok {
			if _, err := e.Connections.Get(ctx, id); err == nil {
				r.ConnectionID = &id
			} else if core.ErrorCode(err) != core.ENOTFOUND {
				return fmt.Errorf("read imported connection %d: %w", id, err)
			}
		}
		if write && creatable(r.Status) {
			conn, updated, err := e.writeConnection(ctx, c, r.ConnectionID)
			if core.ErrorCode(err) == core.EINVALID {
				r.Status = StatusNeedsReview
				r.Issues = append(r.Issues, core.ErrorMessage(err))
				for k, m := range core.ErrorFields(err) {
					r.Issues = append(r.Issues, fmt.Sprintf("%s: %s", k, m))
				}
			} else if err != nil {
				return err
			} else {
				r.ConnectionID = &conn.ID
				r.Settings = conn.Settings
				r.Updated = updated
				newState[connStateKey(src.ID(), c.Key)] = conn.ID
				if r.WasDefault {
					patch["default_connection_id"] = conn.ID
				}
				if r.WasFallback {
					patch["fallback_connection_id"] = conn.ID
				}
			}
		}
		res.Connections = append(res.Connections, r)
	}
	if len(res.Connections) == 0 {
		res.Suggestions = append(res.Suggestions, fmt.Sprintf("%s has no connection to import.", src.Name()))
	}
	for _, r := range res.Connections {
		if r.Status == StatusNeedsPassword {
			res.Suggestions = append(res.Suggestions, fmt.Sprintf("%s: enter %s, then import again or create the connection by hand.", r.Name, strings.Join(r.Missing, ", ")))
		}
	}
	if !write {
		return nil
	}
	if len(newState) > 0 {
		if err := e.saveState(ctx, newState); err != nil {
			return err
		}
	}
	if len(patch) > 0 && e.Settings != nil {
		if _, err := e.Settings.Update(ctx, patch); err != nil {
			return fmt.Errorf("set default connection: %w", err)
		}
	}
	return nil
}

func (e *Engine) writeConnection(ctx context.Context, c Candidate, existing *int64) (*core.Connection, bool, error) {
	name, driver := c.Name, c.Driver
	settings := map[string]any{}
	for k, v := range c.Settings {
		settings[k] = v
	}
	in := app.ConnectionInput{Name: &name, Driver: &driver, Settings: settings}
	if existing != nil {
		conn, err := e.Connections.Update(ctx, *existing, in)
		if err != nil {
			return nil, false, fmt.Errorf("update imported connection %d: %w", *existing, err)
		}
		return conn, true, nil
	}
	conn, err := e.Connections.Create(ctx, in)
	if err != nil {
		return nil, false, fmt.Errorf("create connection %q: %w", name, err)
	}
	return conn, false, nil
}

func (e *Engine) importLogs(ctx context.Context, src Source, req ImportRequest, cur *cursor, state map[string]any, res *ImportResult) error {
	ls := src.Logs()
	if ls == nil {
		res.Logs = LogReport{Reason: fmt.Sprintf("%s keeps no email log in the database.", src.Name()), Done: true}
		return nil
	}
	ok, reason, err := ls.Available(ctx, e.Site)
	if err != nil {
		return fmt.Errorf("probe %s logs: %w", src.ID(), err)
	}
	if !ok {
		res.Logs = LogReport{Reason: reason, Done: true}
		return nil
	}
	res.Logs.Available = true
	if req.DryRun || !req.ImportLogs {
		total, err := ls.CountLogs(ctx, e.Site, time.Time{})
		if err != nil {
			return fmt.Errorf("count %s logs: %w", src.ID(), err)
		}
		res.Logs.Total = total
		res.Logs.Done = !req.ImportLogs
		if req.DryRun && req.RetentionDays != nil && *req.RetentionDays > 0 {
			since := time.Now().UTC().Add(-time.Duration(*req.RetentionDays) * 24 * time.Hour)
			n, err := ls.CountLogs(ctx, e.Site, since)
			if err != nil {
				return fmt.Errorf("count %s logs in retention: %w", src.ID(), err)
			}
			res.Logs.InRetention = &n
			if n < total {
				res.Suggestions = append(res.Suggestions, fmt.Sprintf("%d of %d logs are older than %d days: log retention would delete them soon after the import.", total-n, total, *req.RetentionDays))
			}
		}
		if req.DryRun && req.ImportLogs {
			res.Logs.Done = true
		}
		return nil
	}
	if e.Logs == nil {
		return core.Errorf(core.EINVALID, "Importing logs is not available: the log store cannot import.")
	}
	high, _ := core.AsInt(state[logStateKey(src.ID())])
	var c cursor
	switch {
	case cur != nil:
		c = *cur
	case req.RestartLogs:
		c = cursor{Source: src.ID()}
	default:
		c = cursor{Source: src.ID(), Position: high}
	}
	if cur == nil {
		total, err := ls.CountLogs(ctx, e.Site, time.Time{})
		if err != nil {
			return fmt.Errorf("count %s logs: %w", src.ID(), err)
		}
		c.Total = total
	}
	var maxLogs int64
	if req.MaxLogs != nil {
		maxLogs = *req.MaxLogs
	}
	limit := int64(LogChunk)
	if maxLogs > 0 {
		limit = min(limit, maxLogs-c.Imported)
	}
	res.Logs.Total = c.Total
	if limit <= 0 {
		res.Logs.ImportedTotal = c.Imported
		res.Logs.Done = true
		return nil
	}
	entries, err := ls.ReadLogs(ctx, e.Site, c.Position, int(limit))
	if err != nil {
		return fmt.Errorf("read %s logs: %w", src.ID(), err)
	}
	batch := make([]*core.Log, 0, len(entries))
	pos := c.Position
	for _, en := range entries {
		pos = max(pos, en.Position)
		switch {
		case en.Position <= high:
			res.Logs.Skipped++ // imported by an earlier run
		case en.Skip:
			res.Logs.Skipped++
		default:
			l, ok := toLog(src, en)
			if !ok {
				res.Logs.Skipped++
				continue
			}
			batch = append(batch, l)
		}
	}
	if len(batch) > 0 {
		if err := e.Logs.ImportLogs(ctx, batch); err != nil {
			return fmt.Errorf("store imported %s logs: %w", src.ID(), err)
		}
		// The chunk is imported whatever happens next: a failure here
		// leaves its bodies whole (shown redacted) for `mailsvc logs
		// redact`, and is reported without failing the import.
		if e.Bodies != nil {
			if err := e.Bodies.KeepBodies(ctx, batch); err != nil {
				res.Errors = append(res.Errors, "The imported logs keep their whole bodies until `mailsvc logs redact` runs: the log body settings could not be applied.")
			}
		}
	}
	if pos > high {
		if err := e.saveState(ctx, map[string]any{logStateKey(src.ID()): pos}); err != nil {
			return err
		}
	}
	c.Position = pos
	c.Imported += int64(len(batch))
	res.Logs.Imported = len(batch)
	res.Logs.ImportedTotal = c.Imported
	res.Logs.Done = int64(len(entries)) < limit || (maxLogs > 0 && c.Imported >= maxLogs)
	res.Logs.Cursor = c.encode()
	return nil
}

// queuedNote is the error recorded on a log that was still queued in the
// source plugin: imported logs are never sent.
const queuedNote = "Still queued in %s when it was imported; not sent by mailsvc."

// toLog converts an entry to a finished log marked with its source.
func toLog(src Source, en LogEntry) (*core.Log, bool) {
	if len(en.Message.Recipients()) == 0 || en.Time.IsZero() {
		return nil, false
	}
	t := en.Time.UTC()
	l := &core.Log{
		Message:       en.Message,
		Source:        "import:" + src.ID(),
		LastError:     en.Error,
		CreatedAt:     t,
		UpdatedAt:     t,
		NextAttemptAt: t,
		Attempts:      1,
	}
	switch en.Status {
	case core.StatusDelivered:
		l.Status = core.StatusDelivered
		l.DeliveredAt = &t
	case core.StatusQueued, core.StatusSending:
		l.Status = core.StatusFailed
		l.Attempts = 0
		l.LastError = strings.TrimSpace(fmt.Sprintf(queuedNote, src.Name()) + " " + en.Error)
	default:
		l.Status = core.StatusFailed
		if l.LastError == "" {
			l.LastError = fmt.Sprintf("Failed in %s.", src.Name())
		}
	}
	return l, true
}
