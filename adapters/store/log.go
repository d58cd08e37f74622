package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	mysqldriver "github.com/go-sql-driver/mysql"

	"github.com/mailsvc/mailsvc/core"
)

var _ core.LogStore = (*LogService)(nil)

// storedAttachment is an attachment as the message column keeps it. Its
// bytes are in the attachments table (Data null, Size set; see
// log_attachments.go), or, in rows written by the WordPress bridge, by
// imports or before schema 12, and for an empty attachment, in Data
// (base64 in JSON).
type storedAttachment struct {
	Filename    string `json:"filename"`
	ContentType string `json:"content_type"`
	Data        []byte `json:"data"`
	Size        int    `json:"size,omitempty"`
	Inline      bool   `json:"inline,omitempty"`
	ContentID   string `json:"content_id,omitempty"`
}

// storedMessage is the message column: everything but the subject and
// bodies, which have columns of their own for searching.
type storedMessage struct {
	From        core.Address       `json:"from"`
	To          []core.Address     `json:"to,omitempty"`
	Cc          []core.Address     `json:"cc,omitempty"`
	Bcc         []core.Address     `json:"bcc,omitempty"`
	ReplyTo     []core.Address     `json:"reply_to,omitempty"`
	Headers     []core.Header      `json:"headers,omitempty"`
	Attachments []storedAttachment `json:"attachments,omitempty"`
	RawHeader   string             `json:"raw_header,omitempty"`
}

// encodeMessage returns the message column of m, the attachments' bytes
// left to the attachments table (insertAttachments writes them).
func encodeMessage(m *core.Message) (string, error) {
	return encodeMessageColumn(m, false)
}

// encodeMessageInline returns the message column of m with the
// attachments' bytes inside it, as the WordPress bridge writes it.
func encodeMessageInline(m *core.Message) (string, error) {
	return encodeMessageColumn(m, true)
}

func encodeMessageColumn(m *core.Message, inline bool) (string, error) {
	sm := storedMessage{From: m.From, To: m.To, Cc: m.Cc, Bcc: m.Bcc, ReplyTo: m.ReplyTo, Headers: m.Headers, RawHeader: m.RawHeader}
	for _, a := range m.Attachments {
		sa := storedAttachment{Filename: a.Filename, ContentType: a.ContentType, Inline: a.Inline, ContentID: a.ContentID}
		switch {
		case len(a.Data) == 0:
			sa.Data = []byte{} // "": empty, nothing to read elsewhere
		case inline:
			sa.Data = a.Data
		default:
			sa.Size = len(a.Data)
		}
		sm.Attachments = append(sm.Attachments, sa)
	}
	b, err := json.Marshal(sm)
	if err != nil {
		return "", fmt.Errorf("encode message: %w", err)
	}
	return string(b), nil
}

// decodeMessage reads a message column. Attachments whose bytes are in
// the attachments table come with Data nil (see loadAttachments); js may
// be the driver's buffer, nothing of it is kept.
func decodeMessage(js []byte, subject, text, html string) (core.Message, error) {
	var sm storedMessage
	if err := json.Unmarshal(js, &sm); err != nil {
		return core.Message{}, fmt.Errorf("decode message: %w", err)
	}
	m := core.Message{
		From: sm.From, To: sm.To, Cc: sm.Cc, Bcc: sm.Bcc, ReplyTo: sm.ReplyTo,
		Headers: sm.Headers, Subject: subject, Text: text, HTML: html, RawHeader: sm.RawHeader,
	}
	for _, a := range sm.Attachments {
		m.Attachments = append(m.Attachments, core.Attachment{
			Filename: a.Filename, ContentType: a.ContentType, Data: a.Data, Inline: a.Inline, ContentID: a.ContentID,
		})
		if a.Data == nil {
			m.Attachments[len(m.Attachments)-1].Size = a.Size
		}
	}
	return m, nil
}

// recipientsText is the searchable recipients column.
func recipientsText(m *core.Message) string {
	parts := make([]string, 0, len(m.To)+len(m.Cc)+len(m.Bcc))
	for _, a := range m.Recipients() {
		parts = append(parts, a.String())
	}
	return strings.Join(parts, ", ")
}

// logColumns is the column list every log read selects, in scanLog order.
const logColumns = `id, status, connection_id, sent_connection_id, source, subject,
	text_body, html_body, message, attempts, phase_attempts, used_fallback, simulated,
	provider_message_id, last_error, next_attempt_at, lease_owner, lease_until,
	created_at, updated_at, delivered_at, body_mode, redacted_count, attachments_kept, recipient_outcomes, recipients_refused, resent_from, site_id`

type RowScanner interface{ Scan(dest ...any) error }

func scanLog(r RowScanner) (*core.Log, error) {
	var (
		l                          core.Log
		conn, sent                 sql.NullInt64
		subject, text, html        string
		js                         sql.RawBytes // decoded at once: no copy of a large column
		owner                      sql.NullString
		leaseUntil, deliveredAt    sql.NullTime
		usedFallback, simulated    bool
		nextAttempt, created, upd  time.Time
		providerID, lastErr, stats string
		attachmentsKept            bool
		recipients                 sql.NullString
		resentFrom                 sql.NullInt64
	)
	if err := r.Scan(&l.ID, &stats, &conn, &sent, &l.Source, &subject, &text, &html, &js,
		&l.Attempts, &l.PhaseAttempts, &usedFallback, &simulated, &providerID, &lastErr,
		&nextAttempt, &owner, &leaseUntil, &created, &upd, &deliveredAt,
		&l.BodyMode, &l.RedactedCount, &attachmentsKept, &recipients, &l.RecipientsRefused, &resentFrom, &l.SiteID); err != nil {
		return nil, fmt.Errorf("scan log: %w", err)
	}
	l.Status = stats
	if conn.Valid {
		l.ConnectionID = &conn.Int64
	}
	if sent.Valid {
		l.SentConnectionID = &sent.Int64
	}
	if resentFrom.Valid {
		l.ResentFrom = &resentFrom.Int64
	}
	msg, err := decodeMessage(js, subject, text, html)
	if err != nil {
		return nil, fmt.Errorf("log %d: %w", l.ID, err)
	}
	l.Message = msg
	if recipients.Valid && recipients.String != "" {
		var rs core.RecipientOutcomes
		if err := json.Unmarshal([]byte(recipients.String), &rs); err != nil {
			return nil, fmt.Errorf("log %d: recipient outcomes: %w", l.ID, err)
		}
		l.SetRecipients(rs)
	}
	l.UsedFallback, l.Simulated = usedFallback, simulated
	l.AttachmentsKept = attachmentsKept
	l.ProviderMessageID, l.LastError = providerID, lastErr
	l.NextAttemptAt, l.CreatedAt, l.UpdatedAt = nextAttempt.UTC(), created.UTC(), upd.UTC()
	l.LeaseOwner = owner.String
	if leaseUntil.Valid {
		t := leaseUntil.Time.UTC()
		l.LeaseUntil = &t
	}
	if deliveredAt.Valid {
		t := deliveredAt.Time.UTC()
		l.DeliveredAt = &t
	}
	return &l, nil
}

func nullInt(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func NullTime(p *time.Time) any {
	if p == nil {
		return nil
	}
	return p.UTC().Truncate(time.Microsecond)
}

// inList returns "?,?,…" for n values and the ids as arguments.
func inList(ids []int64) (string, []any) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return strings.TrimSuffix(strings.Repeat("?,", len(ids)), ","), args
}

// EnqueueLog implements core.LogStore.
func (db *LogService) EnqueueLog(ctx context.Context, l *core.Log) error {
	if err := checkEnqueueStatus(l); err != nil {
		return fmt.Errorf("enqueue log: %w", err)
	}
	if l.Status == "" {
		l.Status = core.StatusQueued
	}
	js, err := encodeMessage(&l.Message)
	if err != nil {
		return fmt.Errorf("enqueue log: %w", err)
	}
	t := now()
	if l.NextAttemptAt.IsZero() {
		l.NextAttemptAt = t
	}
	var owner any
	if l.Status == core.StatusSending {
		owner = l.LeaseOwner
	}
	var id int64
	if db.dialect == DialectSQLite && !separateAttachments(&l.Message) {
		// One INSERT, as before the search tables: the recipients rows
		// and the FTS5 entry follow in the claim's transaction (see
		// indexPending); until then searches read the row through the
		// pending index.
		id, err = db.insertLogRow(ctx, db.sqlDB, l, js, owner, t, false)
	} else {
		// The recipients rows, the subjects row and the attachments
		// go in the same transaction (on SQLite the search entries
		// follow in the claim's, as above).
		indexed := db.dialect != DialectSQLite
		err = retryDeadlock(func() error {
			return db.inTx(ctx, func(tx *sql.Tx) error {
				var err error
				if id, err = db.insertLogRow(ctx, tx, l, js, owner, t, indexed); err != nil {
					return err
				}
				if err := db.insertAttachments(ctx, tx, id, &l.Message); err != nil {
					return err
				}
				if !indexed {
					return nil
				}
				return db.insertSearchEntries(ctx, tx, id, &l.Message, t)
			})
		})
	}
	if err != nil {
		return fmt.Errorf("enqueue log: %w", err)
	}
	l.ID, l.CreatedAt, l.UpdatedAt = id, t, t
	l.Attempts, l.PhaseAttempts = 0, 0
	return nil
}

// execer is a *sql.DB or a *sql.Tx.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// insertLogRow inserts a new queued or sending log, marked as indexed
// for search or not, and returns its id.
func (db *handle) insertLogRow(ctx context.Context, q execer, l *core.Log, js string, owner any, t time.Time, indexed bool) (int64, error) {
	res, err := q.ExecContext(ctx, db.expand(`INSERT INTO {prefix}mailsvc_logs
		(status, connection_id, sent_connection_id, source, recipients, subject, text_body, html_body, message,
		 attempts, phase_attempts, used_fallback, simulated, provider_message_id, last_error,
		 next_attempt_at, lease_owner, lease_until, created_at, updated_at, recipients_indexed, resent_from, site_id)
		VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?, 0, 0, 0, 0, '', '', ?, ?, ?, ?, ?, ?, ?, ?)`),
		l.Status, nullInt(l.ConnectionID), l.Source, recipientsText(&l.Message), l.Message.Subject,
		l.Message.Text, l.Message.HTML, js, l.NextAttemptAt.UTC().Truncate(time.Microsecond),
		owner, NullTime(l.LeaseUntil), t, t, indexed, nullInt(l.ResentFrom), logSiteID(ctx, l))
	if err != nil {
		return 0, err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("read id: %w", err)
	}
	return id, nil
}

// inTx runs fn in one transaction, rolled back if fn fails. On SQLite the
// DSN's _txlock=immediate makes BeginTx take the write lock, so a
// transaction that reads first never fails on a lock upgrade.
func (db *handle) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return db.runTx(ctx, fn, false)
}

// runTx is inTx; with commitUnknown a failed COMMIT is wrapped with
// errCommitUnknown (inBatchTx).
func (db *handle) runTx(ctx context.Context, fn func(tx *sql.Tx) error, commitUnknown bool) error {
	var opts *sql.TxOptions
	if db.dialect == DialectMySQL {
		// READ COMMITTED takes no gap locks, so claims (FOR UPDATE SKIP
		// LOCKED), outcome writes and concurrent enqueues do not deadlock
		// on the claim index.
		opts = &sql.TxOptions{Isolation: sql.LevelReadCommitted}
	}
	tx, err := db.sqlDB.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		if commitUnknown {
			return fmt.Errorf("commit: %w: %w", errCommitUnknown, err)
		}
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

func queryLogs(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string, args ...any) ([]*core.Log, error) {
	var out []*core.Log
	err := EachRow(ctx, q, "query logs", query, args, func(r RowScanner) error {
		l, err := scanLog(r)
		if err != nil {
			return err
		}
		out = append(out, l)
		return nil
	})
	return out, err
}

// withExtra scans a row of the columns its reader expects followed by
// the extra columns, into extra. One withExtra serves every row of a
// result: the destinations' list is kept for the next.
type withExtra struct {
	r     RowScanner
	extra []any
	dest  []any
}

// Scan implements rowScanner.
func (w *withExtra) Scan(dest ...any) error {
	w.dest = append(append(w.dest[:0], dest...), w.extra...)
	return w.r.Scan(w.dest...)
}

// ExtendLeases implements core.LogStore.
func (db *LogService) ExtendLeases(ctx context.Context, owner string, ids []int64, lease time.Duration) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	in, args := inList(ids)
	res, err := db.sqlDB.ExecContext(ctx, db.expand(`UPDATE {prefix}mailsvc_logs SET lease_until = ?
		WHERE status = ? AND lease_owner = ? AND id IN (`+in+`)`),
		append([]any{now().Add(lease), core.StatusSending, owner}, args...)...)
	if err != nil {
		return 0, fmt.Errorf("extend leases: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// ReleaseExpiredLeases implements core.LogStore. The expired leases are
// found with a plain read of the sending rows (the claim index, status
// first: only what is in flight), then released by id, each only if its
// lease is still expired: the workers recording their outcomes hold
// locks on sending rows that a locking range scan would wait for.
func (db *LogService) ReleaseExpiredLeases(ctx context.Context) (int, error) {
	t := now()
	ids, err := column[int64](ctx, db.sqlDB, "release expired leases", db.expand(`SELECT id FROM {prefix}mailsvc_logs
		WHERE status = ? AND lease_until < ?`), []any{core.StatusSending, t})
	if err != nil {
		return 0, err
	}
	released := 0
	for part := range slices.Chunk(ids, idChunk) {
		in, args := inList(part)
		res, err := db.sqlDB.ExecContext(ctx, db.expand(`UPDATE {prefix}mailsvc_logs
			SET status = ?, lease_owner = NULL, lease_until = NULL, next_attempt_at = ?, updated_at = ?
			WHERE status = ? AND lease_until < ? AND id IN (`+in+`)`),
			append([]any{core.StatusQueued, t, t, core.StatusSending, t}, args...)...)
		if err != nil {
			return released, fmt.Errorf("release expired leases: %w", err)
		}
		n, _ := res.RowsAffected()
		released += int(n)
	}
	return released, nil
}

// updateOutcomes writes outs (logs held by the caller, each once) in one
// UPDATE: a column every outcome sets alike is set once, the others with a
// CASE on the id.
func (db *handle) updateOutcomes(ctx context.Context, tx *sql.Tx, t time.Time, outs []core.LogOutcome) error {
	cols := []struct {
		name string
		val  func(o *core.LogOutcome) any
	}{
		{"status", func(o *core.LogOutcome) any { return o.Status }},
		{"next_attempt_at", func(o *core.LogOutcome) any {
			if o.NextAttemptAt.IsZero() {
				return t
			}
			return o.NextAttemptAt.UTC().Truncate(time.Microsecond)
		}},
		{"attempts", func(o *core.LogOutcome) any { return int64(o.Attempts) }},
		{"phase_attempts", func(o *core.LogOutcome) any { return int64(o.PhaseAttempts) }},
		{"used_fallback", func(o *core.LogOutcome) any { return o.UsedFallback }},
		{"simulated", func(o *core.LogOutcome) any { return o.Simulated }},
		{"sent_connection_id", func(o *core.LogOutcome) any { return nullInt(o.SentConnectionID) }},
		{"provider_message_id", func(o *core.LogOutcome) any { return o.ProviderMessageID }},
		{"last_error", func(o *core.LogOutcome) any { return o.LastError }},
		{"delivered_at", func(o *core.LogOutcome) any {
			if o.Status == core.StatusDelivered {
				return t
			}
			return nil
		}},
		// A sending log's body has no mode yet: a final outcome records
		// its kept body's, any other leaves it empty (see log_body.go).
		{"body_mode", func(o *core.LogOutcome) any {
			if b := finalBody(o); b != nil {
				return b.Mode
			}
			return ""
		}},
		{"redacted_count", func(o *core.LogOutcome) any {
			if b := finalBody(o); b != nil {
				return int64(b.Redacted)
			}
			return int64(0)
		}},
	}
	var b strings.Builder
	b.WriteString(`UPDATE {prefix}mailsvc_logs SET `)
	args := make([]any, 0, 4*len(outs))
	for _, c := range cols {
		b.WriteString(c.name)
		b.WriteString(" = ")
		first := c.val(&outs[0])
		alike := true
		for i := 1; i < len(outs) && alike; i++ {
			alike = sameValue(first, c.val(&outs[i]))
		}
		if alike {
			b.WriteString("?, ")
			args = append(args, first)
			continue
		}
		b.WriteString("CASE id")
		for i := range outs {
			b.WriteString(" WHEN ? THEN ?")
			args = append(args, outs[i].LogID, c.val(&outs[i]))
		}
		b.WriteString(" END, ")
	}
	if db.dialect == DialectMySQL {
		writeReserveRelease(&b, &args, outs)
	}
	b.WriteString("lease_owner = NULL, lease_until = NULL, updated_at = ? WHERE id IN (")
	args = append(args, t)
	for i := range outs {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("?")
		args = append(args, outs[i].LogID)
	}
	b.WriteString(")")
	if _, err := tx.ExecContext(ctx, db.expand(b.String()), args...); err != nil {
		return fmt.Errorf("update logs with their outcomes: %w", err)
	}
	return nil
}

// sameValue reports whether two column values of updateOutcomes are
// equal.
func sameValue(a, b any) bool {
	if ta, ok := a.(time.Time); ok {
		tb, ok := b.(time.Time)
		return ok && ta.Equal(tb)
	}
	return a == b
}

// insertAttempts appends attempts with multi-row INSERTs.
func (db *handle) insertAttempts(ctx context.Context, tx *sql.Tx, as []core.Attempt) error {
	const chunk = 100
	for len(as) > 0 {
		n := min(len(as), chunk)
		part := as[:n]
		as = as[n:]
		var b strings.Builder
		b.WriteString(`INSERT INTO {prefix}mailsvc_log_attempts
			(log_id, connection_id, attempted_at, outcome, response, error, provider_message_id, duration_ms) VALUES `)
		args := make([]any, 0, 8*n)
		for i, a := range part {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("(?,?,?,?,?,?,?,?)")
			at := a.At
			if at.IsZero() {
				at = now()
			}
			args = append(args, a.LogID, a.ConnectionID, at.UTC().Truncate(time.Microsecond), a.Outcome,
				a.Response, a.Error, a.ProviderMessageID, a.DurationMS)
		}
		if _, err := tx.ExecContext(ctx, db.expand(b.String()), args...); err != nil {
			return fmt.Errorf("insert attempts: %w", err)
		}
	}
	return nil
}

// FindLogByID implements core.LogStore. Under a site scope
// (core.WithSiteScope) another site's log is not found.
func (db *LogService) FindLogByID(ctx context.Context, id int64) (*core.Log, error) {
	scope, scopeArgs := SiteCond(ctx, "site_id")
	logs, err := queryLogs(ctx, db.sqlDB, db.expand(`SELECT `+logColumns+` FROM {prefix}mailsvc_logs WHERE id = ?`+scope), append([]any{id}, scopeArgs...)...)
	if err != nil {
		return nil, fmt.Errorf("find log %d: %w", id, err)
	}
	if len(logs) == 0 {
		return nil, core.Errorf(core.ENOTFOUND, "Log %d not found.", id)
	}
	l := logs[0]
	if err := db.loadAttachments(ctx, db.sqlDB, logs); err != nil {
		return nil, fmt.Errorf("find log %d: %w", id, err)
	}
	l.History = []core.Attempt{}
	err = EachRow(ctx, db.sqlDB, fmt.Sprintf("find log %d attempts", id), db.expand(`SELECT id, log_id, connection_id, attempted_at, outcome,
		response, error, provider_message_id, duration_ms FROM {prefix}mailsvc_log_attempts
		WHERE log_id = ? ORDER BY id`), []any{id}, func(r RowScanner) error {
		var a core.Attempt
		if err := r.Scan(&a.ID, &a.LogID, &a.ConnectionID, &a.At, &a.Outcome, &a.Response,
			&a.Error, &a.ProviderMessageID, &a.DurationMS); err != nil {
			return fmt.Errorf("scan: %w", err)
		}
		a.At = a.At.UTC()
		l.History = append(l.History, a)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// QueueStats implements core.LogStore.
func (db *LogService) QueueStats(ctx context.Context) (core.QueueStats, error) {
	var st core.QueueStats
	scope, scopeArgs := SiteCond(ctx, "site_id")
	if scope != "" {
		scope = " WHERE 1 = 1" + scope
	}
	err := EachRow(ctx, db.sqlDB, "queue stats", db.expand(`SELECT status, COUNT(*) FROM {prefix}mailsvc_logs`+scope+` GROUP BY status`), scopeArgs, func(r RowScanner) error {
		var status string
		var n int
		if err := r.Scan(&status, &n); err != nil {
			return fmt.Errorf("scan: %w", err)
		}
		switch status {
		case core.StatusQueued:
			st.Queued = n
		case core.StatusSending:
			st.Sending = n
		case core.StatusFailed:
			st.Failed = n
		case core.StatusDelivered:
			st.Delivered = n
		}
		return nil
	})
	if err != nil {
		return st, err
	}
	return st, nil
}

// DeleteLogs implements core.LogStore.
func (db *LogService) DeleteLogs(ctx context.Context, ids []int64) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	in, args := inList(ids)
	scope, scopeArgs := SiteCond(ctx, "site_id")
	res, err := db.sqlDB.ExecContext(ctx, db.expand(`DELETE FROM {prefix}mailsvc_logs WHERE id IN (`+in+`)`+scope), append(args, scopeArgs...)...)
	if err != nil {
		return 0, fmt.Errorf("delete logs: %w", err)
	}
	n, _ := res.RowsAffected()
	if n > 0 {
		db.requestAddressSweep(ctx)
	}
	return int(n), nil
}

// ResendLogs implements core.LogStore.
func (db *LogService) ResendLogs(ctx context.Context, ids []int64) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	in, args := inList(ids)
	scope, scopeArgs := SiteCond(ctx, "site_id")
	t := now()
	res, err := db.sqlDB.ExecContext(ctx, db.expand(`UPDATE {prefix}mailsvc_logs SET
		status = ?, attempts = 0, phase_attempts = 0, used_fallback = 0, simulated = 0,
		provider_message_id = '', last_error = '', next_attempt_at = ?, lease_owner = NULL,
		lease_until = NULL, delivered_at = NULL, updated_at = ?, body_mode = '', recipient_outcomes = NULL, recipients_refused = 0,
		capture_released = 0, flood_released = 0, resends = resends + 1
		WHERE status IN (?, ?) AND body_mode <> ? AND redacted_count = 0 AND attachments_kept = 1
		AND id IN (`+in+`)`+scope),
		append(append([]any{core.StatusQueued, t, t, core.StatusDelivered, core.StatusFailed, core.LogBodyNone}, args...), scopeArgs...)...)
	if err != nil {
		return 0, fmt.Errorf("resend logs: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// PurgeLogs implements core.LogStore. It deletes one final status at a
// time, each batch picked oldest first through the (status, created_at)
// index, so a batch reads only the rows it deletes. Each DELETE is its own
// short transaction; its recipients rows and attempts go with it (ON
// DELETE CASCADE), and queued or sending rows — the ones a claim locks —
// are never read or locked. The outcome roll-ups are left as they are.
func (db *LogService) PurgeLogs(ctx context.Context, before time.Time, batch int) (int, error) {
	if batch <= 0 {
		batch = 500
	}
	total := 0
	for _, status := range []string{core.StatusDelivered, core.StatusFailed, core.StatusCaptured} {
		for {
			n, more, err := db.purgeBatch(ctx, status, before, batch)
			total += n
			if err != nil {
				if total > 0 {
					db.requestAddressSweep(ctx)
				}
				return total, err
			}
			if !more {
				break
			}
		}
	}
	if total > 0 {
		// Addresses only the purged logs named leave the search
		// dictionary in the background.
		db.requestAddressSweep(ctx)
	}
	return total, nil
}

// purgeBatch deletes up to batch logs of status created before before and
// reports whether there may be more.
func (db *handle) purgeBatch(ctx context.Context, status string, before time.Time, batch int) (int, bool, error) {
	ids, err := column[int64](ctx, db.sqlDB, "purge logs: select", db.expand(`SELECT id FROM {prefix}mailsvc_logs
		WHERE status = ? AND created_at < ? ORDER BY created_at LIMIT ?`),
		[]any{status, before.UTC().Truncate(time.Microsecond), batch})
	if err != nil {
		return 0, false, err
	}
	if len(ids) == 0 {
		return 0, false, nil
	}
	in, args := inList(ids)
	// Re-check the status: a log resent meanwhile is no longer purged.
	res, err := db.sqlDB.ExecContext(ctx, db.expand(`DELETE FROM {prefix}mailsvc_logs
		WHERE status = ? AND id IN (`+in+`)`),
		append([]any{status}, args...)...)
	if err != nil {
		return 0, false, fmt.Errorf("purge logs: delete: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), len(ids) == batch, nil
}

// OldestQueuedAt implements core.LogStore. The status filter uses the
// claim index (status, next_attempt_at); only queued rows are read.
func (db *LogService) OldestQueuedAt(ctx context.Context) (*time.Time, error) {
	// ORDER BY rather than MIN(): SQLite types a bare column by its
	// declaration (DATETIME, read as a time) but not an aggregate.
	var t time.Time
	err := db.sqlDB.QueryRowContext(ctx, db.expand(`SELECT created_at FROM {prefix}mailsvc_logs
		WHERE status = ? ORDER BY created_at LIMIT 1`), core.StatusQueued).Scan(&t)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("oldest queued log: %w", err)
	}
	t = t.UTC()
	return &t, nil
}

// AcquireLease takes or renews the named lease for owner until now+ttl.
// It returns false while another owner holds an unexpired lease. Used to
// run scheduled jobs on one replica at a time.
func (db *LeaseService) AcquireLease(ctx context.Context, name, owner string, ttl time.Duration) (bool, error) {
	t := now()
	res, err := db.sqlDB.ExecContext(ctx, db.expand(`UPDATE {prefix}mailsvc_leases SET owner = ?, lease_until = ?
		WHERE name = ? AND (owner = ? OR lease_until < ?)`), owner, t.Add(ttl), name, owner, t)
	if err != nil {
		return false, fmt.Errorf("acquire lease %s: %w", name, err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return true, nil
	}
	ins := `INSERT IGNORE INTO {prefix}mailsvc_leases (name, owner, lease_until) VALUES (?, ?, ?)`
	if db.dialect == DialectSQLite {
		ins = `INSERT OR IGNORE INTO {prefix}mailsvc_leases (name, owner, lease_until) VALUES (?, ?, ?)`
	}
	res, err = db.sqlDB.ExecContext(ctx, db.expand(ins), name, owner, t.Add(ttl))
	if err != nil {
		return false, fmt.Errorf("acquire lease %s: %w", name, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// retryDeadlock runs fn again, up to three times, when MySQL rolled its
// statement back as a deadlock victim or on a lock wait timeout: the
// statement had no effect, so running it again is safe.
func retryDeadlock(fn func() error) error {
	var err error
	for i := range 4 {
		if err = fn(); err == nil {
			return nil
		}
		var me *mysqldriver.MySQLError
		if !errors.As(err, &me) || (me.Number != 1213 && me.Number != 1205) {
			return err
		}
		time.Sleep(time.Duration(i+1) * 5 * time.Millisecond)
	}
	return err
}
