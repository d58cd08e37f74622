package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Address kinds in the {prefix}mailsvc_log_recipients table: the
// recipients, which the log search matches, and since schema 15 the
// sender and the Reply-To addresses, which only personal data requests
// look up (privacy.go).
const (
	recipientTo      = "to"
	recipientCc      = "cc"
	recipientBcc     = "bcc"
	recipientFrom    = "frm"
	recipientReplyTo = "rto"
)

// searchedKinds is the SQL list of the kinds an address search matches.
const searchedKinds = "('" + recipientTo + "', '" + recipientCc + "', '" + recipientBcc + "')"

// maxIndexedEmail is the longest address the recipients table keeps
// (RFC 5321's limit); longer ones are not valid addresses and are left out.
const maxIndexedEmail = 254

// recipientRow is one row of the recipients table: the address lower-cased.
type recipientRow struct {
	LogID int64
	Kind  string
	Email string
}

// recipientRows returns m's distinct recipients, sender and Reply-To
// addresses as rows of log id.
func recipientRows(id int64, m *core.Message) []recipientRow {
	var out []recipientRow
	seen := map[[2]string]bool{}
	add := func(kind string, as []core.Address) {
		for _, a := range as {
			e := strings.ToLower(strings.TrimSpace(a.Email))
			k := [2]string{kind, e}
			if e == "" || len(e) > maxIndexedEmail || seen[k] {
				continue
			}
			seen[k] = true
			out = append(out, recipientRow{LogID: id, Kind: kind, Email: e})
		}
	}
	add(recipientTo, m.To)
	add(recipientCc, m.Cc)
	add(recipientBcc, m.Bcc)
	add(recipientFrom, []core.Address{m.From})
	add(recipientReplyTo, m.ReplyTo)
	return out
}

// insertRecipients writes rows with multi-row INSERTs that skip rows
// already present (the PHP bridge may have written them). Their
// addresses enter the search dictionary in the background, by log id
// (backfillSearchAddresses), or at once through enterSearchAddresses
// for logs the background has passed already.
func (db *handle) insertRecipients(ctx context.Context, tx *sql.Tx, rows []recipientRow) error {
	const chunk = 300
	verb := "INSERT IGNORE INTO"
	if db.dialect == DialectSQLite {
		verb = "INSERT OR IGNORE INTO"
	}
	for len(rows) > 0 {
		n := min(len(rows), chunk)
		part := rows[:n]
		rows = rows[n:]
		var b strings.Builder
		b.WriteString(verb + ` {prefix}mailsvc_log_recipients (log_id, kind, email) VALUES `)
		args := make([]any, 0, 3*n)
		for i, r := range part {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("(?,?,?)")
			args = append(args, r.LogID, r.Kind, r.Email)
		}
		if _, err := tx.ExecContext(ctx, db.expand(b.String()), args...); err != nil {
			return fmt.Errorf("insert recipients: %w", err)
		}
	}
	return nil
}

// subjectRow is one row of the MySQL subjects side table
// ({prefix}mailsvc_log_subjects): a log's id, creation time and subject,
// as its logs row has them.
type subjectRow struct {
	LogID     int64
	CreatedAt time.Time
	Subject   string
}

// insertSubjects writes rows in the subjects side table, whose FULLTEXT
// index serves the subject-word search on MySQL, with multi-row INSERTs
// that skip rows already present. On SQLite it does nothing: there the
// FTS5 table is written from the logs rows (see indexPending).
func (db *handle) insertSubjects(ctx context.Context, tx *sql.Tx, rows []subjectRow) error {
	if db.dialect != DialectMySQL {
		return nil
	}
	const chunk = 300
	for len(rows) > 0 {
		n := min(len(rows), chunk)
		part := rows[:n]
		rows = rows[n:]
		var b strings.Builder
		b.WriteString(`INSERT IGNORE INTO {prefix}mailsvc_log_subjects (log_id, created_at, subject) VALUES `)
		args := make([]any, 0, 3*n)
		for i, r := range part {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("(?,?,?)")
			args = append(args, r.LogID, r.CreatedAt.UTC().Truncate(time.Microsecond), r.Subject)
		}
		if _, err := tx.ExecContext(ctx, db.expand(b.String()), args...); err != nil {
			return fmt.Errorf("insert subjects: %w", err)
		}
	}
	return nil
}

// insertSearchEntries writes the search entries of one new log in tx: its
// recipients rows and, on MySQL, its subjects row (created at t).
func (db *handle) insertSearchEntries(ctx context.Context, tx *sql.Tx, id int64, m *core.Message, t time.Time) error {
	if err := db.insertRecipients(ctx, tx, recipientRows(id, m)); err != nil {
		return err
	}
	return db.insertSubjects(ctx, tx, []subjectRow{{LogID: id, CreatedAt: t, Subject: m.Subject}})
}

// indexPending writes the search entries of logs not yet indexed (their
// recipients rows; their subject's entry: on MySQL a subjects row, on
// SQLite an FTS5 entry, both copied from the logs row) and marks them
// indexed, in tx. Only the Message's recipients of each log are read.
func (db *handle) indexPending(ctx context.Context, tx *sql.Tx, logs []*core.Log) error {
	if len(logs) == 0 {
		return nil
	}
	var recips []recipientRow
	ids := make([]int64, 0, len(logs))
	for _, l := range logs {
		recips = append(recips, recipientRows(l.ID, &l.Message)...)
		ids = append(ids, l.ID)
	}
	if err := db.insertRecipients(ctx, tx, recips); err != nil {
		return err
	}
	if err := db.enterPassedAddresses(ctx, tx, recips); err != nil {
		return err
	}
	if db.dialect == DialectMySQL {
		// The rows are held by tx (a claim's or the indexer's FOR UPDATE).
		in, args := inList(ids)
		if _, err := tx.ExecContext(ctx, db.expand(`INSERT IGNORE INTO {prefix}mailsvc_log_subjects (log_id, created_at, subject)
			SELECT id, created_at, subject FROM {prefix}mailsvc_logs WHERE id IN (`+in+`)`), args...); err != nil {
			return fmt.Errorf("index subjects: %w", err)
		}
	}
	if db.dialect == DialectSQLite {
		in, args := inList(ids)
		// Re-indexing is idempotent: a stale entry is removed first.
		if _, err := tx.ExecContext(ctx, db.expand(`DELETE FROM {prefix}mailsvc_logs_fts WHERE rowid IN (`+in+`)`), args...); err != nil {
			return fmt.Errorf("index subjects: %w", err)
		}
		if _, err := tx.ExecContext(ctx, db.expand(`INSERT INTO {prefix}mailsvc_logs_fts (rowid, subject)
			SELECT id, subject FROM {prefix}mailsvc_logs WHERE id IN (`+in+`)`), args...); err != nil {
			return fmt.Errorf("index subjects: %w", err)
		}
	}
	return db.markRecipientsIndexed(ctx, tx, ids)
}

// markRecipientsIndexed sets recipients_indexed on the logs ids.
func (db *handle) markRecipientsIndexed(ctx context.Context, tx *sql.Tx, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	in, args := inList(ids)
	if _, err := tx.ExecContext(ctx, db.expand(`UPDATE {prefix}mailsvc_logs SET recipients_indexed = 1
		WHERE id IN (`+in+`)`), args...); err != nil {
		return fmt.Errorf("mark recipients indexed: %w", err)
	}
	return nil
}

// IndexLogRecipients writes the search entries (recipients rows and the
// subject's entry: a subjects row on MySQL, an FTS5 entry on SQLite) of
// up to limit logs not yet
// indexed (recipients_indexed = 0: rows queued by the PHP bridge, logs
// written before the search tables existed, and on SQLite logs enqueued
// since the last claim), oldest first, and returns how many logs it
// indexed. One short transaction; rows another transaction holds (a claim
// in progress) are skipped on MySQL. Idempotent and safe to run from any
// number of processes. The store runs it by itself whenever a claim finds
// the queue empty (so it runs from boot on, while workers are idle); a
// caller may also run it in a loop until it returns 0.
func (s *SearchIndexService) IndexLogRecipients(ctx context.Context, limit int) (int, error) {
	return s.indexLogRecipients(ctx, limit)
}

// indexLogRecipients is IndexLogRecipients, for the store's own callers
// (the claim, the search, personal data requests).
func (db *handle) indexLogRecipients(ctx context.Context, limit int) (int, error) {
	if limit <= 0 {
		limit = 200
	}
	// A plain read first: when every log is indexed (the usual case) no
	// write transaction is opened, which on SQLite would take the
	// database's write lock.
	var one int
	err := db.sqlDB.QueryRowContext(ctx, db.expand(`SELECT 1 FROM {prefix}mailsvc_logs WHERE recipients_indexed = 0 LIMIT 1`)).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("index log recipients: %w", err)
	}
	n := 0
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		n = 0
		sel := `SELECT id, message FROM {prefix}mailsvc_logs WHERE recipients_indexed = 0 ORDER BY id LIMIT ?`
		if db.dialect == DialectMySQL {
			sel += " FOR UPDATE SKIP LOCKED"
		}
		rows, err := tx.QueryContext(ctx, db.expand(sel), limit)
		if err != nil {
			return fmt.Errorf("select unindexed logs: %w", err)
		}
		var pending []*core.Log
		for rows.Next() {
			l := &core.Log{}
			var js string
			if err := rows.Scan(&l.ID, &js); err != nil {
				rows.Close()
				return fmt.Errorf("scan unindexed log: %w", err)
			}
			// A message column that does not decode indexes no recipient
			// but is marked, so it is not read again and again.
			if m, err := decodeMessage([]byte(js), "", "", ""); err == nil {
				l.Message = m
			}
			pending = append(pending, l)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("select unindexed logs: %w", err)
		}
		n = len(pending)
		return db.indexPending(ctx, tx, pending)
	})
	if err != nil {
		return 0, fmt.Errorf("index log recipients: %w", err)
	}
	return n, nil
}
