package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/app/pro/events"
	"github.com/mailsvc/mailsvc/core"
)

// RememberWebhookEvent records that the provider's event (or request)
// id was seen, until expires, and reports whether it is new: false means
// the id is already remembered (a replay). Ids whose time has passed are
// forgotten first, so the table only holds the replay window. Replicas on
// one database agree, since the primary key (provider, id) decides.
func (svc *EventService) RememberWebhookEvent(ctx context.Context, provider, id string, expires time.Time) (bool, error) {
	db := svc.db
	if provider == "" || id == "" {
		return false, fmt.Errorf("remember webhook event: empty provider or id")
	}
	if len(id) > 191 {
		id = id[:191]
	}
	t := now()
	if _, err := db.base.SQL().ExecContext(ctx, db.base.Expand(`DELETE FROM {prefix}mailsvc_webhook_seen WHERE expires_at < ?`), t); err != nil {
		return false, fmt.Errorf("forget expired webhook events: %w", err)
	}
	ins := `INSERT IGNORE INTO {prefix}mailsvc_webhook_seen (provider, event_id, expires_at) VALUES (?, ?, ?)`
	if db.base.Dialect() == store.DialectSQLite {
		ins = `INSERT OR IGNORE INTO {prefix}mailsvc_webhook_seen (provider, event_id, expires_at) VALUES (?, ?, ?)`
	}
	res, err := db.base.SQL().ExecContext(ctx, db.base.Expand(ins), provider, id, expires.UTC())
	if err != nil {
		return false, fmt.Errorf("remember webhook event: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// FindLogIDsByProviderMessageIDs returns, for each of ids that a log
// carries as its provider message id (or as a further one: a part of a
// message sent in several calls), that log's id (the newest log when
// several carry it). Ids no log carries are absent from the map.
func (svc *EventService) FindLogIDsByProviderMessageIDs(ctx context.Context, ids []string) (map[string]int64, error) {
	db := svc.db
	out := map[string]int64{}
	var want []any
	for _, id := range ids {
		if id != "" {
			want = append(want, id)
		}
	}
	// The logs' own provider message ids first, then, for the ids left,
	// their further ones.
	for _, query := range []string{
		`SELECT provider_message_id, id FROM {prefix}mailsvc_logs
		WHERE provider_message_id IN (%s) ORDER BY id`,
		`SELECT provider_message_id, log_id FROM {prefix}mailsvc_log_provider_ids
		WHERE provider_message_id IN (%s) ORDER BY log_id`,
	} {
		if len(want) == 0 {
			break
		}
		if err := db.logIDsByProviderID(ctx, out, query, want); err != nil {
			return nil, err
		}
		want = slices.DeleteFunc(want, func(id any) bool {
			_, found := out[id.(string)]
			return found
		})
	}
	return out, nil
}

// logIDsByProviderID runs query (its %s the placeholders of want) and
// adds its (provider message id, log id) rows to out, a later row
// replacing an earlier one.
func (db *DB) logIDsByProviderID(ctx context.Context, out map[string]int64, query string, want []any) error {
	in := strings.TrimSuffix(strings.Repeat("?,", len(want)), ",")
	rows, err := db.base.SQL().QueryContext(ctx, db.base.Expand(fmt.Sprintf(query, in)), want...)
	if err != nil {
		return fmt.Errorf("find logs by provider message id: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var pid string
		var id int64
		if err := rows.Scan(&pid, &id); err != nil {
			return fmt.Errorf("find logs by provider message id: %w", err)
		}
		out[pid] = id
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("find logs by provider message id: %w", err)
	}
	return nil
}

// RecordLogEvent appends ev to its log's event history, grows the event
// roll-ups (addEventRollup) and, when status is not empty, moves the log
// to status with lastError, in one transaction. Only a delivered or failed log moves (a queued or sending
// one is being sent again and keeps its state); moved reports whether
// it did. ev.ID is set. ev.HostHooks are written to the host hook outbox
// in the same transaction. A log that does not exist is an ENOTFOUND error.
func (svc *EventService) RecordLogEvent(ctx context.Context, ev *events.LogEvent, status, lastError string) (moved bool, err error) {
	db := svc.db
	detail := ev.Detail
	if detail == nil {
		detail = map[string]any{}
	}
	js, err := store.EncodeJSON(detail)
	if err != nil {
		return false, fmt.Errorf("log event detail: %w", err)
	}
	at := ev.At.UTC().Truncate(time.Microsecond)
	if ev.At.IsZero() {
		at = now()
	}
	lock := ""
	if db.base.Dialect() == store.DialectMySQL {
		lock = " FOR UPDATE" // one event of a log at a time: its chains (event_rollup.go)
	}
	err = db.base.InSQLTransaction(ctx, func(tx *sql.Tx) error {
		var cur, source string
		var conn, site int64
		err := tx.QueryRowContext(ctx, db.base.Expand(`SELECT status, COALESCE(sent_connection_id, 0), source, site_id
			FROM {prefix}mailsvc_logs WHERE id = ?`+lock), ev.LogID).Scan(&cur, &conn, &source, &site)
		if errors.Is(err, sql.ErrNoRows) {
			return core.Errorf(core.ENOTFOUND, "Log %d not found.", ev.LogID)
		} else if err != nil {
			return fmt.Errorf("read log %d: %w", ev.LogID, err)
		}
		chain, err := db.eventLinks(ctx, tx, ev.LogID, ev.Event)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, db.base.Expand(`INSERT INTO {prefix}mailsvc_log_events
			(log_id, provider, event, occurred_at, detail, created_at) VALUES (?, ?, ?, ?, ?, ?)`),
			ev.LogID, ev.Provider, ev.Event, at, js, now())
		if err != nil {
			return fmt.Errorf("insert log event: %w", err)
		}
		if ev.ID, err = res.LastInsertId(); err != nil {
			return fmt.Errorf("read log event id: %w", err)
		}
		if err := db.addEventRollup(ctx, tx, site, conn, source, ev.Event, chain, eventLink{ev.ID, ev.Provider, at}); err != nil {
			return err
		}
		if err := db.base.HostHooks().InsertHostHooks(ctx, tx, ev.HostHooks); err != nil {
			return err
		}
		if status == "" {
			return nil
		}
		res, err = tx.ExecContext(ctx, db.base.Expand(`UPDATE {prefix}mailsvc_logs SET status = ?, last_error = ?, updated_at = ?
			WHERE id = ? AND status IN (?, ?)`), status, lastError, now(), ev.LogID, core.StatusDelivered, core.StatusFailed)
		if err != nil {
			return fmt.Errorf("move log %d to %s: %w", ev.LogID, status, err)
		}
		n, _ := res.RowsAffected()
		moved = n == 1
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("record log event: %w", err)
	}
	if len(ev.HostHooks) > 0 {
		db.base.HostHooks().HostHooksWritten()
	}
	ev.At = at
	return moved, nil
}

// FindLogEvents returns a log's provider events, oldest first.
func (svc *EventService) FindLogEvents(ctx context.Context, logID int64) ([]events.LogEvent, error) {
	db := svc.db
	rows, err := db.base.SQL().QueryContext(ctx, db.base.Expand(`SELECT id, log_id, provider, event, occurred_at, detail
		FROM {prefix}mailsvc_log_events WHERE log_id = ? ORDER BY id`), logID)
	if err != nil {
		return nil, fmt.Errorf("find log events: %w", err)
	}
	defer rows.Close()
	out := []events.LogEvent{}
	for rows.Next() {
		var ev events.LogEvent
		var js string
		if err := rows.Scan(&ev.ID, &ev.LogID, &ev.Provider, &ev.Event, &ev.At, &js); err != nil {
			return nil, fmt.Errorf("find log events: %w", err)
		}
		ev.At = ev.At.UTC()
		v, err := store.DecodeJSON(js)
		if err != nil {
			return nil, fmt.Errorf("log event %d detail: %w", ev.ID, err)
		}
		ev.Detail, _ = v.(map[string]any)
		if ev.Detail == nil {
			ev.Detail = map[string]any{}
		}
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find log events: %w", err)
	}
	return out, nil
}
