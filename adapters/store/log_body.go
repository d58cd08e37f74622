package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/mailsvc/mailsvc/core"
)

// What the log keeps of a body (the log_body setting, docs/logs.md): a
// final outcome carrying a core.KeptBody records its mode and count in
// the outcome's UPDATE (no statement more for a body that stays as it
// is, the common case), and rewrites the bodies and attachments that
// change in the outcome's transaction; `mailsvc logs redact` rewrites
// the rows stored before through KeepLogBodies. Only delivered and
// failed rows are rewritten, so a log resent meanwhile keeps its whole
// body.

// finalBody returns the kept body of an outcome that ends its log, or
// nil.
func finalBody(o *core.LogOutcome) *core.KeptBody {
	if o.Body == nil || o.Delete || (o.Status != core.StatusDelivered && o.Status != core.StatusFailed) {
		return nil
	}
	return o.Body
}

var _ core.LogBodyStore = (*LogService)(nil)

// txQuerier is a *sql.DB or a *sql.Tx.
type txQuerier interface {
	execer
	Querier
}

// keepBodies writes bodies (log id → kept body) in q: one UPDATE per log
// whose body changes, with markUnchanged one per mode for the logs whose
// body stays as it is (their mode and count), and for the logs whose
// attachments go, their message column rewritten and their attachments
// rows deleted. It returns how many logs it rewrote.
func (db *handle) keepBodies(ctx context.Context, q txQuerier, bodies map[int64]*core.KeptBody, markUnchanged bool) (int, error) {
	if len(bodies) == 0 {
		return 0, nil
	}
	ids := slices.Sorted(maps.Keys(bodies))
	final := []any{core.StatusDelivered, core.StatusFailed}
	unchanged := map[string][]int64{}
	var drop []int64
	n := 0
	for _, id := range ids {
		b := bodies[id]
		if b.DropAttachments {
			drop = append(drop, id)
		}
		if !b.Changed {
			if markUnchanged {
				unchanged[b.Mode] = append(unchanged[b.Mode], id)
			}
			continue
		}
		res, err := q.ExecContext(ctx, db.expand(`UPDATE {prefix}mailsvc_logs
			SET text_body = ?, html_body = ?, body_mode = ?, redacted_count = ?
			WHERE id = ? AND status IN (?, ?)`),
			append([]any{b.Text, b.HTML, b.Mode, b.Redacted, id}, final...)...)
		if err != nil {
			return n, fmt.Errorf("keep the body of log %d: %w", id, err)
		}
		k, _ := res.RowsAffected()
		n += int(k)
	}
	for _, mode := range slices.Sorted(maps.Keys(unchanged)) {
		for part := range slices.Chunk(unchanged[mode], idChunk) {
			in, args := inList(part)
			res, err := q.ExecContext(ctx, db.expand(`UPDATE {prefix}mailsvc_logs SET body_mode = ?, redacted_count = 0
				WHERE id IN (`+in+`) AND status IN (?, ?)`), append(append([]any{mode}, args...), final...)...)
			if err != nil {
				return n, fmt.Errorf("mark the bodies of %d logs %s: %w", len(part), mode, err)
			}
			k, _ := res.RowsAffected()
			n += int(k)
		}
	}
	for part := range slices.Chunk(drop, idChunk) {
		if err := db.dropAttachmentBytes(ctx, q, part); err != nil {
			return n, err
		}
	}
	return n, nil
}

// dropAttachmentBytes keeps the names, types and sizes of the attachments
// of the final logs ids and removes their bytes: from the message column
// (rows of the bridge, of imports and of older schemas) and from the
// attachments table.
func (db *handle) dropAttachmentBytes(ctx context.Context, q txQuerier, ids []int64) error {
	in, args := inList(ids)
	final := []any{core.StatusDelivered, core.StatusFailed}
	rows, err := q.QueryContext(ctx, db.expand(`SELECT id, message FROM {prefix}mailsvc_logs
		WHERE id IN (`+in+`) AND status IN (?, ?)`), append(slices.Clone(args), final...)...)
	if err != nil {
		return fmt.Errorf("read attachments to drop: %w", err)
	}
	columns := map[int64]string{}
	for rows.Next() {
		var id int64
		var js []byte
		if err := rows.Scan(&id, &js); err != nil {
			rows.Close()
			return fmt.Errorf("read attachments to drop: %w", err)
		}
		kept, err := attachmentNamesOnly(js)
		if err != nil {
			rows.Close()
			return fmt.Errorf("log %d: %w", id, err)
		}
		columns[id] = kept
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return fmt.Errorf("read attachments to drop: %w", err)
	}
	for _, id := range slices.Sorted(maps.Keys(columns)) {
		if _, err := q.ExecContext(ctx, db.expand(`UPDATE {prefix}mailsvc_logs SET message = ?, attachments_kept = 0 WHERE id = ?`),
			columns[id], id); err != nil {
			return fmt.Errorf("drop the attachments of log %d: %w", id, err)
		}
		if _, err := q.ExecContext(ctx, db.expand(`DELETE FROM {prefix}mailsvc_log_attachments WHERE log_id = ?`), id); err != nil {
			return fmt.Errorf("drop the attachments of log %d: %w", id, err)
		}
	}
	return nil
}

// attachmentNamesOnly returns the message column js with every
// attachment's bytes removed and its size recorded.
func attachmentNamesOnly(js []byte) (string, error) {
	var sm storedMessage
	if err := json.Unmarshal(js, &sm); err != nil {
		return "", fmt.Errorf("decode message: %w", err)
	}
	for i := range sm.Attachments {
		a := &sm.Attachments[i]
		a.Size = max(a.Size, len(a.Data))
		a.Data = nil
	}
	b, err := json.Marshal(sm)
	if err != nil {
		return "", fmt.Errorf("encode message: %w", err)
	}
	return string(b), nil
}

// FinalLogsAfter implements core.LogBodyStore.
func (db *LogService) FinalLogsAfter(ctx context.Context, afterID int64, limit int, pendingOnly bool) ([]*core.Log, error) {
	cond := ""
	if pendingOnly {
		cond = " AND body_mode = ''"
	}
	logs, err := queryLogs(ctx, db.sqlDB, db.expand(`SELECT `+logColumns+` FROM {prefix}mailsvc_logs
		WHERE id > ? AND status IN (?, ?)`+cond+` ORDER BY id LIMIT ?`),
		afterID, core.StatusDelivered, core.StatusFailed, limit)
	if err != nil {
		return nil, fmt.Errorf("read logs after %d: %w", afterID, err)
	}
	return logs, nil
}

// LastLogID implements core.LogBodyStore.
func (db *LogService) LastLogID(ctx context.Context) (int64, error) {
	var id sql.NullInt64
	if err := db.sqlDB.QueryRowContext(ctx, db.expand(`SELECT MAX(id) FROM {prefix}mailsvc_logs`)).Scan(&id); err != nil {
		return 0, fmt.Errorf("read the last log id: %w", err)
	}
	return id.Int64, nil
}

// KeepLogBodies implements core.LogBodyStore.
func (db *LogService) KeepLogBodies(ctx context.Context, bodies map[int64]*core.KeptBody) (int, error) {
	var n int
	err := retryDeadlock(func() error {
		return db.inTx(ctx, func(tx *sql.Tx) error {
			var err error
			n, err = db.keepBodies(ctx, tx, bodies, true)
			return err
		})
	})
	if err != nil {
		return 0, fmt.Errorf("keep log bodies: %w", err)
	}
	return n, nil
}
