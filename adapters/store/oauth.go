package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

var (
	_ core.OAuthStateStore     = (*OAuthService)(nil)
	_ core.RefreshHistoryStore = (*OAuthService)(nil)
)

// stateHash is the key of a pending authorization: the hex SHA-256 of its
// state, so the table never holds a usable state.
func stateHash(state string) string {
	sum := sha256.Sum256([]byte(state))
	return hex.EncodeToString(sum[:])
}

// SaveOAuthState implements core.OAuthStateStore. It also deletes the
// expired states of abandoned authorizations.
func (db *OAuthService) SaveOAuthState(ctx context.Context, s *core.OAuthState) error {
	if s.State == "" {
		return core.Errorf(core.EINVALID, "An OAuth state must not be empty.")
	}
	if _, err := db.sqlDB.ExecContext(ctx, db.expand(`DELETE FROM {prefix}mailsvc_oauth_states WHERE expires_at < ?`), now()); err != nil {
		return fmt.Errorf("purge expired oauth states: %w", err)
	}
	_, err := db.sqlDB.ExecContext(ctx, db.expand(`INSERT INTO {prefix}mailsvc_oauth_states
		(state_hash, provider, user_id, connection_id, code_verifier, redirect_uri, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`),
		stateHash(s.State), s.Provider, s.UserID, s.ConnectionID, s.CodeVerifier, s.RedirectURI,
		s.ExpiresAt.UTC().Truncate(time.Microsecond))
	if err != nil {
		return fmt.Errorf("save oauth state: %w", err)
	}
	return nil
}

// ConsumeOAuthState implements core.OAuthStateStore: the row is read,
// then deleted by a DELETE that must affect exactly one row, so of
// concurrent consumers only the one whose DELETE removed it gets it.
func (db *OAuthService) ConsumeOAuthState(ctx context.Context, state string) (*core.OAuthState, error) {
	notFound := core.Errorf(core.ENOTFOUND, "The OAuth state is unknown, used or expired.")
	if state == "" {
		return nil, notFound
	}
	h := stateHash(state)
	row := db.sqlDB.QueryRowContext(ctx, db.expand(`SELECT provider, user_id, connection_id, code_verifier, redirect_uri, expires_at
		FROM {prefix}mailsvc_oauth_states WHERE state_hash = ?`), h)
	out := &core.OAuthState{State: state}
	err := row.Scan(&out.Provider, &out.UserID, &out.ConnectionID, &out.CodeVerifier, &out.RedirectURI, &out.ExpiresAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound
	} else if err != nil {
		return nil, fmt.Errorf("consume oauth state: %w", err)
	}
	res, err := db.sqlDB.ExecContext(ctx, db.expand(`DELETE FROM {prefix}mailsvc_oauth_states WHERE state_hash = ?`), h)
	if err != nil {
		return nil, fmt.Errorf("consume oauth state: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return nil, notFound // a concurrent consumer won
	}
	out.ExpiresAt = out.ExpiresAt.UTC()
	if !now().Before(out.ExpiresAt) {
		return nil, notFound
	}
	return out, nil
}

// refreshAttemptRow is a row of {prefix}mailsvc_oauth_refresh_history.
type refreshAttemptRow struct {
	ID           int64      `gorm:"column:id;primaryKey;autoIncrement"`
	ConnectionID int64      `gorm:"column:connection_id"`
	AttemptedAt  time.Time  `gorm:"column:attempted_at"`
	TriggerName  string     `gorm:"column:trigger_name"`
	Outcome      string     `gorm:"column:outcome"`
	Error        string     `gorm:"column:error"`
	ExpiresAt    *time.Time `gorm:"column:expires_at"`
}

// AddRefreshAttempt implements core.RefreshHistoryStore. A zero
// AttemptedAt is set to now.
func (db *OAuthService) AddRefreshAttempt(ctx context.Context, a *core.RefreshAttempt) error {
	at := a.AttemptedAt.UTC().Truncate(time.Microsecond)
	if a.AttemptedAt.IsZero() {
		at = now()
	}
	row := &refreshAttemptRow{
		ConnectionID: a.ConnectionID,
		AttemptedAt:  at,
		TriggerName:  a.Trigger,
		Outcome:      a.Outcome,
		Error:        a.Error,
	}
	if a.ExpiresAt != nil {
		e := a.ExpiresAt.UTC().Truncate(time.Microsecond)
		row.ExpiresAt = &e
	}
	if err := db.gdb.WithContext(ctx).Table(db.tableName("oauth_refresh_history")).Create(row).Error; err != nil {
		return fmt.Errorf("add refresh attempt: %w", err)
	}
	a.ID, a.AttemptedAt = row.ID, at
	return nil
}

// FindRefreshAttempts implements core.RefreshHistoryStore.
func (db *OAuthService) FindRefreshAttempts(ctx context.Context, connID int64, offset, limit int) ([]core.RefreshAttempt, int, error) {
	q := db.gdb.WithContext(ctx).Table(db.tableName("oauth_refresh_history")).Where("connection_id = ?", connID)
	var total int64
	if err := q.Count(&total).Error; err != nil {
		return nil, 0, fmt.Errorf("count refresh attempts: %w", err)
	}
	q = db.gdb.WithContext(ctx).Table(db.tableName("oauth_refresh_history")).Where("connection_id = ?", connID).Order("id DESC")
	if offset > 0 {
		q = q.Offset(offset)
	}
	if limit > 0 {
		q = q.Limit(limit)
	} else if offset > 0 {
		q = q.Limit(math.MaxInt64)
	}
	var rows []refreshAttemptRow
	if err := q.Find(&rows).Error; err != nil {
		return nil, 0, fmt.Errorf("find refresh attempts: %w", err)
	}
	out := make([]core.RefreshAttempt, len(rows))
	for i, r := range rows {
		out[i] = core.RefreshAttempt{
			ID: r.ID, ConnectionID: r.ConnectionID, AttemptedAt: r.AttemptedAt.UTC(),
			Trigger: r.TriggerName, Outcome: r.Outcome, Error: r.Error,
		}
		if r.ExpiresAt != nil {
			e := r.ExpiresAt.UTC()
			out[i].ExpiresAt = &e
		}
	}
	return out, int(total), nil
}
