package core

import (
	"context"
	"fmt"
)

// ConnectionUse decides which connections a site of a WordPress
// multisite network may send through (network.Service): the network's
// connections (created by no site) and the site's own. Site 0 is the
// network itself (its default and fallback connections, its alert
// channels, the Pro routing rules and sender groups): it may use the
// network's connections only. A single site has none (nil): every
// connection is usable.
type ConnectionUse interface {
	// ConnectionUsable reports whether site may use connection id. A
	// connection that does not exist is usable as far as this rule
	// goes: the caller checks existence.
	ConnectionUsable(ctx context.Context, site, id int64) (bool, error)
}

// CanUseConnection reports whether site may use connection id under u;
// a nil u (a single site) lets every site use every connection.
func CanUseConnection(ctx context.Context, u ConnectionUse, site, id int64) (bool, error) {
	if u == nil {
		return true, nil
	}
	ok, err := u.ConnectionUsable(ctx, site, id)
	if err != nil {
		return false, fmt.Errorf("check the use of connection %d by site %d: %w", id, site, err)
	}
	return ok, nil
}

// NoSuchConnection is the text of a connection id that names no
// connection the caller may use: the same for a connection that does not
// exist and for another site's own, so that neither answer tells them
// apart.
func NoSuchConnection(id int64) string {
	return fmt.Sprintf("Connection %d does not exist.", id)
}

type actingSiteKey struct{}

// WithActingSite returns ctx carrying the site a request acts for when it
// names a connection to use (ConnectionUse): the site of the request's
// URL, or 0 for the network (a super admin on the main site's URL).
func WithActingSite(ctx context.Context, site int64) context.Context {
	return context.WithValue(ctx, actingSiteKey{}, site)
}

// ActingSite returns the site ctx acts for (WithActingSite) and whether
// it carries one. A context without one is a trusted caller's (the CLI,
// the workers), or a single site's.
func ActingSite(ctx context.Context) (int64, bool) {
	id, ok := ctx.Value(actingSiteKey{}).(int64)
	return id, ok
}
