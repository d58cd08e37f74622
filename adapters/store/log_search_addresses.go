package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// The address dictionary of the log search: {prefix}mailsvc_search_addresses
// holds each distinct recipient (To, Cc, Bcc) address once, with its domain
// reversed (domain_rev: "moc.emca" for ann@acme.com, so a domain and its
// subdomains are one index range); {prefix}mailsvc_search_grams holds the
// three-character pieces of each address's local part (gram, email), so a
// fragment search reads the addresses holding the fragment's pieces rather
// than every address. The per-log rows stay in the addresses table
// ({prefix}mailsvc_log_recipients): a search by domain, prefix or fragment
// finds its addresses here, then their logs there.
//
// Writes: the addresses enter the dictionary in the background, by log
// id (backfillSearchAddresses, the "addresses" progress row: every log up
// to done_up_to is entered), so that taking a message in writes nothing
// to it; a search reads the addresses of the logs past done_up_to from
// the addresses table itself (searchTail), so a message is found by
// domain, prefix or fragment as soon as it is accepted. A log whose
// recipients rows are written once the background has passed it (a
// bridge row indexed late, an erase's rewrite) enters at once
// (enterPassedAddresses). An address's pieces are written with it by the
// background, or later (grams_done = 0) for addresses entered at once;
// those few are matched by a scan. The logs from before the dictionary
// (schema 25's target) are entered the same way; until then a search by
// address part is partial (SearchIndexPartial). Addresses no log names
// any more (retention purge, DELETE /logs) are removed by a background
// sweep after each deletion; an erased address is removed by the erase
// itself.

// Progress rows of {prefix}mailsvc_search_progress.
const (
	progressAddresses = "addresses" // logs entered up to done_up_to; target: the last from before the dictionary
	progressSweep     = "sweep"     // orphan sweep: requested (target) vs done
)

// gramSize is the length of the pieces of a local part.
const gramSize = 3

// addressDomain returns the part of email after its last @.
func addressDomain(email string) string {
	if i := strings.LastIndexByte(email, '@'); i >= 0 {
		return email[i+1:]
	}
	return ""
}

// addressLocal returns the part of email before its last @.
func addressLocal(email string) string {
	if i := strings.LastIndexByte(email, '@'); i >= 0 {
		return email[:i]
	}
	return email
}

// reverseString reverses s by runes.
func reverseString(s string) string {
	r := []rune(s)
	slices.Reverse(r)
	return string(r)
}

// grams returns the distinct gramSize-rune pieces of s, in order. The
// pieces of valid UTF-8 are slices of s (a local part has a few dozen at
// most, so a scan of those found finds the repeated ones).
func grams(s string) []string {
	if !utf8.ValidString(s) {
		s = string([]rune(s)) // each invalid byte one U+FFFD, as the runes read it
	}
	var starts [64]int
	at := starts[:0]
	for i := range s {
		at = append(at, i)
	}
	at = append(at, len(s))
	var out []string
	for i := 0; i+gramSize < len(at); i++ {
		if g := s[at[i]:at[i+gramSize]]; !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}

// searchedEmails returns the distinct addresses of rows whose kind the
// search matches, sorted (so concurrent inserts take their locks in one
// order).
func searchedEmails(rows []recipientRow) []string {
	var out []string
	for _, r := range rows {
		if r.Kind == recipientTo || r.Kind == recipientCc || r.Kind == recipientBcc {
			out = append(out, r.Email)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// insertIgnore is the dialect's INSERT that skips rows already present.
func (db *handle) insertIgnore() string {
	if db.dialect == DialectSQLite {
		return "INSERT OR IGNORE INTO"
	}
	return "INSERT IGNORE INTO"
}

// insertSearchAddresses enters emails in the dictionary (without their
// pieces when withGrams is false: the background adds them), in tx.
func (db *handle) insertSearchAddresses(ctx context.Context, tx *sql.Tx, emails []string, withGrams bool) error {
	const chunk = 300
	done := 0
	if withGrams {
		done = 1
	}
	for rest := emails; len(rest) > 0; {
		n := min(len(rest), chunk)
		part := rest[:n]
		rest = rest[n:]
		var b strings.Builder
		b.WriteString(db.insertIgnore() + ` {prefix}mailsvc_search_addresses (email, domain_rev, grams_done) VALUES `)
		args := make([]any, 0, 3*n)
		for i, e := range part {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("(?,?,?)")
			args = append(args, e, reverseString(addressDomain(e)), done)
		}
		if _, err := tx.ExecContext(ctx, db.expand(b.String()), args...); err != nil {
			if IsMissingTable(err) && !withGrams {
				// A schema before the dictionary (a database not migrated
				// yet): schema 25's backfill enters these logs' addresses.
				return nil
			}
			return fmt.Errorf("insert search addresses: %w", err)
		}
	}
	if withGrams {
		return db.insertGrams(ctx, tx, emails)
	}
	return nil
}

// insertGrams writes the pieces of the local parts of emails, in tx.
func (db *handle) insertGrams(ctx context.Context, tx *sql.Tx, emails []string) error {
	type row struct{ gram, email string }
	var rows []row
	for _, e := range emails {
		for _, g := range grams(addressLocal(e)) {
			rows = append(rows, row{g, e})
		}
	}
	const chunk = 500
	for len(rows) > 0 {
		n := min(len(rows), chunk)
		part := rows[:n]
		rows = rows[n:]
		var b strings.Builder
		b.WriteString(db.insertIgnore() + ` {prefix}mailsvc_search_grams (gram, email) VALUES `)
		args := make([]any, 0, 2*n)
		for i, r := range part {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("(?,?)")
			args = append(args, r.gram, r.email)
		}
		if _, err := tx.ExecContext(ctx, db.expand(b.String()), args...); err != nil {
			return fmt.Errorf("insert search grams: %w", err)
		}
	}
	return nil
}

// forgetUnusedAddresses removes from the dictionary those of emails that no
// log names as a recipient any more, with their pieces, in q.
func (db *handle) forgetUnusedAddresses(ctx context.Context, q execer, emails []string) error {
	if len(emails) == 0 {
		return nil
	}
	in, args := stringList(emails)
	if _, err := q.ExecContext(ctx, db.expand(`DELETE FROM {prefix}mailsvc_search_addresses WHERE email IN (`+in+`)
		AND NOT EXISTS (SELECT 1 FROM {prefix}mailsvc_log_recipients r
			WHERE r.email = {prefix}mailsvc_search_addresses.email AND r.kind IN `+searchedKinds+`)`), args...); err != nil {
		return fmt.Errorf("forget search addresses: %w", err)
	}
	if _, err := q.ExecContext(ctx, db.expand(`DELETE FROM {prefix}mailsvc_search_grams WHERE email IN (`+in+`)
		AND NOT EXISTS (SELECT 1 FROM {prefix}mailsvc_search_addresses a WHERE a.email = {prefix}mailsvc_search_grams.email)`), args...); err != nil {
		return fmt.Errorf("forget search grams: %w", err)
	}
	return nil
}

// stringList returns "?,?,…" for values and the values as arguments.
func stringList(values []string) (string, []any) {
	args := make([]any, len(values))
	for i, v := range values {
		args[i] = v
	}
	return strings.TrimSuffix(strings.Repeat("?,", len(values)), ","), args
}

// requestAddressSweep asks the background for a pass over the dictionary
// that removes the addresses no log names any more (after logs were
// deleted).
func (db *handle) requestAddressSweep(ctx context.Context) {
	if _, err := db.sqlDB.ExecContext(ctx, db.expand(`UPDATE {prefix}mailsvc_search_progress
		SET target = target + 1 WHERE name = ?`), progressSweep); err != nil && ctx.Err() == nil {
		db.logger.Warn("request a sweep of the search addresses", "err", err)
	}
}

// searchBackfillBatch is how many log ids one backfill step covers.
const searchBackfillBatch = 2000

// IndexSearchAddresses does one step of the address dictionary's
// background work and returns how many rows it handled (0 when there is
// nothing to do): entering the addresses of the next searchBackfillBatch
// logs it has not entered yet, else writing the pieces of up to 500
// addresses that lack them, else removing up to 500 addresses no log names
// any more (after a purge). Each step is one short transaction; on MySQL
// a step another process is doing is skipped (SKIP LOCKED), so it is safe
// to run from any number of processes. The store runs it whenever a claim
// finds the queue empty, and the service's scheduler runs it every minute
// until it returns 0 (RunSearchIndex).
func (s *SearchIndexService) IndexSearchAddresses(ctx context.Context) (int, error) {
	return s.indexSearchAddresses(ctx)
}

// indexSearchAddresses is IndexSearchAddresses, for the claim.
func (db *handle) indexSearchAddresses(ctx context.Context) (int, error) {
	n, err := db.backfillSearchAddresses(ctx)
	if err != nil || n > 0 {
		return n, err
	}
	if n, err = db.fillGrams(ctx, 500); err != nil || n > 0 {
		return n, err
	}
	return db.sweepSearchAddresses(ctx, 500)
}

// RunSearchIndex runs IndexSearchAddresses until it has nothing left to do
// or ctx ends (not an error: the next run goes on from there), and
// returns the rows it handled.
func (s *SearchIndexService) RunSearchIndex(ctx context.Context) (int, error) {
	total := 0
	for ctx.Err() == nil {
		n, err := s.indexSearchAddresses(ctx)
		total += n
		if err != nil && ctx.Err() != nil {
			return total, nil
		}
		if err != nil || n == 0 {
			return total, err
		}
	}
	return total, nil
}

// lockProgress reads (and on MySQL locks, skipping a row another
// transaction holds: ok false) a progress row in tx.
func (db *handle) lockProgress(ctx context.Context, tx *sql.Tx, name string) (done, target, passTarget int64, cursor string, ok bool, err error) {
	q := `SELECT done_up_to, target, pass_target, cursor_email FROM {prefix}mailsvc_search_progress WHERE name = ?`
	if db.dialect == DialectMySQL {
		q += " FOR UPDATE SKIP LOCKED"
	}
	err = tx.QueryRowContext(ctx, db.expand(q), name).Scan(&done, &target, &passTarget, &cursor)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, 0, "", false, nil
	}
	if err != nil {
		return 0, 0, 0, "", false, fmt.Errorf("read search progress %s: %w", name, err)
	}
	return done, target, passTarget, cursor, true, nil
}

// backfillSearchAddresses enters the addresses of the next batch of logs
// past the progress row's done_up_to, up to the first log whose
// recipients rows are not written yet (a bridge row not indexed), and
// returns how many addresses it entered (at least 1 when it moved on).
func (db *handle) backfillSearchAddresses(ctx context.Context) (int, error) {
	var done, newest int64
	if err := db.sqlDB.QueryRowContext(ctx, db.expand(`SELECT p.done_up_to, COALESCE((SELECT MAX(id) FROM {prefix}mailsvc_logs), 0)
		FROM {prefix}mailsvc_search_progress p WHERE p.name = ?`), progressAddresses).Scan(&done, &newest); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return 0, nil
		}
		return 0, fmt.Errorf("read search progress: %w", err)
	}
	if newest <= done {
		return 0, nil
	}
	hi, err := db.committedUpTo(ctx, done)
	if err != nil || hi <= done {
		return 0, err
	}
	n := 0
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		n = 0
		locked, _, _, _, ok, err := db.lockProgress(ctx, tx, progressAddresses)
		if err != nil || !ok || locked != done {
			// Another process holds the step, or moved on meanwhile.
			return err
		}
		emails, err := queryStrings(ctx, tx, db.expand(`SELECT DISTINCT email FROM {prefix}mailsvc_log_recipients
			WHERE log_id > ? AND log_id <= ? AND kind IN `+searchedKinds), done, hi)
		if err != nil {
			return fmt.Errorf("read addresses to enter: %w", err)
		}
		slices.Sort(emails)
		if err := db.insertSearchAddresses(ctx, tx, emails, true); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, db.expand(`UPDATE {prefix}mailsvc_search_progress SET done_up_to = ? WHERE name = ?`),
			hi, progressAddresses); err != nil {
			return fmt.Errorf("record search progress: %w", err)
		}
		n = max(len(emails), 1)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("enter addresses in the search dictionary: %w", err)
	}
	return n, nil
}

// recentGap is how young a log past a gap in the ids must be for the
// gap to count as logs still being written (an id taken by a transaction
// that has not inserted or committed its row yet); an older gap is logs
// deleted or a transaction rolled back.
const recentGap = 10 * time.Second

// committedUpTo returns the highest log id up to which the next
// searchBackfillBatch logs past done are all written with their
// recipients rows: it stops before a log not indexed yet (a bridge row)
// and before a recent gap in the ids. On MySQL the logs are read with a
// shared lock, which waits for the transactions still writing logs in
// that range, in a transaction of its own, so the locks go at once.
func (db *handle) committedUpTo(ctx context.Context, done int64) (int64, error) {
	hi := done
	scan := func(q Querier, lock string) error {
		hi = done
		rows, err := q.QueryContext(ctx, db.expand(`SELECT id, recipients_indexed, created_at FROM {prefix}mailsvc_logs
			WHERE id > ? ORDER BY id LIMIT ?`+lock), done, searchBackfillBatch)
		if err != nil {
			return fmt.Errorf("read logs to enter: %w", err)
		}
		defer rows.Close()
		young := now().Add(-recentGap)
		for rows.Next() {
			var id int64
			var indexed bool
			var created time.Time
			if err := rows.Scan(&id, &indexed, &created); err != nil {
				return fmt.Errorf("read logs to enter: %w", err)
			}
			if !indexed || (id > hi+1 && created.After(young)) {
				break
			}
			hi = id
		}
		return rows.Err()
	}
	var err error
	if db.dialect == DialectMySQL {
		err = db.inTx(ctx, func(tx *sql.Tx) error { return scan(tx, " LOCK IN SHARE MODE") })
	} else {
		// One writer at a time: every log read is committed.
		err = scan(db.sqlDB, "")
	}
	if err != nil {
		return done, err
	}
	return hi, nil
}

// enterPassedAddresses enters at once, in tx, the addresses of those of
// rows whose log the background has passed already (its id at most
// done_up_to): it would not come back to them.
func (db *handle) enterPassedAddresses(ctx context.Context, tx *sql.Tx, rows []recipientRow) error {
	if len(rows) == 0 {
		return nil
	}
	var done int64
	err := tx.QueryRowContext(ctx, db.expand(`SELECT done_up_to FROM {prefix}mailsvc_search_progress WHERE name = ?`),
		progressAddresses).Scan(&done)
	if errors.Is(err, sql.ErrNoRows) || IsMissingTable(err) {
		// A schema before the dictionary: its backfill enters them.
		return nil
	}
	if err != nil {
		return fmt.Errorf("read search progress: %w", err)
	}
	passed := make([]recipientRow, 0, len(rows))
	for _, r := range rows {
		if r.LogID <= done {
			passed = append(passed, r)
		}
	}
	return db.insertSearchAddresses(ctx, tx, searchedEmails(passed), false)
}

// fillGrams writes the pieces of up to limit addresses entered without
// them and returns how many it did.
func (db *handle) fillGrams(ctx context.Context, limit int) (int, error) {
	var one int
	err := db.sqlDB.QueryRowContext(ctx, db.expand(`SELECT 1 FROM {prefix}mailsvc_search_addresses WHERE grams_done = 0 LIMIT 1`)).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read addresses without pieces: %w", err)
	}
	n := 0
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		q := `SELECT email FROM {prefix}mailsvc_search_addresses WHERE grams_done = 0 ORDER BY email LIMIT ?`
		if db.dialect == DialectMySQL {
			q += " FOR UPDATE SKIP LOCKED"
		}
		emails, err := queryStrings(ctx, tx, db.expand(q), limit)
		if err != nil || len(emails) == 0 {
			return err
		}
		if err := db.insertGrams(ctx, tx, emails); err != nil {
			return err
		}
		in, args := stringList(emails)
		if _, err := tx.ExecContext(ctx, db.expand(`UPDATE {prefix}mailsvc_search_addresses SET grams_done = 1 WHERE email IN (`+in+`)`), args...); err != nil {
			return fmt.Errorf("mark pieces written: %w", err)
		}
		n = len(emails)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("write search address pieces: %w", err)
	}
	return n, nil
}

// sweepSearchAddresses does one step of a requested sweep: the next limit
// addresses (by address) that no log names any more are removed. It
// returns how many addresses it looked at.
func (db *handle) sweepSearchAddresses(ctx context.Context, limit int) (int, error) {
	var requested int64
	if err := db.sqlDB.QueryRowContext(ctx, db.expand(`SELECT target - done_up_to FROM {prefix}mailsvc_search_progress WHERE name = ?`),
		progressSweep).Scan(&requested); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("read sweep progress: %w", err)
	}
	if requested <= 0 {
		return 0, nil
	}
	n := 0
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		done, target, passTarget, cursor, ok, err := db.lockProgress(ctx, tx, progressSweep)
		if err != nil || !ok || done >= target {
			return err
		}
		if cursor == "" {
			// A new pass: it covers the deletions requested so far.
			passTarget = target
		}
		emails, err := queryStrings(ctx, tx, db.expand(`SELECT email FROM {prefix}mailsvc_search_addresses
			WHERE email > ? ORDER BY email LIMIT ?`), cursor, limit)
		if err != nil {
			return fmt.Errorf("read search addresses: %w", err)
		}
		if err := db.forgetUnusedAddresses(ctx, tx, emails); err != nil {
			return err
		}
		if len(emails) < limit {
			done, cursor = passTarget, ""
		} else {
			cursor = emails[len(emails)-1]
		}
		if _, err := tx.ExecContext(ctx, db.expand(`UPDATE {prefix}mailsvc_search_progress
			SET done_up_to = ?, pass_target = ?, cursor_email = ? WHERE name = ?`), done, passTarget, cursor, progressSweep); err != nil {
			return fmt.Errorf("record sweep progress: %w", err)
		}
		n = max(len(emails), 1)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("sweep search addresses: %w", err)
	}
	return n, nil
}

// SearchIndexPartial reports whether a search by domain, prefix or
// fragment may miss logs: the logs from before the dictionary are not all
// entered yet, or logs queued by the WordPress bridge are not indexed yet
// (the search indexes up to 1,000 of them first).
func (db *LogService) SearchIndexPartial(ctx context.Context) (bool, error) {
	var pending int64
	err := db.sqlDB.QueryRowContext(ctx, db.expand(`SELECT target - done_up_to FROM {prefix}mailsvc_search_progress WHERE name = ?`),
		progressAddresses).Scan(&pending)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("read search progress: %w", err)
	}
	if pending > 0 {
		return true, nil
	}
	var one int
	err = db.sqlDB.QueryRowContext(ctx, db.expand(`SELECT 1 FROM {prefix}mailsvc_logs WHERE recipients_indexed = 0 LIMIT 1`)).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read unindexed logs: %w", err)
	}
	return true, nil
}

// queryStrings runs a query of one text column and returns its values.
func queryStrings(ctx context.Context, q Querier, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
