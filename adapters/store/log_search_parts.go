package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// How far a search by address part resolves its matches up front: up to
// narrowAddresses addresses from the dictionary, then up to narrowLogs of
// their logs from the addresses table, which the filters then read by
// primary key. A broader term (a large domain, a common fragment) is
// matched the other way round: the logs are read newest first through the
// filters' own index and each is checked against its recipients rows
// (EXISTS), stopping as soon as the page and the capped count are found.
const (
	narrowAddresses = 1000
	narrowLogs      = 3000
)

// SetSearchNarrowLimits replaces, for this DB, how many addresses and
// logs a search by address part resolves up front before it reads the
// logs newest first instead (narrowAddresses, narrowLogs). Tests use it to
// run both ways over a few rows; call it before any search.
func (s *SearchIndexService) SetSearchNarrowLimits(addresses, logs int) {
	s.searchLimits = &[2]int{addresses, logs}
}

// narrowLimits returns the addresses and logs limits in force.
func (db *handle) narrowLimits() (int, int) {
	if db.searchLimits != nil {
		return db.searchLimits[0], db.searchLimits[1]
	}
	return narrowAddresses, narrowLogs
}

// logAt is a matching log's id and creation time (the list's order).
type logAt struct {
	ID int64
	At time.Time
}

// findLogsByAddressPart is FindLogs for a term that searches addresses by
// domain, prefix or fragment (core.ParseLogSearch), and the subject words
// when the term has them: each side yields its matches newest first (at
// most the page's end or the capped count), and the two are merged.
func (db *LogService) findLogsByAddressPart(ctx context.Context, f core.LogFilter, s core.LogSearch) ([]*core.Log, int, error) {
	// Logs queued by the bridge since the last claim enter the addresses
	// table (and the dictionary) first, as for a word search.
	if _, err := db.indexLogRecipients(ctx, 1000); err != nil {
		return nil, 0, fmt.Errorf("find logs: %w", err)
	}
	need := 0 // every match
	if f.CountUpTo > 0 {
		need = max(f.CountUpTo+1, max(f.Offset, 0)+max(f.Limit, 0))
	}
	filters := filtersOf(f)
	where, fargs := db.logConditions(filters)
	filtered := where != ""
	counted := need // the dictionary side's count serves a list without filters only
	if filtered {
		counted = 0
	}
	cond, args, atLeast, err := db.addressPartCondition(ctx, s, counted)
	if err != nil {
		return nil, 0, fmt.Errorf("find logs: %w", err)
	}
	if cond == noAddress && s.Words != "" {
		// No recipient matches: the subject words are the whole answer.
		if db.dialect == DialectMySQL {
			return db.findLogsBySubject(ctx, f, s.Words)
		}
		if logs, total, ok, err := db.findLogsByFTS(ctx, f, s.Words); err != nil || ok {
			return logs, total, err
		}
	}
	// A broad term without filters whose matches the dictionary side has
	// already counted past need: the newest-first reading stops at the
	// page's end, not at the capped count.
	limit, capped := need, false
	if pageEnd := max(f.Offset, 0) + f.Limit; !filtered && need > 0 && atLeast >= need && f.Limit > 0 && pageEnd < need {
		limit, capped = pageEnd, true
	}
	if !filtered {
		where = " WHERE " + cond
	} else {
		where += " AND " + cond
	}
	var matches []logAt
	done := false
	if filtered && need > 0 && !strings.HasPrefix(cond, "id IN") && cond != noAddress {
		// A broad term with filters: the newest logs the filters select
		// are checked first (recentMatches).
		matches, done, err = db.recentAddressMatches(ctx, filters, s, limit)
		if err != nil {
			return nil, 0, fmt.Errorf("find logs by address: %w", err)
		}
	}
	switch {
	case done:
	case capped && !strings.HasPrefix(cond, "id IN"):
		// Only the page is needed, and cond checks each log: the page is
		// found from the newest recipients rows (by log id), then checked
		// against the logs' order.
		matches, err = db.newestAddressMatches(ctx, s, limit, cond, args)
	default:
		q := `SELECT id, created_at FROM {prefix}mailsvc_logs` + where + ` ORDER BY created_at DESC, id DESC`
		matches, err = db.queryLogAts(ctx, q, limit, append(fargs, args...)...)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("find logs by address: %w", err)
	}
	if s.Words != "" {
		words, err := db.subjectMatches(ctx, f, s.Words, limit)
		if err != nil {
			return nil, 0, fmt.Errorf("find logs by subject: %w", err)
		}
		matches = mergeLogAts(matches, words)
		if need > 0 && len(matches) > need {
			// Past need a side may have been cut: the count stops there.
			matches = matches[:need]
		}
	}
	logs, err := db.pageOf(ctx, f, matches)
	if err != nil {
		return nil, 0, err
	}
	if capped {
		return logs, need, nil
	}
	return logs, len(matches), nil
}

// filtersOf returns f's filters without its search term.
func filtersOf(f core.LogFilter) core.LogFilter {
	return core.LogFilter{SiteID: f.SiteID, Status: f.Status, CreatedFrom: f.CreatedFrom, CreatedBefore: f.CreatedBefore}
}

// pageOf reads the logs of f's page (Offset, Limit) of matches, which are
// in list order.
func (db *handle) pageOf(ctx context.Context, f core.LogFilter, matches []logAt) ([]*core.Log, error) {
	from := min(max(f.Offset, 0), len(matches))
	to := len(matches)
	if f.Limit > 0 {
		to = min(from+f.Limit, to)
	}
	page := matches[from:to]
	if len(page) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(page))
	for i, m := range page {
		ids[i] = m.ID
	}
	in, inArgs := inList(ids)
	logs, err := queryLogs(ctx, db.sqlDB, db.expand(`SELECT `+logColumns+` FROM {prefix}mailsvc_logs
		WHERE id IN (`+in+`) ORDER BY created_at DESC, id DESC`), inArgs...)
	if err != nil {
		return nil, fmt.Errorf("find logs: %w", err)
	}
	return logs, nil
}

// queryLogAts runs q (ids and creation times, in list order) with a LIMIT
// of need when need > 0.
func (db *handle) queryLogAts(ctx context.Context, q string, need int, args ...any) ([]logAt, error) {
	if need > 0 {
		q += " LIMIT ?"
		args = append(args, need)
	}
	var out []logAt
	err := EachRow(ctx, db.sqlDB, "read matching logs", db.expand(q), args, func(r RowScanner) error {
		var m logAt
		if err := r.Scan(&m.ID, &m.At); err != nil {
			return err
		}
		m.At = m.At.UTC()
		out = append(out, m)
		return nil
	})
	return out, err
}

// subjectMatches returns the logs f's filters and the subject words of
// term match, newest first, at most need (0: all).
func (db *handle) subjectMatches(ctx context.Context, f core.LogFilter, term string, need int) ([]logAt, error) {
	if db.dialect == DialectMySQL {
		if got, ok, err := db.recentSubjectMatches(ctx, filtersOf(f), term, need); err != nil || ok {
			return got, err
		}
		cond, args := db.subjectConditions(f, term)
		return db.queryLogAts(ctx, `SELECT s.log_id, s.created_at FROM {prefix}mailsvc_log_subjects s`+cond+
			` ORDER BY s.created_at DESC, s.log_id DESC`, need, args...)
	}
	wf := f
	wf.Search = term
	cond, args := db.logConditions(wf)
	return db.queryLogAts(ctx, `SELECT id, created_at FROM {prefix}mailsvc_logs`+cond+` ORDER BY created_at DESC, id DESC`, need, args...)
}

// mergeLogAts merges two lists in list order (newest first), each match
// once.
func mergeLogAts(a, b []logAt) []logAt {
	out := make([]logAt, 0, len(a)+len(b))
	seen := make(map[int64]bool, len(a)+len(b))
	for _, m := range append(a, b...) {
		if !seen[m.ID] {
			seen[m.ID] = true
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(x, y logAt) int {
		if c := y.At.Compare(x.At); c != 0 {
			return c
		}
		switch {
		case x.ID > y.ID:
			return -1
		case x.ID < y.ID:
			return 1
		}
		return 0
	})
	return out
}

// noAddress is addressPartCondition's condition when no recipient
// matches.
const noAddress = "1 = 0"

// addressPartCondition returns a condition on the logs table selecting
// the logs with a recipient s matches by domain, prefix or fragment: the
// ids themselves when the dictionary narrows them down to a few, else a
// check of each log's recipients rows. atLeast is how many logs match
// (without filters) as far as the dictionary side counted them: exact for
// the ids, else at least that many (counted up to need).
func (db *handle) addressPartCondition(ctx context.Context, s core.LogSearch, need int) (cond string, args []any, atLeast int, err error) {
	_, maxLogs := db.narrowLimits()
	emails, narrow, err := db.dictionaryAddresses(ctx, s)
	if err != nil {
		return "", nil, 0, err
	}
	if len(emails) == 0 {
		return noAddress, nil, 0, nil
	}
	in, eargs := stringList(emails)
	if narrow {
		ids, err := db.queryIDs(ctx, db.sqlDB, `SELECT DISTINCT log_id FROM {prefix}mailsvc_log_recipients
			WHERE email IN (`+in+`) AND kind IN `+searchedKinds+` LIMIT ?`, append(eargs, maxLogs+1)...)
		if err != nil {
			return "", nil, 0, fmt.Errorf("read the addresses' logs: %w", err)
		}
		if len(ids) <= maxLogs {
			if len(ids) == 0 {
				return noAddress, nil, 0, nil
			}
			in, args := inList(ids)
			return "id IN (" + in + ")", args, len(ids), nil
		}
		atLeast = len(ids)
	} else if need > 0 {
		// The first addresses' logs, up to need.
		if err := db.sqlDB.QueryRowContext(ctx, db.expand(`SELECT COUNT(*) FROM (SELECT DISTINCT log_id
			FROM {prefix}mailsvc_log_recipients WHERE email IN (`+in+`) AND kind IN `+searchedKinds+` LIMIT ?) c`),
			append(eargs, need)...).Scan(&atLeast); err != nil {
			return "", nil, 0, fmt.Errorf("count the addresses' logs: %w", err)
		}
	}
	likes, args := recipientPartLikes(s)
	// A scalar subquery rather than EXISTS: MariaDB turns an EXISTS into
	// a semi-join that reads every matching recipients row first and sorts
	// them all; this one is checked log by log, in the list's order, and
	// the reading stops at the LIMIT.
	return `(SELECT 1 FROM {prefix}mailsvc_log_recipients r WHERE r.log_id = {prefix}mailsvc_logs.id
		AND r.kind IN ` + searchedKinds + ` AND ` + likes + ` LIMIT 1) = 1`, args, atLeast, nil
}

// recipientPartLikes returns the condition on a recipients row r (its
// email) that s matches by domain, prefix or fragment, and its arguments.
func recipientPartLikes(s core.LogSearch) (string, []any) {
	var likes []string
	var args []any
	like := func(p string) {
		likes = append(likes, "r.email LIKE ? ESCAPE '!'")
		args = append(args, p)
	}
	if s.Domain != "" {
		like("%@" + likeEscape(s.Domain))
		like("%@%." + likeEscape(s.Domain))
	}
	if s.Prefix != "" {
		like(likeEscape(s.Prefix) + "%")
	}
	if s.Fragment != "" {
		like("%" + likeEscape(s.Fragment) + "%@%")
	}
	if len(likes) == 0 {
		return "1 = 0", nil
	}
	return "(" + strings.Join(likes, " OR ") + ")", args
}

// newestAddressMatches returns the first n logs, in list order, that s
// matches by address part, without filters; cond and args are
// addressPartCondition's check of one log. Rather than checking the logs
// newest first one by one (slow when the matches are rare among the
// newest logs), it reads the recipients rows by log id from the highest,
// the matching ones only, until n logs, which are the matches with the
// highest ids, then puts them in list order (inListOrder).
func (db *handle) newestAddressMatches(ctx context.Context, s core.LogSearch, n int, cond string, args []any) ([]logAt, error) {
	likes, largs := recipientPartLikes(s)
	force := ""
	if db.dialect == DialectMySQL {
		force = " FORCE INDEX (PRIMARY)"
	}
	batch := max(4*n, 100)
	var ids []int64
	seen := make(map[int64]bool, n)
	for cursor := int64(-1); len(ids) < n; {
		q := `SELECT r.log_id FROM {prefix}mailsvc_log_recipients r` + force + ` WHERE r.kind IN ` + searchedKinds + ` AND ` + likes
		qargs := slices.Clone(largs)
		if cursor >= 0 {
			q += ` AND r.log_id < ?`
			qargs = append(qargs, cursor)
		}
		got, err := db.queryIDs(ctx, db.sqlDB, q+` ORDER BY r.log_id DESC LIMIT ?`, append(qargs, batch)...)
		if err != nil {
			return nil, fmt.Errorf("read the newest matching recipients: %w", err)
		}
		for _, id := range got {
			if !seen[id] && len(ids) < n {
				seen[id] = true
				ids = append(ids, id)
			}
		}
		if len(got) < batch {
			break
		}
		cursor = got[len(got)-1]
	}
	return db.inListOrder(ctx, ids, n, cond, args)
}

// inListOrder returns the first n, in list order, of the matches of a
// condition on a log (cond and args) given ids, the matches with the
// highest ids, highest first (all of them when fewer than n). Ids follow
// the creation order but not strictly (imported logs, concurrent
// writers): a match outside ids comes before the n-th of ids, at T, only
// if it was created after T with an id below the lowest of ids, so those
// few logs (an index range read without the check but for them) are
// looked up too, and the first n of both are the answer.
func (db *handle) inListOrder(ctx context.Context, ids []int64, n int, cond string, args []any) ([]logAt, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	in, inArgs := inList(ids)
	found, err := db.queryLogAts(ctx, `SELECT id, created_at FROM {prefix}mailsvc_logs WHERE id IN (`+in+`)`, 0, inArgs...)
	if err != nil {
		return nil, fmt.Errorf("read the matches' times: %w", err)
	}
	found = mergeLogAts(found, nil)
	if len(ids) < n || len(found) == 0 {
		// Every match was read.
		return found, nil
	}
	last, idLow := found[len(found)-1].At, slices.Min(ids)
	q := `SELECT id, created_at FROM {prefix}mailsvc_logs WHERE created_at > ? AND id < ? AND ` + cond + ` ORDER BY created_at DESC, id DESC`
	earlier, err := db.queryLogAts(ctx, q, n, append([]any{last, idLow}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("read the matches created out of id order: %w", err)
	}
	found = mergeLogAts(found, earlier)
	return found[:min(n, len(found))], nil
}

// dictionaryAddresses returns the dictionary's addresses s matches, and
// narrow false when there are more than narrowAddresses (then only the
// first of them, by part, are returned).
func (db *handle) dictionaryAddresses(ctx context.Context, s core.LogSearch) ([]string, bool, error) {
	maxAddresses, _ := db.narrowLimits()
	var all []string
	add := func(q string, args ...any) error {
		got, err := queryStrings(ctx, db.sqlDB, db.expand(q+" LIMIT ?"), append(args, maxAddresses+1)...)
		if err != nil {
			return fmt.Errorf("read search addresses: %w", err)
		}
		all = append(all, got...)
		return nil
	}
	if s.Domain != "" {
		rev := likeEscape(reverseString(s.Domain))
		if err := add(`SELECT email FROM {prefix}mailsvc_search_addresses WHERE domain_rev = ? OR domain_rev LIKE ? ESCAPE '!'`,
			reverseString(s.Domain), rev+".%"); err != nil {
			return nil, false, err
		}
	}
	if s.Prefix != "" {
		if err := add(`SELECT email FROM {prefix}mailsvc_search_addresses WHERE email LIKE ? ESCAPE '!'`, likeEscape(s.Prefix)+"%"); err != nil {
			return nil, false, err
		}
	}
	if s.Fragment != "" && len(all) <= maxAddresses {
		q, args, err := db.fragmentQuery(ctx, s.Fragment)
		if err != nil {
			return nil, false, err
		}
		if err := add(q, args...); err != nil {
			return nil, false, err
		}
		// And the few addresses whose pieces are not written yet.
		if err := add(`SELECT email FROM {prefix}mailsvc_search_addresses WHERE grams_done = 0 AND email LIKE ? ESCAPE '!'`,
			"%"+likeEscape(s.Fragment)+"%@%"); err != nil {
			return nil, false, err
		}
	}
	if len(all) <= maxAddresses {
		tail, err := db.searchTail(ctx, s, maxAddresses+1)
		if err != nil {
			return nil, false, err
		}
		all = append(all, tail...)
	}
	slices.Sort(all)
	all = slices.Compact(all)
	return all, len(all) <= maxAddresses, nil
}

// searchTail returns up to limit addresses s matches among the
// recipients of the logs the dictionary has not entered yet: those past
// its progress (and past the logs from before it, which a partial search
// leaves out), read from the addresses table by log id.
func (db *handle) searchTail(ctx context.Context, s core.LogSearch, limit int) ([]string, error) {
	var conds []string
	var args []any
	if s.Domain != "" {
		d := likeEscape(s.Domain)
		conds = append(conds, `email LIKE ? ESCAPE '!' OR email LIKE ? ESCAPE '!'`)
		args = append(args, "%@"+d, "%@%."+d)
	}
	if s.Prefix != "" {
		conds = append(conds, `email LIKE ? ESCAPE '!'`)
		args = append(args, likeEscape(s.Prefix)+"%")
	}
	if s.Fragment != "" {
		conds = append(conds, `email LIKE ? ESCAPE '!'`)
		args = append(args, "%"+likeEscape(s.Fragment)+"%@%")
	}
	if len(conds) == 0 {
		return nil, nil
	}
	var floor int64
	err := db.sqlDB.QueryRowContext(ctx, db.expand(`SELECT CASE WHEN done_up_to > target THEN done_up_to ELSE target END
		FROM {prefix}mailsvc_search_progress WHERE name = ?`), progressAddresses).Scan(&floor)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read search progress: %w", err)
	}
	got, err := queryStrings(ctx, db.sqlDB, db.expand(`SELECT DISTINCT email FROM {prefix}mailsvc_log_recipients
		WHERE log_id > ? AND kind IN `+searchedKinds+` AND (`+strings.Join(conds, " OR ")+`) LIMIT ?`),
		append(append([]any{floor}, args...), limit)...)
	if err != nil {
		return nil, fmt.Errorf("read the addresses of logs not in the dictionary yet: %w", err)
	}
	return got, nil
}

// gramSample is how far fragmentQuery counts each piece's addresses to
// find the rarest.
const gramSample = 2000

// fragmentQuery returns the query of the dictionary's addresses whose
// local part contains fragment among those whose pieces are written: the
// addresses holding up to four of its pieces (its first, its last and two
// between), rechecked with LIKE. The rarest piece (each counted up to
// gramSample; of equals, the last) is read first and the others are looked up for each of its
// addresses (on MySQL in that order, STRAIGHT_JOIN), so that a common
// piece ("use" of every user…@) is never read whole.
func (db *handle) fragmentQuery(ctx context.Context, fragment string) (string, []any, error) {
	gs := grams(fragment)
	if len(gs) > 4 {
		gs = []string{gs[0], gs[len(gs)/3], gs[2*len(gs)/3], gs[len(gs)-1]}
	}
	if len(gs) > 1 {
		counts := make(map[string]int, len(gs))
		for _, g := range gs {
			var n int
			if err := db.sqlDB.QueryRowContext(ctx, db.expand(`SELECT COUNT(*) FROM (SELECT 1 FROM {prefix}mailsvc_search_grams
				WHERE gram = ? LIMIT ?) c`), g, gramSample).Scan(&n); err != nil {
				return "", nil, fmt.Errorf("count search pieces: %w", err)
			}
			counts[g] = n
		}
		// Ties (pieces past the sample) go to the later piece: the start
		// of a local part ("use" of user…, "inf" of info…) is the
		// commonest.
		slices.Reverse(gs)
		slices.SortStableFunc(gs, func(a, b string) int { return counts[a] - counts[b] })
	}
	var b strings.Builder
	b.WriteString(`SELECT `)
	if db.dialect == DialectMySQL {
		b.WriteString(`STRAIGHT_JOIN `)
	}
	b.WriteString(`g0.email FROM {prefix}mailsvc_search_grams g0`)
	var args []any
	for i := 1; i < len(gs); i++ {
		fmt.Fprintf(&b, ` JOIN {prefix}mailsvc_search_grams g%d ON g%d.gram = ? AND g%d.email = g0.email`, i, i, i)
		args = append(args, gs[i])
	}
	b.WriteString(` WHERE g0.gram = ? AND g0.email LIKE ? ESCAPE '!'`)
	args = append(args, gs[0], "%"+likeEscape(fragment)+"%@%")
	return b.String(), args, nil
}
