package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// The host hook outbox: {prefix}mailsvc_hook_events holds one row per
// event for the host's hooks, written in the transaction of the change
// that causes it; the WordPress bridge claims the rows, runs them as
// do_action() and marks them done (adapters/wordpress/bridge). A row's
// args column is the JSON array of the action's arguments.

// HostHookRetention is how long outbox rows are kept, run or not.
const HostHookRetention = 7 * 24 * time.Hour

// hostHookSignal holds the function called after a commit that wrote
// outbox rows. It is shared by a DB and the copies InTransaction makes.
type hostHookSignal struct {
	mu sync.RWMutex
	fn func()
}

// NotifyHostHooks makes the store call fn after each commit that wrote
// host hook events (the service then asks the site to run them). fn must
// not block; nil stops the calls.
func (db *HostHookService) NotifyHostHooks(fn func()) {
	db.hostHooks.mu.Lock()
	db.hostHooks.fn = fn
	db.hostHooks.mu.Unlock()
}

// HostHooksWritten tells the store that a transaction of a module's
// (written with InsertHostHooks) committed host hook events: it calls the
// NotifyHostHooks function, if any, as the store's own writes do.
func (db *HostHookService) HostHooksWritten() { db.hostHooksWritten() }

// hostHooksWritten calls the NotifyHostHooks function, if any.
func (db *handle) hostHooksWritten() {
	if db.hostHooks == nil {
		return
	}
	db.hostHooks.mu.RLock()
	fn := db.hostHooks.fn
	db.hostHooks.mu.RUnlock()
	if fn != nil {
		fn()
	}
}

// RecordHostHooks writes hooks to the outbox in one transaction
// (core.HostHooks.Record).
func (db *HostHookService) RecordHostHooks(ctx context.Context, hooks []core.HostHook) error {
	if len(hooks) == 0 {
		return nil
	}
	if err := db.inTx(ctx, func(tx *sql.Tx) error { return db.insertHostHooks(ctx, tx, hooks) }); err != nil {
		return fmt.Errorf("record host hooks: %w", err)
	}
	db.hostHooksWritten()
	return nil
}

// InsertHostHooks writes hooks inside tx, a module's transaction; after
// it commits, call HostHooksWritten.
func (db *HostHookService) InsertHostHooks(ctx context.Context, tx *sql.Tx, hooks []core.HostHook) error {
	return db.insertHostHooks(ctx, tx, hooks)
}

// insertHostHooks writes hooks inside tx with one multi-row INSERT per
// outcomeChunk events.
func (db *handle) insertHostHooks(ctx context.Context, tx *sql.Tx, hooks []core.HostHook) error {
	t := now()
	for start := 0; start < len(hooks); start += outcomeChunk {
		part := hooks[start:min(start+outcomeChunk, len(hooks))]
		var b strings.Builder
		b.WriteString(`INSERT INTO {prefix}mailsvc_hook_events (hook, args, created_at) VALUES `)
		args := make([]any, 0, 3*len(part))
		for i, h := range part {
			if h.Name == "" {
				return fmt.Errorf("host hook without a name")
			}
			list := h.Args
			if list == nil {
				list = []any{}
			}
			js, err := json.Marshal(list)
			if err != nil {
				return fmt.Errorf("encode the arguments of host hook %s: %w", h.Name, err)
			}
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(?, ?, ?)")
			args = append(args, h.Name, string(js), t)
		}
		if _, err := tx.ExecContext(ctx, db.expand(b.String()), args...); err != nil {
			return fmt.Errorf("insert host hooks: %w", err)
		}
	}
	return nil
}

// PruneHostHooks deletes the outbox rows created before before, run or
// not, and returns how many.
func (db *HostHookService) PruneHostHooks(ctx context.Context, before time.Time) (int64, error) {
	res, err := db.sqlDB.ExecContext(ctx, db.expand(`DELETE FROM {prefix}mailsvc_hook_events WHERE created_at < ?`), before.UTC())
	if err != nil {
		return 0, fmt.Errorf("prune host hooks: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// outcomeHostHooks returns the host hooks that the applied outcomes fire:
// those an outcome carries, and for a log the bridge flagged, the
// delivered hook at real delivery (not a simulated one) and
// wp_mail_failed at a final failure, with the wp_mail() arguments the
// bridge kept in the message column.
func (db *handle) outcomeHostHooks(ctx context.Context, tx *sql.Tx, held map[int64]heldLog, applied []core.LogOutcome) ([]core.HostHook, error) {
	var hooks []core.HostHook
	var failed []core.LogOutcome
	for _, o := range applied {
		hooks = append(hooks, o.HostHooks...)
		flags := held[o.LogID].hostHooks
		switch {
		case flags&core.HostHookFlagDelivered != 0 && o.Status == core.StatusDelivered && !o.Simulated:
			var conn int64
			if o.SentConnectionID != nil {
				conn = *o.SentConnectionID
			}
			hooks = append(hooks, core.HostHook{Name: core.HookDelivered, Args: []any{o.LogID, conn, o.ProviderMessageID}})
		case flags&core.HostHookFlagWPMailFailed != 0 && o.Status == core.StatusFailed:
			failed = append(failed, o)
		}
	}
	if len(failed) == 0 {
		return hooks, nil
	}
	ids := make([]int64, len(failed))
	for i, o := range failed {
		ids[i] = o.LogID
	}
	in, args := inList(ids)
	mailData := make(map[int64]json.RawMessage, len(failed))
	err := EachRow(ctx, tx, "read the wp_mail() arguments of failed logs",
		db.expand(`SELECT id, message FROM {prefix}mailsvc_logs WHERE id IN (`+in+`)`), args, func(r RowScanner) error {
			var id int64
			var msg string
			if err := r.Scan(&id, &msg); err != nil {
				return err
			}
			var col struct {
				WPMail json.RawMessage `json:"wp_mail"`
			}
			if json.Unmarshal([]byte(msg), &col) == nil && len(col.WPMail) > 0 && col.WPMail[0] == '{' {
				mailData[id] = col.WPMail
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	for _, o := range failed {
		data := mailData[o.LogID]
		if data == nil {
			data = json.RawMessage(`{}`)
		}
		hooks = append(hooks, core.HostHook{Name: core.HookWPMailFailed, Args: []any{map[string]any{
			"log_id": o.LogID, "error": o.LastError, "mail_data": data,
		}}})
	}
	return hooks, nil
}
