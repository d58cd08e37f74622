package store

import (
	"context"
	"fmt"
	"sort"
	"time"
	"unicode/utf8"

	"github.com/mailsvc/mailsvc/core"
)

var _ core.AlertHistoryStore = (*AlertHistoryService)(nil)

// RecordAlert implements core.AlertHistoryStore.
func (db *AlertHistoryService) RecordAlert(ctx context.Context, a core.Alert) error {
	at := a.At.UTC().Truncate(time.Microsecond)
	if a.At.IsZero() {
		at = now()
	}
	_, err := db.sqlDB.ExecContext(ctx, db.expand(`INSERT INTO {prefix}mailsvc_alert_history
		(event, connection_id, connection_name, title, raised_at) VALUES (?, ?, ?, ?, ?)`),
		clip(a.Event, 64), max(a.ConnectionID, 0), clip(a.ConnectionName, 191), clip(a.Title, 255), at)
	if err != nil {
		return fmt.Errorf("record alert %s: %w", a.Event, err)
	}
	return nil
}

// maxAlertRows bounds the alerts CountAlerts reads (folding keeps them
// few: at most one per event and connection per fold window).
const maxAlertRows = 100000

// CountAlerts implements core.AlertHistoryStore. It reads the rows and
// counts them here: SQLite types an aggregate of a DATETIME column as
// text, a bare column as a time.
func (db *AlertHistoryService) CountAlerts(ctx context.Context, from, to time.Time) ([]core.AlertCount, error) {
	type key struct {
		event string
		conn  int64
	}
	byKey := map[key]*core.AlertCount{}
	var out []*core.AlertCount
	err := EachRow(ctx, db.sqlDB, "count alerts", db.expand(`SELECT event, connection_id, connection_name, raised_at
		FROM {prefix}mailsvc_alert_history WHERE raised_at >= ? AND raised_at < ?
		ORDER BY raised_at, id LIMIT ?`), []any{from.UTC(), to.UTC(), maxAlertRows}, func(r RowScanner) error {
		var k key
		var name string
		var at time.Time
		if err := r.Scan(&k.event, &k.conn, &name, &at); err != nil {
			return fmt.Errorf("scan: %w", err)
		}
		c := byKey[k]
		if c == nil {
			c = &core.AlertCount{Event: k.event, ConnectionID: k.conn}
			byKey[k] = c
			out = append(out, c)
		}
		c.Count++
		c.Last = at.UTC()
		if name != "" {
			c.ConnectionName = name
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Count > out[j].Count })
	res := make([]core.AlertCount, len(out))
	for i, c := range out {
		res[i] = *c
	}
	return res, nil
}

// PruneAlerts implements core.AlertHistoryStore.
func (db *AlertHistoryService) PruneAlerts(ctx context.Context, before time.Time) (int, error) {
	res, err := db.sqlDB.ExecContext(ctx, db.expand(`DELETE FROM {prefix}mailsvc_alert_history WHERE raised_at < ?`), before.UTC())
	if err != nil {
		return 0, fmt.Errorf("prune alerts: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// clip cuts s to at most n characters.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}
