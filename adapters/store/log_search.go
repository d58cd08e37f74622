package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/mailsvc/mailsvc/core"
)

// likeEscape makes s a literal LIKE pattern fragment with '!' as the
// escape character.
func likeEscape(s string) string {
	return strings.NewReplacer("!", "!!", "%", "!%", "_", "!_").Replace(s)
}

// LikeEscape escapes s for a LIKE pattern whose escape character is "!"
// (`LIKE ? ESCAPE '!'`), for modules matching text in their tables as
// the store does.
func LikeEscape(s string) string { return likeEscape(s) }

// minWordLength is the shortest word the full-text indexes serve
// (InnoDB's innodb_ft_min_token_size default); shorter words are checked
// by the LIKE recheck only.
const minWordLength = 3

// stopWords are InnoDB's default full-text stop words: never indexed, so
// they are left to the LIKE recheck too (on both dialects, for the same
// results).
var stopWords = map[string]bool{
	"a": true, "about": true, "an": true, "are": true, "as": true, "at": true, "be": true, "by": true,
	"com": true, "de": true, "en": true, "for": true, "from": true, "how": true, "i": true, "in": true,
	"is": true, "it": true, "la": true, "of": true, "on": true, "or": true, "that": true, "the": true,
	"this": true, "to": true, "was": true, "what": true, "when": true, "where": true, "who": true,
	"will": true, "with": true, "und": true, "www": true,
}

// searchWords splits a search term into the words a full-text index can
// look up: runs of letters, digits and underscores, lower-cased, at least
// minWordLength long and not stop words.
func searchWords(term string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(term), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
	}) {
		if len([]rune(w)) >= minWordLength && !stopWords[w] {
			out = append(out, w)
		}
	}
	return out
}

// onlyIndexableWords reports whether term is words of letters and digits
// separated by spaces, each one a word the full-text indexes serve.
func onlyIndexableWords(term string) bool {
	fields := strings.Fields(term)
	for _, f := range fields {
		for _, r := range f {
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				return false
			}
		}
	}
	return len(fields) > 0 && len(searchWords(term)) == len(fields)
}

// logConditions returns the WHERE clause (with its leading " WHERE ", or
// "") and arguments selecting the logs f matches, but for a subject search
// on MySQL (see subjectConditions).
func (db *handle) logConditions(f core.LogFilter) (string, []any) {
	var where []string
	var args []any
	if f.SiteID > 0 {
		where = append(where, "site_id = ?")
		args = append(args, f.SiteID)
	}
	if f.Status != "" {
		where = append(where, "status = ?")
		args = append(args, f.Status)
	}
	if !f.CreatedFrom.IsZero() {
		where = append(where, "created_at >= ?")
		args = append(args, f.CreatedFrom.UTC().Truncate(time.Microsecond))
	}
	if !f.CreatedBefore.IsZero() {
		where = append(where, "created_at < ?")
		args = append(args, f.CreatedBefore.UTC().Truncate(time.Microsecond))
	}
	if term := strings.TrimSpace(f.Search); term != "" {
		if core.SearchIsAddress(term) {
			// The recipients table's (email, log_id) index.
			email := strings.ToLower(term)
			if db.dialect == DialectMySQL {
				where = append(where, "id IN (SELECT log_id FROM {prefix}mailsvc_log_recipients WHERE email = ? AND kind IN "+searchedKinds+")")
				args = append(args, email)
			} else {
				// And the few logs not indexed yet, through the partial
				// index: the address as the recipients column renders it
				// (bare between commas, or in angle brackets).
				where = append(where, `id IN (SELECT log_id FROM {prefix}mailsvc_log_recipients WHERE email = ? AND kind IN `+searchedKinds+`
					UNION ALL SELECT id FROM {prefix}mailsvc_logs WHERE recipients_indexed = 0
					AND (', ' || recipients || ',' LIKE ? ESCAPE '!' OR recipients LIKE ? ESCAPE '!'))`)
				args = append(args, email, "%, "+likeEscape(email)+",%", "%<"+likeEscape(email)+">%")
			}
		} else {
			// Subject words on SQLite (MySQL: subjectConditions).
			if q := ftsQuery(term); q != "" {
				// And the few logs not indexed yet (partial index), left
				// to the LIKE recheck below.
				where = append(where, `id IN (SELECT rowid FROM {prefix}mailsvc_logs_fts WHERE {prefix}mailsvc_logs_fts MATCH ?
					UNION ALL SELECT id FROM {prefix}mailsvc_logs WHERE recipients_indexed = 0)`)
				args = append(args, q)
			}
			// A term made only of indexable words is answered by the index
			// alone (the count then reads no row). Anything else (short or
			// stop words, punctuation) is rechecked as typed on the
			// candidates; a term with no indexable word scans the subjects.
			if !onlyIndexableWords(term) {
				where = append(where, "subject LIKE ? ESCAPE '!'")
				args = append(args, "%"+likeEscape(term)+"%")
			}
		}
	}
	if len(where) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(where, " AND "), args
}

// FindLogs implements core.LogStore. Recipient addresses are looked up in
// the recipients table (a domain, the start or a part of an address
// through the address dictionary first: findLogsByAddressPart), subject words in the full-text index (on
// MySQL/MariaDB InnoDB FULLTEXT on the narrow subjects side table, see
// findLogsBySubject; FTS5 on SQLite), status and dates through the
// (status, created_at) and (created_at) indexes, newest first. With
// f.CountUpTo > 0 the count stops at CountUpTo+1 rows.
func (db *LogService) FindLogs(ctx context.Context, f core.LogFilter) ([]*core.Log, int, error) {
	if s := core.SiteScope(ctx); s > 0 {
		f.SiteID = s // a site's scope wins over any filter asked for
	}
	if s := core.ParseLogSearch(f.Search); s.ByAddressPart() {
		return db.findLogsByAddressPart(ctx, f, s)
	}
	if term := strings.TrimSpace(f.Search); term != "" && !core.SearchIsAddress(term) {
		// Words are matched only in the full-text index: index the logs
		// queued since the last claim first (usually none or a few: rows
		// of the PHP bridge; a larger backlog is left to the next claims,
		// and on SQLite to the substring recheck).
		if _, err := db.indexLogRecipients(ctx, 1000); err != nil {
			return nil, 0, fmt.Errorf("find logs: %w", err)
		}
		if db.dialect == DialectMySQL {
			return db.findLogsBySubject(ctx, f, term)
		}
		if logs, total, ok, err := db.findLogsByFTS(ctx, f, term); err != nil || ok {
			return logs, total, err
		}
	}
	cond, args := db.logConditions(f)
	count := `SELECT COUNT(*) FROM {prefix}mailsvc_logs` + cond
	countArgs := args
	if f.CountUpTo > 0 {
		count = `SELECT COUNT(*) FROM (SELECT 1 FROM {prefix}mailsvc_logs` + cond + ` LIMIT ?) capped`
		countArgs = append(append([]any(nil), args...), f.CountUpTo+1)
	}
	var total int
	if err := db.sqlDB.QueryRowContext(ctx, db.expand(count), countArgs...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count logs: %w", err)
	}
	q := `SELECT ` + logColumns + ` FROM {prefix}mailsvc_logs` + cond + ` ORDER BY created_at DESC, id DESC`
	if f.Limit > 0 || f.Offset > 0 {
		q += " LIMIT ? OFFSET ?"
		args = append(args, pageLimit(f), max(f.Offset, 0))
	}
	logs, err := queryLogs(ctx, db.sqlDB, db.expand(q), args...)
	if err != nil {
		return nil, 0, fmt.Errorf("find logs: %w", err)
	}
	return logs, total, nil
}

// pageLimit is f's LIMIT: f.Limit, or no limit (2^31) when only an offset
// is set.
func pageLimit(f core.LogFilter) int {
	if f.Limit <= 0 {
		return 1 << 31
	}
	return f.Limit
}

// subjectConditions returns the WHERE clause (with its leading " WHERE ")
// and arguments selecting, in the subjects side table s, the logs f
// matches when f searches the subject for term (MySQL only).
func (db *handle) subjectConditions(f core.LogFilter, term string) (string, []any) {
	var where []string
	var args []any
	if words := searchWords(term); len(words) > 0 {
		q := make([]string, len(words))
		for i, w := range words {
			q[i] = "+" + w + "*"
		}
		where = append(where, "MATCH (s.subject) AGAINST (? IN BOOLEAN MODE)")
		args = append(args, strings.Join(q, " "))
	}
	// As in logConditions: a term of indexable words only is answered by
	// the index alone, anything else is rechecked as typed.
	if !onlyIndexableWords(term) {
		where = append(where, "s.subject LIKE ? ESCAPE '!'")
		args = append(args, "%"+likeEscape(term)+"%")
	}
	if !f.CreatedFrom.IsZero() {
		where = append(where, "s.created_at >= ?")
		args = append(args, f.CreatedFrom.UTC().Truncate(time.Microsecond))
	}
	if !f.CreatedBefore.IsZero() {
		where = append(where, "s.created_at < ?")
		args = append(args, f.CreatedBefore.UTC().Truncate(time.Microsecond))
	}
	if f.Status != "" {
		where = append(where, "s.log_id IN (SELECT id FROM {prefix}mailsvc_logs WHERE status = ?)")
		args = append(args, f.Status)
	}
	if f.SiteID > 0 {
		where = append(where, "s.log_id IN (SELECT id FROM {prefix}mailsvc_logs WHERE site_id = ?)")
		args = append(args, f.SiteID)
	}
	return " WHERE " + strings.Join(where, " AND "), args
}

// findLogsBySubject is FindLogs for a subject search on MySQL. The count
// and the page's ids come from the narrow subjects side table alone
// ({prefix}mailsvc_log_subjects: log id, time, subject, FULLTEXT on the
// subject), which stays in the buffer pool where the logs table with its
// bodies does not: sorting a word's hundreds of matches by date reads no
// logs row. Only the page's logs are then read from the logs table.
func (db *handle) findLogsBySubject(ctx context.Context, f core.LogFilter, term string) ([]*core.Log, int, error) {
	if f.CountUpTo > 0 {
		// A common word: its page and capped count among the newest logs.
		need := max(f.CountUpTo+1, max(f.Offset, 0)+max(f.Limit, 0))
		matches, ok, err := db.recentSubjectMatches(ctx, filtersOf(f), term, need)
		if err != nil {
			return nil, 0, fmt.Errorf("find logs by subject: %w", err)
		}
		if ok {
			logs, err := db.pageOf(ctx, f, matches)
			return logs, len(matches), err
		}
		if filtersOf(f) == (core.LogFilter{}) && f.Limit > 0 && onlyIndexableWords(term) {
			return db.findLogsByWord(ctx, f, term, need)
		}
	}
	cond, args := db.subjectConditions(f, term)
	count := `SELECT COUNT(*) FROM {prefix}mailsvc_log_subjects s` + cond
	countArgs := args
	if f.CountUpTo > 0 {
		count = `SELECT COUNT(*) FROM (SELECT 1 FROM {prefix}mailsvc_log_subjects s` + cond + ` LIMIT ?) capped`
		countArgs = append(append([]any(nil), args...), f.CountUpTo+1)
	}
	var total int
	if err := db.sqlDB.QueryRowContext(ctx, db.expand(count), countArgs...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count logs: %w", err)
	}
	page := `SELECT s.log_id FROM {prefix}mailsvc_log_subjects s` + cond + ` ORDER BY s.created_at DESC, s.log_id DESC`
	if f.Limit > 0 || f.Offset > 0 {
		page += " LIMIT ? OFFSET ?"
		args = append(args, pageLimit(f), max(f.Offset, 0))
	}
	// Without a page the derived table is merged into a semi-join; with
	// one (LIMIT) it is read first, then its few logs by primary key.
	q := `SELECT ` + logColumns + ` FROM {prefix}mailsvc_logs
		WHERE id IN (SELECT log_id FROM (` + page + `) page) ORDER BY created_at DESC, id DESC`
	logs, err := queryLogs(ctx, db.sqlDB, db.expand(q), args...)
	if err != nil {
		return nil, 0, fmt.Errorf("find logs: %w", err)
	}
	return logs, total, nil
}

// findLogsByWord is findLogsBySubject for a term of indexable words
// without filters, counted up to need: the count and the page come from
// one reading of the full-text index, its matches ordered by time and
// cut at need. The index maps a match to its subjects row by its own
// document id, not the log id, so any order of the matches (by log id as
// well as by time) reads each match's row: reading them in list order
// costs no more, and the page needs no check of logs created out of id
// order.
func (db *handle) findLogsByWord(ctx context.Context, f core.LogFilter, term string, need int) ([]*core.Log, int, error) {
	cond, args := db.subjectConditions(f, term)
	matches, err := db.queryLogAts(ctx, `SELECT s.log_id, s.created_at FROM {prefix}mailsvc_log_subjects s`+cond+
		` ORDER BY s.created_at DESC, s.log_id DESC`, need, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("find logs by subject: %w", err)
	}
	logs, err := db.pageOf(ctx, f, matches)
	return logs, len(matches), err
}

// ftsQuery returns the FTS5 query of term's words (each the start of a
// word), or "" when term has none (SQLite).
func ftsQuery(term string) string {
	words := searchWords(term)
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = `"` + w + `"*`
	}
	return strings.Join(q, " ")
}

// findLogsByFTS is FindLogs on SQLite for a term of indexable words
// without filters, counted up to a cap, when every log is indexed (ok
// false otherwise: the caller answers as before). FTS5 hands its matches
// over in rowid (log id) order and stops at a LIMIT, so the capped count
// and the page's ids cost the same for a word in every subject as for a
// rare one, where ordering by time reads every match; the page is then
// put in list order (inListOrder), each log created out of id order
// checked against the index by its rowid.
func (db *handle) findLogsByFTS(ctx context.Context, f core.LogFilter, term string) ([]*core.Log, int, bool, error) {
	q := ftsQuery(term)
	if db.dialect != DialectSQLite || f.CountUpTo <= 0 || f.Limit <= 0 || q == "" ||
		filtersOf(f) != (core.LogFilter{}) || !onlyIndexableWords(term) {
		return nil, 0, false, nil
	}
	var one int
	err := db.sqlDB.QueryRowContext(ctx, db.expand(`SELECT 1 FROM {prefix}mailsvc_logs WHERE recipients_indexed = 0 LIMIT 1`)).Scan(&one)
	if err == nil {
		return nil, 0, false, nil // logs not indexed yet: the LIKE recheck finds them
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, 0, false, fmt.Errorf("read unindexed logs: %w", err)
	}
	// One reading of the index gives the capped count and the page's ids.
	need := max(f.CountUpTo+1, max(f.Offset, 0)+f.Limit)
	ids, err := db.queryIDs(ctx, db.sqlDB, `SELECT rowid FROM {prefix}mailsvc_logs_fts WHERE {prefix}mailsvc_logs_fts MATCH ?
		ORDER BY rowid DESC LIMIT ?`, q, need)
	if err != nil {
		return nil, 0, false, fmt.Errorf("find logs by subject: %w", err)
	}
	total, pageEnd := len(ids), max(f.Offset, 0)+f.Limit
	ids = ids[:min(pageEnd, len(ids))]
	matches, err := db.inListOrder(ctx, ids, pageEnd, `EXISTS (SELECT 1 FROM {prefix}mailsvc_logs_fts
		WHERE {prefix}mailsvc_logs_fts MATCH ? AND rowid = {prefix}mailsvc_logs.id)`, []any{q})
	if err != nil {
		return nil, 0, false, fmt.Errorf("find logs by subject: %w", err)
	}
	logs, err := db.pageOf(ctx, f, matches)
	return logs, total, true, err
}
