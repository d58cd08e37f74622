package migration

import (
	"context"
	"fmt"
	"time"
)

// clock is how a log table's date column holds a time.
type clock int

const (
	// siteLocal: DATETIME text in the site's time zone (current_time('mysql')).
	siteLocal clock = iota
	// utcText: DATETIME text in UTC.
	utcText
	// unixTime: a TIMESTAMP compared through FROM_UNIXTIME.
	unixTime
)

// logTable is the LogSource of a plugin that logs into one table of its
// own: whether the table is there, its fast row count, the exact count
// since a time by the column that dates a row, and its rows after a
// position, each converted by entry. A plugin's source describes its
// table in one.
type logTable struct {
	table string
	// missing is Available's reason when the table does not exist.
	missing string
	// since is the condition of CountLogs with a time ("created_at >= ?"),
	// whose one argument is the time as clock holds it.
	since string
	clock clock
	// columns, unixColumns and key are the RowQuery of ReadLogs.
	columns, unixColumns []string
	key                  string
	// entry converts one row; loc is the site's time zone when clock is
	// siteLocal, else nil.
	entry func(site Site, r Row, loc *time.Location) LogEntry
}

// Available is true when the table exists.
func (l logTable) Available(ctx context.Context, site Site) (bool, string, error) {
	ok, err := site.HasTable(ctx, l.table)
	if err != nil || ok {
		return ok, "", err
	}
	return false, l.missing, nil
}

// EstimateLogs is the table's fast row count.
func (l logTable) EstimateLogs(ctx context.Context, site Site) (int64, error) {
	return site.EstimateRows(ctx, l.table)
}

// CountLogs counts the rows, since a time when given.
func (l logTable) CountLogs(ctx context.Context, site Site, since time.Time) (int64, error) {
	if since.IsZero() {
		return site.CountRows(ctx, l.table, "")
	}
	var arg any
	switch l.clock {
	case unixTime:
		arg = since.Unix()
	case utcText:
		arg = since.UTC().Format(time.DateTime)
	default:
		loc, err := site.Location(ctx)
		if err != nil {
			return 0, err
		}
		arg = since.In(loc).Format(time.DateTime)
	}
	return site.CountRows(ctx, l.table, l.since, arg)
}

// ReadLogs reads rows after a key value and converts them.
func (l logTable) ReadLogs(ctx context.Context, site Site, after int64, limit int) ([]LogEntry, error) {
	var loc *time.Location
	if l.clock == siteLocal {
		var err error
		if loc, err = site.Location(ctx); err != nil {
			return nil, err
		}
	}
	rows, err := site.Rows(ctx, RowQuery{Table: l.table, Columns: l.columns, UnixColumns: l.unixColumns,
		Key: l.key, After: after, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", l.table, err)
	}
	out := make([]LogEntry, 0, len(rows))
	for _, r := range rows {
		out = append(out, l.entry(site, r, loc))
	}
	return out, nil
}

// skipUnreadable marks an entry that cannot be imported: one without a
// readable recipient, else one without a readable time.
func (e *LogEntry) skipUnreadable() {
	switch {
	case len(e.Message.Recipients()) == 0:
		e.Skip, e.SkipReason = true, "no readable recipient"
	case e.Time.IsZero():
		e.Skip, e.SkipReason = true, "no readable time"
	}
}
