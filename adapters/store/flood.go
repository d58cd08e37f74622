package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

var _ core.FloodStore = (*FloodService)(nil)

// SourceVolumes implements core.FloodStore: one grouped read of the
// window's logs through the created_at index. The logs discarded from a
// hold (failed with core.FloodDiscardedError) and those still held are
// not counted: a flood does not teach the guard that floods are usual.
func (db *FloodService) SourceVolumes(ctx context.Context, since, before time.Time) ([]core.SourceVolume, error) {
	hour := `strftime('%Y-%m-%d %H', created_at)`
	if db.dialect == DialectMySQL {
		hour = `DATE_FORMAT(created_at, '%Y-%m-%d %H')`
	}
	var out []core.SourceVolume
	err := EachRow(ctx, db.sqlDB, "read the sources' volumes", db.expand(`SELECT site_id, source, COUNT(*), COUNT(DISTINCT `+hour+`)
		FROM {prefix}mailsvc_logs
		WHERE created_at >= ? AND created_at < ? AND status <> ? AND NOT (status = ? AND last_error = ?)
		GROUP BY site_id, source`),
		[]any{since.UTC().Truncate(time.Microsecond), before.UTC().Truncate(time.Microsecond), core.StatusHeld, core.StatusFailed, core.FloodDiscardedError},
		func(r RowScanner) error {
			var v core.SourceVolume
			if err := r.Scan(&v.SiteID, &v.Source, &v.Messages, &v.ActiveHours); err != nil {
				return err
			}
			out = append(out, v)
			return nil
		})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReleaseHeld implements core.FloodStore. Each statement re-checks the
// status, so of two releases of one log (a retry, two replicas, a
// release and a discard) only one moves it, and the queue's claim sends
// it once.
func (db *FloodService) ReleaseHeld(ctx context.Context, ids []int64) (int, error) {
	scope, scopeArgs := SiteCond(ctx, "site_id")
	total := 0
	for part := range slices.Chunk(ids, releaseChunk) {
		in, args := inList(part)
		t := now()
		res, err := db.sqlDB.ExecContext(ctx, db.expand(`UPDATE {prefix}mailsvc_logs SET
			status = ?, flood_released = 1, next_attempt_at = ?, lease_owner = NULL, lease_until = NULL, updated_at = ?
			WHERE status = ? AND id IN (`+in+`)`+scope),
			append(append([]any{core.StatusQueued, t, t, core.StatusHeld}, args...), scopeArgs...)...)
		if err != nil {
			return total, fmt.Errorf("release held logs: %w", err)
		}
		n, _ := res.RowsAffected()
		total += int(n)
	}
	return total, nil
}

// DiscardHeld implements core.FloodStore. In one transaction per chunk
// the held logs are leased to the discard (a conditional UPDATE, so a
// concurrent release or discard of a log moves it once) and their
// failure recorded as a worker's would be: the attempt, the roll-ups,
// and the host hooks (the bridge's wp_mail_failed) of each.
func (db *FloodService) DiscardHeld(ctx context.Context, ids []int64) (int, error) {
	scope, scopeArgs := SiteCond(ctx, "site_id")
	var token [8]byte
	_, _ = rand.Read(token[:])
	owner := "discard:" + hex.EncodeToString(token[:])
	total := 0
	for part := range slices.Chunk(ids, releaseChunk) {
		var n int
		var hooked bool
		err := retryDeadlock(func() error {
			return db.inTx(ctx, func(tx *sql.Tx) error {
				in, args := inList(part)
				t := now()
				res, err := tx.ExecContext(ctx, db.expand(`UPDATE {prefix}mailsvc_logs SET
					status = ?, lease_owner = ?, lease_until = ?, updated_at = ?
					WHERE status = ? AND id IN (`+in+`)`+scope),
					append(append([]any{core.StatusSending, owner, t.Add(time.Minute), t, core.StatusHeld}, args...), scopeArgs...)...)
				if err != nil {
					return err
				}
				if moved, _ := res.RowsAffected(); moved == 0 {
					n, hooked = 0, false
					return nil
				}
				outs := make([]core.LogOutcome, len(part))
				for i, id := range part {
					outs[i] = core.LogOutcome{LogID: id, Status: core.StatusFailed, LastError: core.FloodDiscardedError,
						History: []core.Attempt{{LogID: id, At: t, Outcome: core.OutcomePermanent, Error: core.FloodDiscardedError}}}
				}
				applied, h, err := db.recordOutcomes(ctx, tx, []string{owner}, [][]core.LogOutcome{outs})
				if err != nil {
					return err
				}
				n, hooked = applied[0], h
				return nil
			})
		})
		if err != nil {
			return total, fmt.Errorf("discard held logs: %w", err)
		}
		if hooked {
			db.hostHooksWritten()
		}
		total += n
	}
	return total, nil
}

// CountHeld implements core.FloodStore, through the (status,
// created_at) index.
func (db *FloodService) CountHeld(ctx context.Context) (int, error) {
	scope, scopeArgs := SiteCond(ctx, "site_id")
	var n int
	if err := db.sqlDB.QueryRowContext(ctx, db.expand(`SELECT COUNT(*) FROM {prefix}mailsvc_logs WHERE status = ?`+scope),
		append([]any{core.StatusHeld}, scopeArgs...)...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count held logs: %w", err)
	}
	return n, nil
}
