package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// recentWindow is how many of the newest logs a search with a capped
// count reads first, through the filters' own index, checking each one
// against a side table: a term that matches many logs (a common subject
// word, a large domain with a status) finds its page and its capped count
// there, without its index reading every match. A term that does not is
// answered by its index as before.
const recentWindow = 3000

// recentMatches returns, newest first, up to need of the newest
// recentWindow logs that filters (status, site, dates) select and that
// match: join joins a side table to the logs as l, and check (with args)
// tests its row. ok is true when need matches were found: the first need
// of the whole list. With ok false (fewer, or a list shorter than the
// window) the caller asks its index. A fifth of the window is read
// first: when its matches are too few for the whole window to hold need
// of them, the rest is not read.
func (db *handle) recentMatches(ctx context.Context, filters core.LogFilter, join, check string, args []any, need int) ([]logAt, bool, error) {
	full := recentWindow
	if db.searchWindow != nil {
		full = *db.searchWindow
	}
	if need <= 0 || need > full {
		return nil, false, nil
	}
	where, fargs := db.logConditions(filters)
	window := `SELECT id, created_at FROM {prefix}mailsvc_logs` + where + ` ORDER BY created_at DESC, id DESC LIMIT ?`
	// The window is read first, in its order (STRAIGHT_JOIN on MySQL; a
	// CROSS JOIN keeps the order on SQLite), then each of its logs is
	// looked up in the side table by its log id.
	straight := " CROSS JOIN "
	if db.dialect == DialectMySQL {
		straight = " STRAIGHT_JOIN "
	}
	q := `SELECT DISTINCT l.id, l.created_at FROM (` + window + `) l` + straight + join + ` WHERE ` + check +
		` ORDER BY l.created_at DESC, l.id DESC`
	for _, size := range []int{max(full/5, 1), full} {
		wargs := append(slices.Clone(fargs), size)
		got, err := db.queryLogAts(ctx, q, need, append(wargs, args...)...)
		if err != nil {
			return nil, false, fmt.Errorf("read the newest matches: %w", err)
		}
		if len(got) >= need {
			return got, true, nil
		}
		if len(got)*full/size < need {
			break
		}
	}
	return nil, false, nil
}

// SetSearchRecentWindow replaces, for this DB, how many of the newest
// logs a search with a capped count checks first (recentWindow); 0 turns
// that reading off. Tests use it to run a search both ways over a few
// rows; call it before any search.
func (s *SearchIndexService) SetSearchRecentWindow(logs int) {
	s.searchWindow = &logs
}

// recentAddressMatches is recentMatches for a search by address part s:
// a log matches when one of its recipients rows does.
func (db *handle) recentAddressMatches(ctx context.Context, filters core.LogFilter, s core.LogSearch, need int) ([]logAt, bool, error) {
	likes, args := recipientPartLikes(s)
	return db.recentMatches(ctx, filters, `{prefix}mailsvc_log_recipients r`,
		`r.log_id = l.id AND r.kind IN `+searchedKinds+` AND `+likes, args, need)
}

// recentSubjectMatches is recentMatches for the subject words of term on
// MySQL, through the subjects side table (subjectWordCheck).
func (db *handle) recentSubjectMatches(ctx context.Context, filters core.LogFilter, term string, need int) ([]logAt, bool, error) {
	if db.dialect != DialectMySQL {
		return nil, false, nil
	}
	check, args := subjectWordCheck(term)
	return db.recentMatches(ctx, filters, `{prefix}mailsvc_log_subjects s`, "s.log_id = l.id AND "+check, args, need)
}

// subjectWordCheck returns the condition on one subjects row s (MySQL)
// that its subject matches term as the full-text search does, checked
// row by row: each word at the start of a word of the subject (a regular
// expression, case-insensitive as the column's collation), and the term
// as typed when the index alone does not answer it (as
// subjectConditions).
func subjectWordCheck(term string) (string, []any) {
	var checks []string
	var args []any
	for _, w := range searchWords(term) {
		checks = append(checks, "s.subject REGEXP ?")
		args = append(args, "(^|[^[:alnum:]_])"+w)
	}
	if !onlyIndexableWords(term) {
		checks = append(checks, "s.subject LIKE ? ESCAPE '!'")
		args = append(args, "%"+likeEscape(term)+"%")
	}
	if len(checks) == 0 {
		return "1 = 1", nil
	}
	return strings.Join(checks, " AND "), args
}
