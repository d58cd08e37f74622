package store

import (
	"context"
	"fmt"
)

// ReleaseLease ends the named lease before it expires, when owner holds it
// (any holder when owner is ""), and reports whether an unexpired lease was
// ended. Of concurrent releases of one lease at most one reports true, so
// a lease can also serve as a flag that exactly one replica clears (alert
// folding uses it this way).
func (db *LeaseService) ReleaseLease(ctx context.Context, name, owner string) (bool, error) {
	q := `DELETE FROM {prefix}mailsvc_leases WHERE name = ? AND lease_until >= ?`
	args := []any{name, now()}
	if owner != "" {
		q += ` AND owner = ?`
		args = append(args, owner)
	}
	res, err := db.sqlDB.ExecContext(ctx, db.expand(q), args...)
	if err != nil {
		return false, fmt.Errorf("release lease %s: %w", name, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}
