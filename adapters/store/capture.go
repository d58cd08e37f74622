package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/mailsvc/mailsvc/core"
)

var _ core.CaptureStore = (*CaptureService)(nil)

// The live fingerprint is one row of the settings table, in a scope of
// its own (never served by GET /settings).
const (
	captureScope   = "capture"
	fingerprintKey = "live_fingerprint"
)

// releaseChunk bounds the logs one release statement moves.
const releaseChunk = 500

// LiveFingerprint implements core.CaptureStore.
func (db *CaptureService) LiveFingerprint(ctx context.Context) (*core.Fingerprint, error) {
	var row settingRow
	err := db.settings(ctx).Where("scope = ? AND setting_key = ?", captureScope, fingerprintKey).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the live fingerprint: %w", err)
	}
	var f core.Fingerprint
	if err := json.Unmarshal([]byte(row.Value), &f); err != nil {
		return nil, fmt.Errorf("read the live fingerprint: %w", err)
	}
	return &f, nil
}

// RecordFingerprint implements core.CaptureStore: an upsert when replace,
// else an insert that does nothing when the row exists (the first of
// concurrent recorders wins), then a read of the row in force.
func (db *CaptureService) RecordFingerprint(ctx context.Context, f core.Fingerprint, replace bool) (core.Fingerprint, error) {
	js, err := json.Marshal(f)
	if err != nil {
		return f, fmt.Errorf("record the live fingerprint: %w", err)
	}
	row := settingRow{Scope: captureScope, Key: fingerprintKey, Value: string(js), UpdatedAt: now()}
	conflict := clause.OnConflict{Columns: []clause.Column{{Name: "scope"}, {Name: "setting_key"}}, DoNothing: true}
	if replace {
		conflict = clause.OnConflict{Columns: conflict.Columns, DoUpdates: clause.AssignmentColumns([]string{"setting_value", "updated_at"})}
	}
	if err := db.settings(ctx).Clauses(conflict).Create(&row).Error; err != nil {
		return f, fmt.Errorf("record the live fingerprint: %w", err)
	}
	got, err := db.LiveFingerprint(ctx)
	if err != nil {
		return f, err
	}
	if got == nil {
		return f, errors.New("record the live fingerprint: not found after writing it")
	}
	return *got, nil
}

// ReleaseCaptured implements core.CaptureStore. Each statement re-checks
// the status, so of two releases of one log (a retry, two replicas) only
// one moves it, and the queue's claim sends it once.
func (db *CaptureService) ReleaseCaptured(ctx context.Context, ids []int64, all bool) (int, error) {
	total := 0
	release := func(part []int64) error {
		in, args := inList(part)
		t := now()
		res, err := db.sqlDB.ExecContext(ctx, db.expand(`UPDATE {prefix}mailsvc_logs SET
			status = ?, capture_released = 1, next_attempt_at = ?, lease_owner = NULL, lease_until = NULL, updated_at = ?
			WHERE status = ? AND id IN (`+in+`)`),
			append([]any{core.StatusQueued, t, t, core.StatusCaptured}, args...)...)
		if err != nil {
			return fmt.Errorf("release captured logs: %w", err)
		}
		n, _ := res.RowsAffected()
		total += int(n)
		return nil
	}
	if !all {
		for from := 0; from < len(ids); from += releaseChunk {
			if err := release(ids[from:min(from+releaseChunk, len(ids))]); err != nil {
				return total, err
			}
		}
		return total, nil
	}
	var after int64
	for {
		part, err := column[int64](ctx, db.sqlDB, "release captured logs", db.expand(`SELECT id FROM {prefix}mailsvc_logs
			WHERE status = ? AND id > ? ORDER BY id LIMIT ?`), []any{core.StatusCaptured, after, releaseChunk})
		if err != nil {
			return total, err
		}
		if len(part) == 0 {
			return total, nil
		}
		if err := release(part); err != nil {
			return total, err
		}
		after = part[len(part)-1]
	}
}

// CountCaptured implements core.CaptureStore, through the
// (status, created_at) index.
func (db *CaptureService) CountCaptured(ctx context.Context) (int, error) {
	var n int
	if err := db.sqlDB.QueryRowContext(ctx, db.expand(`SELECT COUNT(*) FROM {prefix}mailsvc_logs WHERE status = ?`),
		core.StatusCaptured).Scan(&n); err != nil {
		return 0, fmt.Errorf("count captured logs: %w", err)
	}
	return n, nil
}
