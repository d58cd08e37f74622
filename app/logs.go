package app

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/app/logbody"
	"github.com/mailsvc/mailsvc/core"
)

// Bounds of the log routes' inputs.
const (
	MaxBulkIDs      = 1000
	maxSearchLength = 200
)

// LogRequeuer puts delivered or failed logs back in the queue and wakes
// the workers (delivery.Service.Resend).
type LogRequeuer interface {
	Resend(ctx context.Context, ids []int64) (int, error)
}

// Logs is the email log: listing, reading, resending and deleting logs.
type Logs struct {
	Store core.LogStore
	// Requeue resends through the delivery engine so workers wake at once;
	// nil resends through Store and workers find the logs when they poll.
	Requeue LogRequeuer
	// Enqueuer queues the new log of a resend to other recipients and
	// wakes the workers; nil inserts it through Store.
	Enqueuer LogEnqueuer
	// Settings gives the free settings: a log whose body has no log_body
	// mode applied yet (queued, sending, or stored before the modes) is
	// shown as its mode will keep it. Nil shows it as stored.
	Settings SettingsReader
	// Redaction gives the redactor of the redacted mode; nil applies the
	// built-in rules only.
	Redaction *logbody.Redactors
	// Use, on a multisite network, refuses to resend one log pinned to a
	// connection the log's site may not use (a test email sent through
	// another site's own connection before the rule), answered as a
	// connection that does not exist. Nil (a single site) checks nothing.
	Use core.ConnectionUse
	// Held releases and discards the messages the flood guard held
	// (POST /logs/held/release and /logs/held/discard); nil answers them
	// not found. HeldWake, when set, is called after a release (the
	// delivery service's Wake), so the released messages go at once.
	Held     HeldStore
	HeldWake func()
}

// AttachmentInfo describes an attachment without its bytes.
type AttachmentInfo struct {
	Filename    string `json:"filename"`
	ContentType string `json:"content_type"`
	Size        int    `json:"size"`
	Inline      bool   `json:"inline,omitempty"`
	ContentID   string `json:"content_id,omitempty"`
	// Preview is an inline image as a data: URI, for the log's HTML
	// preview to show in place of its cid: references: only for an inline
	// PNG, JPEG, GIF or WebP image whose bytes the log kept, at most
	// MaxInlinePreview bytes.
	Preview string `json:"preview,omitempty"`
}

// MaxInlinePreview bounds the bytes of one inline image a log's detail
// carries as a preview.
const MaxInlinePreview = 1 << 20

// previewTypes are the inline image types a log's detail previews:
// raster images, which an <img> shows and which run nothing.
var previewTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// inlinePreview returns a's preview (see AttachmentInfo.Preview), or "".
func inlinePreview(a core.Attachment) string {
	ct := strings.ToLower(strings.TrimSpace(a.ContentType))
	if !a.Inline || len(a.Data) == 0 || len(a.Data) > MaxInlinePreview || !previewTypes[ct] {
		return ""
	}
	return "data:" + ct + ";base64," + base64.StdEncoding.EncodeToString(a.Data)
}

// LogDetail is one log as GET /logs/{id} shows it: the log with its
// message (body and headers), its attempts history, and its attachments'
// names and sizes.
type LogDetail struct {
	*core.Log
	Attachments []AttachmentInfo `json:"attachments"`
}

// List returns one page of logs matching f, newest first, without their
// bodies, and the total count. An unknown status is a validation error.
func (s *Logs) List(ctx context.Context, f core.LogFilter) ([]*core.Log, int, error) {
	return s.list(ctx, f, map[string]string{})
}

// list validates f's status and search into fields, fails with every
// field in error, and reads the page.
func (s *Logs) list(ctx context.Context, f core.LogFilter, fields map[string]string) ([]*core.Log, int, error) {
	if err := s.checkFilter(f, fields); err != nil {
		return nil, 0, err
	}
	logs, total, err := s.Store.FindLogs(ctx, f)
	if err != nil {
		return nil, 0, fmt.Errorf("list logs: %w", err)
	}
	for _, l := range logs {
		l.Message.Text, l.Message.HTML = "", ""
		l.History = nil
		l.Recipients = nil // partial and recipients_refused stay
	}
	return logs, total, nil
}

// checkFilter validates f's status and search into fields and fails
// with every field in error.
func (s *Logs) checkFilter(f core.LogFilter, fields map[string]string) error {
	if _, given := fields["status"]; !given && f.Status != "" && !validStatus(f.Status) {
		fields["status"] = "Must be one of: " + strings.Join(core.LogStatuses, ", ") + "."
	}
	if len(f.Search) > maxSearchLength {
		fields["search"] = fmt.Sprintf("Must be at most %d characters.", maxSearchLength)
	}
	return core.Invalid(fields)
}

// LogCountCap is how many matching logs a list counts at most: beyond
// it the total says "at least this many" (LogPage.Capped), so a list over
// millions of rows never counts them all.
const LogCountCap = 10000

// LogSearchCountCap is LogCountCap for a search other than by a whole
// address (subject words, a recipient's domain, the start of an address
// or a part of it): a common word or a broad domain is counted by
// checking the newest logs one by one, so its count stops sooner.
const LogSearchCountCap = 200

// SearchProgress is the part of a store that says whether its search by
// address part is still being filled (logs from before its index, or not
// yet indexed); a store without it is never partial.
type SearchProgress interface {
	SearchIndexPartial(ctx context.Context) (bool, error)
}

// LogQuery is a log list request as the API takes it: DateFrom and DateTo
// are RFC 3339 times or YYYY-MM-DD dates (UTC days), both inclusive.
type LogQuery struct {
	Status   string
	Search   string
	DateFrom string
	DateTo   string
	Offset   int
	Limit    int
}

// LogPage is one page of a log list.
type LogPage struct {
	Logs []*core.Log
	// Total counts the matching logs, exactly when Capped is false. When
	// Capped, more logs match than Total (which is LogCountCap, or the end
	// of the requested page when that is further) and the pages after
	// Total can still be read.
	Total  int
	Capped bool
	// Partial says the search's index is still being filled: logs that
	// match may be missing from the list (X-Mailsvc-Search-Partial).
	Partial bool
}

// ListPage validates q and returns one page of logs, newest first,
// without their bodies, and the (capped) total. An unknown status, a
// search over 200 characters, a date that does not parse and a range that
// ends before it starts are validation errors.
func (s *Logs) ListPage(ctx context.Context, q LogQuery) (*LogPage, error) {
	f, fields := logFilter(q)
	countCap := LogCountCap
	search := core.ParseLogSearch(q.Search)
	byPart := search.ByAddressPart()
	if byPart || search.Words != "" {
		countCap = LogSearchCountCap
	}
	f.CountUpTo = max(countCap, max(q.Offset, 0)+max(q.Limit, 0))
	logs, total, err := s.list(ctx, f, fields)
	if err != nil {
		return nil, err
	}
	p := &LogPage{Logs: logs, Total: total}
	if total > f.CountUpTo {
		p.Total, p.Capped = f.CountUpTo, true
	}
	if sp, ok := s.Store.(SearchProgress); ok && byPart {
		if p.Partial, err = sp.SearchIndexPartial(ctx); err != nil {
			return nil, fmt.Errorf("list logs: %w", err)
		}
	}
	return p, nil
}

// logFilter returns q as a filter, with its dates' errors by field.
func logFilter(q LogQuery) (core.LogFilter, map[string]string) {
	f := core.LogFilter{Status: q.Status, Search: q.Search, Offset: q.Offset, Limit: q.Limit}
	fields := map[string]string{}
	var ok bool
	if f.CreatedFrom, ok = parseLogTime(q.DateFrom, false); !ok {
		fields["date_from"] = badLogTime
	}
	if f.CreatedBefore, ok = parseLogTime(q.DateTo, true); !ok {
		fields["date_to"] = badLogTime
	}
	if len(fields) == 0 && !f.CreatedFrom.IsZero() && !f.CreatedBefore.IsZero() && !f.CreatedBefore.After(f.CreatedFrom) {
		fields["date_to"] = "Must not be before date_from."
	}
	return f, fields
}

// parseLogTime parses a date_from (end false) or date_to (end true)
// value into the bound of a [from, before) range: an RFC 3339 time is
// that instant (date_to includes it), a YYYY-MM-DD date is its UTC day
// (date_to includes the whole day). "" is the zero time (no bound); ok
// is false when v parses as neither.
func parseLogTime(v string, end bool) (t time.Time, ok bool) {
	if v == "" {
		return time.Time{}, true
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		if end {
			return t.UTC().Truncate(time.Microsecond).Add(time.Microsecond), true
		}
		return t.UTC(), true
	}
	if d, err := time.Parse(time.DateOnly, v); err == nil {
		if end {
			return d.AddDate(0, 0, 1), true
		}
		return d, true
	}
	return time.Time{}, false
}

// badLogTime is the validation message of a date that does not parse.
const badLogTime = "Must be an RFC 3339 time (2026-01-31T09:30:00Z) or a date (2026-01-31)."

func validStatus(s string) bool {
	for _, st := range core.LogStatuses {
		if s == st {
			return true
		}
	}
	return false
}

// Get returns one log with its body, headers, attempts and attachment
// names and sizes (and its inline images' previews); ENOTFOUND when it
// does not exist.
func (s *Logs) Get(ctx context.Context, id int64) (*LogDetail, error) {
	l, err := s.Store.FindLogByID(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("get log %d: %w", id, err)
	}
	if l.BodyMode == "" && s.Settings != nil {
		st, err := s.Settings.Get(ctx)
		if err != nil {
			return nil, fmt.Errorf("get log %d: %w", id, err)
		}
		logbody.PolicyOf(st).View(l, s.Redaction.Redactor(ctx))
	}
	if withoutOneTime(ctx) {
		s.hideOneTime(ctx, l)
	}
	d := &LogDetail{Log: l, Attachments: make([]AttachmentInfo, 0, len(l.Message.Attachments))}
	for _, a := range l.Message.Attachments {
		d.Attachments = append(d.Attachments, AttachmentInfo{
			Filename: a.Filename, ContentType: a.ContentType, Size: max(len(a.Data), a.Size), Inline: a.Inline, ContentID: a.ContentID,
			Preview: inlinePreview(a),
		})
	}
	return d, nil
}

// Stats counts logs by status.
func (s *Logs) Stats(ctx context.Context) (core.QueueStats, error) {
	st, err := s.Store.QueueStats(ctx)
	if err != nil {
		return core.QueueStats{}, fmt.Errorf("queue stats: %w", err)
	}
	return st, nil
}

// checkIDs validates the ids of a bulk request.
// CheckIDs validates the ids of a bulk request: 1 to MaxBulkIDs
// positive ids, else a validation error on the field ids.
func CheckIDs(ids []int64) error { return checkIDs(ids) }

func checkIDs(ids []int64) error {
	switch {
	case len(ids) == 0:
		return core.InvalidField("ids", "At least one id is required.")
	case len(ids) > MaxBulkIDs:
		return core.InvalidField("ids", fmt.Sprintf("At most %d ids at a time.", MaxBulkIDs))
	}
	for _, id := range ids {
		if id < 1 {
			return core.InvalidField("ids", "Every id must be a positive whole number.")
		}
	}
	return nil
}

// Resend puts the delivered or failed logs among ids back in the queue
// and returns how many were requeued (queued, sending and unknown ids are
// skipped, and so are the logs that no longer hold the whole message:
// see core.Log.Resendable).
func (s *Logs) Resend(ctx context.Context, ids []int64) (int, error) {
	if err := checkIDs(ids); err != nil {
		return 0, err
	}
	ids, err := s.withoutOneTimeIDs(ctx, ids)
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	return s.resend(ctx, ids)
}

func (s *Logs) resend(ctx context.Context, ids []int64) (int, error) {
	var n int
	var err error
	if s.Requeue != nil {
		n, err = s.Requeue.Resend(ctx, ids)
	} else {
		n, err = s.Store.ResendLogs(ctx, ids)
	}
	if err != nil {
		return 0, fmt.Errorf("resend logs: %w", err)
	}
	return n, nil
}

// ResendOne puts one delivered or failed log back in the queue. An unknown
// id is ENOTFOUND; a log still queued or sending is a validation error; a
// log that no longer holds the whole message (a redacted one-time link,
// no body, attachments not kept) is ECONFLICT, with the reason.
func (s *Logs) ResendOne(ctx context.Context, id int64) error {
	l, err := s.Store.FindLogByID(ctx, id)
	if err != nil {
		return fmt.Errorf("resend log %d: %w", id, err)
	}
	if l.Status == core.StatusCaptured {
		return core.InvalidField("status", fmt.Sprintf("Log %d is captured (held by the staging guard); release it instead (POST /capture/release).", id))
	}
	if l.Status == core.StatusHeld {
		return core.InvalidField("status", fmt.Sprintf("Log %d is held by the flood guard; release it instead (POST /logs/held/release).", id))
	}
	if l.Status != core.StatusDelivered && l.Status != core.StatusFailed {
		return core.InvalidField("status", fmt.Sprintf("Log %d is %s; only delivered or failed messages can be resent.", id, l.Status))
	}
	if !l.Resendable() {
		return core.Errorf(core.ECONFLICT, "Log %d cannot be resent: %s.", id, l.NotResendableReason())
	}
	if err := s.checkPinned(ctx, l); err != nil {
		return err
	}
	if s.holdsOneTime(ctx, l) {
		return errOneTimeResend(id)
	}
	n, err := s.resend(ctx, []int64{id})
	if err != nil {
		return err
	}
	if n == 0 {
		return core.InvalidField("status", fmt.Sprintf("Log %d changed state meanwhile and was not resent.", id))
	}
	return nil
}

// checkPinned refuses a log pinned to a connection its site may not use
// (Use) with the text of a connection that does not exist.
func (s *Logs) checkPinned(ctx context.Context, l *core.Log) error {
	if l.ConnectionID == nil {
		return nil
	}
	usable, err := core.CanUseConnection(ctx, s.Use, l.SiteID, *l.ConnectionID)
	if err != nil {
		return fmt.Errorf("resend log %d: %w", l.ID, err)
	}
	if !usable {
		return core.InvalidField("connection_id", core.NoSuchConnection(*l.ConnectionID))
	}
	return nil
}

// Delete removes one log and its history; ENOTFOUND when it does not exist.
func (s *Logs) Delete(ctx context.Context, id int64) error {
	n, err := s.Store.DeleteLogs(ctx, []int64{id})
	if err != nil {
		return fmt.Errorf("delete log %d: %w", id, err)
	}
	if n == 0 {
		return core.Errorf(core.ENOTFOUND, "Log %d does not exist.", id)
	}
	return nil
}

// DeleteMany removes the logs with the given ids and returns how many
// existed.
func (s *Logs) DeleteMany(ctx context.Context, ids []int64) (int, error) {
	if err := checkIDs(ids); err != nil {
		return 0, err
	}
	n, err := s.Store.DeleteLogs(ctx, ids)
	if err != nil {
		return 0, fmt.Errorf("delete logs: %w", err)
	}
	return n, nil
}
