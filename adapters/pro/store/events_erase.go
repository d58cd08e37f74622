package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/mailsvc/mailsvc/adapters/store"
)

// The provider events naming an erased address go with the erase of
// their logs, in its transaction.
func init() { store.RegisterLogEraser(eraseLogEvents) }

// eraseLogEvents is the provider events' step of a personal data erase
// (a store.LogEraser): it deletes the events of logIDs whose detail
// names email.
func eraseLogEvents(ctx context.Context, db *store.DB, tx *sql.Tx, logIDs []int64, email string) error {
	if len(logIDs) == 0 {
		return nil
	}
	in, args := store.IDList(logIDs)
	pattern := "%" + store.LikeEscape(email) + "%"
	if _, err := tx.ExecContext(ctx, db.Expand(`DELETE FROM {prefix}mailsvc_log_events
		WHERE log_id IN (`+in+`) AND detail LIKE ? ESCAPE '!'`), append(args, pattern)...); err != nil {
		return fmt.Errorf("delete provider events: %w", err)
	}
	return nil
}
