package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	mysqldriver "github.com/go-sql-driver/mysql"

	"github.com/mailsvc/mailsvc/core"
)

var _ core.LogStore = (*DB)(nil)

// storedAttachment is an attachment as the message column keeps it, with
// its bytes (base64 in JSON).
type storedAttachment struct {
	Filename    string `json:"filename"`
	ContentType string `json:"content_type"`
	Data        []byte `json:"data"`
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
}

func encodeMessage(m *core.Message) (string, error) {
	sm := storedMessage{From: m.From, To: m.To, Cc: m.Cc, Bcc: m.Bcc, ReplyTo: m.ReplyTo, Headers: m.Headers}
	for _, a := range m.Attachments {
		sm.Attachments = append(sm.Attachments, storedAttachment(a))
	}
	b, err := json.Marshal(sm)
	if err != nil {
		return "", fmt.Errorf("encode message: %w", err)
	}
	return string(b), nil
}

func decodeMessage(js, subject, text, html string) (core.Message, error) {
	var sm storedMessage
	if err := json.Unmarshal([]byte(js), &sm); err != nil {
		return core.Message{}, fmt.Errorf("decode message: %w", err)
	}
	m := core.Message{
		From: sm.From, To: sm.To, Cc: sm.Cc, Bcc: sm.Bcc, ReplyTo: sm.ReplyTo,
		Headers: sm.Headers, Subject: subject, Text: text, HTML: html,
	}
	for _, a := range sm.Attachments {
		m.Attachments = append(m.Attachments, core.Attachment(a))
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
	created_at, updated_at, delivered_at`

type rowScanner interface{ Scan(dest ...any) error }

func scanLog(r rowScanner) (*core.Log, error) {
	var (
		l                          core.Log
		conn, sent                 sql.NullInt64
		subject, text, html, js    string
		owner                      sql.NullString
		leaseUntil, deliveredAt    sql.NullTime
		usedFallback, simulated    bool
		nextAttempt, created, upd  time.Time
		providerID, lastErr, stats string
	)
	if err := r.Scan(&l.ID, &stats, &conn, &sent, &l.Source, &subject, &text, &html, &js,
		&l.Attempts, &l.PhaseAttempts, &usedFallback, &simulated, &providerID, &lastErr,
		&nextAttempt, &owner, &leaseUntil, &created, &upd, &deliveredAt); err != nil {
		return nil, fmt.Errorf("scan log: %w", err)
	}
	l.Status = stats
	if conn.Valid {
		l.ConnectionID = &conn.Int64
	}
	if sent.Valid {
		l.SentConnectionID = &sent.Int64
	}
	msg, err := decodeMessage(js, subject, text, html)
	if err != nil {
		return nil, fmt.Errorf("log %d: %w", l.ID, err)
	}
	l.Message = msg
	l.UsedFallback, l.Simulated = usedFallback, simulated
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

func nullTime(p *time.Time) any {
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
func (db *DB) EnqueueLog(ctx context.Context, l *core.Log) error {
	switch l.Status {
	case "":
		l.Status = core.StatusQueued
	case core.StatusQueued:
	case core.StatusSending:
		if l.LeaseOwner == "" || l.LeaseUntil == nil {
			return errors.New("enqueue log: a sending log needs a lease owner and expiry")
		}
	default:
		return fmt.Errorf("enqueue log: cannot insert a log as %q", l.Status)
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
	var res sql.Result
	err = retryDeadlock(func() error {
		var err error
		res, err = db.sqlDB.ExecContext(ctx, db.expand(`INSERT INTO {prefix}mailsvc_logs
		(status, connection_id, sent_connection_id, source, recipients, subject, text_body, html_body, message,
		 attempts, phase_attempts, used_fallback, simulated, provider_message_id, last_error,
		 next_attempt_at, lease_owner, lease_until, created_at, updated_at)
		VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?, 0, 0, 0, 0, '', '', ?, ?, ?, ?, ?)`),
			l.Status, nullInt(l.ConnectionID), l.Source, recipientsText(&l.Message), l.Message.Subject,
			l.Message.Text, l.Message.HTML, js, l.NextAttemptAt.UTC().Truncate(time.Microsecond),
			owner, nullTime(l.LeaseUntil), t, t)
		return err
	})
	if err != nil {
		return fmt.Errorf("enqueue log: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return fmt.Errorf("enqueue log: read id: %w", err)
	}
	l.ID, l.CreatedAt, l.UpdatedAt = id, t, t
	l.Attempts, l.PhaseAttempts = 0, 0
	return nil
}

// inTx runs fn in one transaction, rolled back if fn fails. On SQLite the
// DSN's _txlock=immediate makes BeginTx take the write lock, so a
// transaction that reads first never fails on a lock upgrade.
func (db *DB) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
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
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

func queryLogs(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string, args ...any) ([]*core.Log, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*core.Log
	for rows.Next() {
		l, err := scanLog(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// ClaimLogs implements core.LogStore. On MySQL the due rows are locked
// with SELECT … FOR UPDATE SKIP LOCKED, so concurrent claimers (other
// workers, other processes) take disjoint rows without waiting; on
// SQLite the transaction holds the database's write lock.
func (db *DB) ClaimLogs(ctx context.Context, owner string, limit int, lease time.Duration) ([]*core.Log, error) {
	if limit <= 0 {
		return nil, nil
	}
	var out []*core.Log
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		t := now()
		sel := `SELECT id FROM {prefix}mailsvc_logs WHERE status = ? AND next_attempt_at <= ?
			ORDER BY next_attempt_at, id LIMIT ?`
		if db.dialect == DialectMySQL {
			sel += " FOR UPDATE SKIP LOCKED"
		}
		rows, err := tx.QueryContext(ctx, db.expand(sel), core.StatusQueued, t, limit)
		if err != nil {
			return fmt.Errorf("select due logs: %w", err)
		}
		var ids []int64
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return fmt.Errorf("scan due log: %w", err)
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("select due logs: %w", err)
		}
		if len(ids) == 0 {
			return nil
		}
		in, args := inList(ids)
		upd := append([]any{core.StatusSending, owner, t.Add(lease), t}, args...)
		if _, err := tx.ExecContext(ctx, db.expand(`UPDATE {prefix}mailsvc_logs
			SET status = ?, lease_owner = ?, lease_until = ?, updated_at = ? WHERE id IN (`+in+`)`), upd...); err != nil {
			return fmt.Errorf("lease due logs: %w", err)
		}
		out, err = queryLogs(ctx, tx, db.expand(`SELECT `+logColumns+` FROM {prefix}mailsvc_logs
			WHERE id IN (`+in+`) ORDER BY next_attempt_at, id`), args...)
		if err != nil {
			return fmt.Errorf("read claimed logs: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim logs: %w", err)
	}
	return out, nil
}

// ExtendLeases implements core.LogStore.
func (db *DB) ExtendLeases(ctx context.Context, owner string, ids []int64, lease time.Duration) (int, error) {
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

// ReleaseExpiredLeases implements core.LogStore.
func (db *DB) ReleaseExpiredLeases(ctx context.Context) (int, error) {
	t := now()
	res, err := db.sqlDB.ExecContext(ctx, db.expand(`UPDATE {prefix}mailsvc_logs
		SET status = ?, lease_owner = NULL, lease_until = NULL, next_attempt_at = ?, updated_at = ?
		WHERE status = ? AND lease_until < ?`),
		core.StatusQueued, t, t, core.StatusSending, t)
	if err != nil {
		return 0, fmt.Errorf("release expired leases: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// RecordOutcomes implements core.LogStore.
func (db *DB) RecordOutcomes(ctx context.Context, owner string, outs []core.LogOutcome) (int, error) {
	if len(outs) == 0 {
		return 0, nil
	}
	applied := 0
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		applied = 0
		t := now()
		var history []core.Attempt
		upd, err := tx.PrepareContext(ctx, db.expand(`UPDATE {prefix}mailsvc_logs SET
			status = ?, next_attempt_at = ?, attempts = ?, phase_attempts = ?, used_fallback = ?,
			simulated = ?, sent_connection_id = ?, provider_message_id = ?, last_error = ?,
			lease_owner = NULL, lease_until = NULL, updated_at = ?, delivered_at = ?
			WHERE id = ? AND status = ? AND lease_owner = ?`))
		if err != nil {
			return fmt.Errorf("prepare outcome update: %w", err)
		}
		defer upd.Close()
		for _, o := range outs {
			var res sql.Result
			if o.Delete {
				res, err = tx.ExecContext(ctx, db.expand(`DELETE FROM {prefix}mailsvc_logs
					WHERE id = ? AND status = ? AND lease_owner = ?`), o.LogID, core.StatusSending, owner)
			} else {
				next := o.NextAttemptAt
				if next.IsZero() {
					next = t
				}
				var delivered any
				if o.Status == core.StatusDelivered {
					delivered = t
				}
				res, err = upd.ExecContext(ctx, o.Status, next.UTC().Truncate(time.Microsecond), o.Attempts,
					o.PhaseAttempts, o.UsedFallback, o.Simulated, nullInt(o.SentConnectionID),
					o.ProviderMessageID, o.LastError, t, delivered, o.LogID, core.StatusSending, owner)
			}
			if err != nil {
				return fmt.Errorf("log %d: %w", o.LogID, err)
			}
			if n, _ := res.RowsAffected(); n == 1 {
				applied++
				if !o.Delete {
					history = append(history, o.History...)
				}
			}
		}
		return db.insertAttempts(ctx, tx, history)
	})
	if err != nil {
		return 0, fmt.Errorf("record outcomes: %w", err)
	}
	return applied, nil
}

// insertAttempts appends attempts with multi-row INSERTs.
func (db *DB) insertAttempts(ctx context.Context, tx *sql.Tx, as []core.Attempt) error {
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

// FindLogByID implements core.LogStore.
func (db *DB) FindLogByID(ctx context.Context, id int64) (*core.Log, error) {
	logs, err := queryLogs(ctx, db.sqlDB, db.expand(`SELECT `+logColumns+` FROM {prefix}mailsvc_logs WHERE id = ?`), id)
	if err != nil {
		return nil, fmt.Errorf("find log %d: %w", id, err)
	}
	if len(logs) == 0 {
		return nil, core.Errorf(core.ENOTFOUND, "Log %d not found.", id)
	}
	l := logs[0]
	rows, err := db.sqlDB.QueryContext(ctx, db.expand(`SELECT id, log_id, connection_id, attempted_at, outcome,
		response, error, provider_message_id, duration_ms FROM {prefix}mailsvc_log_attempts
		WHERE log_id = ? ORDER BY id`), id)
	if err != nil {
		return nil, fmt.Errorf("find log %d attempts: %w", id, err)
	}
	defer rows.Close()
	l.History = []core.Attempt{}
	for rows.Next() {
		var a core.Attempt
		if err := rows.Scan(&a.ID, &a.LogID, &a.ConnectionID, &a.At, &a.Outcome, &a.Response,
			&a.Error, &a.ProviderMessageID, &a.DurationMS); err != nil {
			return nil, fmt.Errorf("scan log %d attempt: %w", id, err)
		}
		a.At = a.At.UTC()
		l.History = append(l.History, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find log %d attempts: %w", id, err)
	}
	return l, nil
}

// likeEscape makes s a literal LIKE pattern fragment with '!' as the
// escape character.
func likeEscape(s string) string {
	return strings.NewReplacer("!", "!!", "%", "!%", "_", "!_").Replace(s)
}

// FindLogs implements core.LogStore.
func (db *DB) FindLogs(ctx context.Context, f core.LogFilter) ([]*core.Log, int, error) {
	var where []string
	var args []any
	if f.Status != "" {
		where = append(where, "status = ?")
		args = append(args, f.Status)
	}
	if f.Search != "" {
		p := "%" + likeEscape(f.Search) + "%"
		where = append(where, `(recipients LIKE ? ESCAPE '!' OR subject LIKE ? ESCAPE '!'
			OR text_body LIKE ? ESCAPE '!' OR html_body LIKE ? ESCAPE '!')`)
		args = append(args, p, p, p, p)
	}
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}
	var total int
	if err := db.sqlDB.QueryRowContext(ctx, db.expand(`SELECT COUNT(*) FROM {prefix}mailsvc_logs`+cond), args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count logs: %w", err)
	}
	q := `SELECT ` + logColumns + ` FROM {prefix}mailsvc_logs` + cond + ` ORDER BY created_at DESC, id DESC`
	if f.Limit > 0 || f.Offset > 0 {
		limit := f.Limit
		if limit <= 0 {
			limit = 1 << 31
		}
		q += " LIMIT ? OFFSET ?"
		args = append(args, limit, max(f.Offset, 0))
	}
	logs, err := queryLogs(ctx, db.sqlDB, db.expand(q), args...)
	if err != nil {
		return nil, 0, fmt.Errorf("find logs: %w", err)
	}
	return logs, total, nil
}

// QueueStats implements core.LogStore.
func (db *DB) QueueStats(ctx context.Context) (core.QueueStats, error) {
	var st core.QueueStats
	rows, err := db.sqlDB.QueryContext(ctx, db.expand(`SELECT status, COUNT(*) FROM {prefix}mailsvc_logs GROUP BY status`))
	if err != nil {
		return st, fmt.Errorf("queue stats: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var status string
		var n int
		if err := rows.Scan(&status, &n); err != nil {
			return st, fmt.Errorf("scan queue stats: %w", err)
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
	}
	if err := rows.Err(); err != nil {
		return st, fmt.Errorf("queue stats: %w", err)
	}
	return st, nil
}

// DeleteLogs implements core.LogStore.
func (db *DB) DeleteLogs(ctx context.Context, ids []int64) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	in, args := inList(ids)
	res, err := db.sqlDB.ExecContext(ctx, db.expand(`DELETE FROM {prefix}mailsvc_logs WHERE id IN (`+in+`)`), args...)
	if err != nil {
		return 0, fmt.Errorf("delete logs: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// ResendLogs implements core.LogStore.
func (db *DB) ResendLogs(ctx context.Context, ids []int64) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	in, args := inList(ids)
	t := now()
	res, err := db.sqlDB.ExecContext(ctx, db.expand(`UPDATE {prefix}mailsvc_logs SET
		status = ?, attempts = 0, phase_attempts = 0, used_fallback = 0, simulated = 0,
		provider_message_id = '', last_error = '', next_attempt_at = ?, lease_owner = NULL,
		lease_until = NULL, delivered_at = NULL, updated_at = ?
		WHERE status IN (?, ?) AND id IN (`+in+`)`),
		append([]any{core.StatusQueued, t, t, core.StatusDelivered, core.StatusFailed}, args...)...)
	if err != nil {
		return 0, fmt.Errorf("resend logs: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// PurgeLogs implements core.LogStore.
func (db *DB) PurgeLogs(ctx context.Context, before time.Time, batch int) (int, error) {
	if batch <= 0 {
		batch = 500
	}
	total := 0
	for {
		rows, err := db.sqlDB.QueryContext(ctx, db.expand(`SELECT id FROM {prefix}mailsvc_logs
			WHERE status IN (?, ?) AND created_at < ? ORDER BY id LIMIT ?`),
			core.StatusDelivered, core.StatusFailed, before.UTC().Truncate(time.Microsecond), batch)
		if err != nil {
			return total, fmt.Errorf("purge logs: select: %w", err)
		}
		var ids []int64
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return total, fmt.Errorf("purge logs: scan: %w", err)
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return total, fmt.Errorf("purge logs: select: %w", err)
		}
		if len(ids) == 0 {
			return total, nil
		}
		in, args := inList(ids)
		// Re-check the status: a log resent meanwhile is no longer purged.
		res, err := db.sqlDB.ExecContext(ctx, db.expand(`DELETE FROM {prefix}mailsvc_logs
			WHERE status IN (?, ?) AND id IN (`+in+`)`),
			append([]any{core.StatusDelivered, core.StatusFailed}, args...)...)
		if err != nil {
			return total, fmt.Errorf("purge logs: delete: %w", err)
		}
		n, _ := res.RowsAffected()
		total += int(n)
		if len(ids) < batch {
			return total, nil
		}
	}
}

// AcquireLease takes or renews the named lease for owner until now+ttl.
// It returns false while another owner holds an unexpired lease. Used to
// run scheduled jobs on one replica at a time.
func (db *DB) AcquireLease(ctx context.Context, name, owner string, ttl time.Duration) (bool, error) {
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
