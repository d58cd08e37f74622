package core

import "context"

// MainSiteID is the site id of a single-site install and of a network's
// main site: every log written before multisite support carries it.
const MainSiteID int64 = 1

type siteKey struct{}

// WithSite returns ctx carrying the id of the site (a WordPress multisite
// blog id) a request acts for.
func WithSite(ctx context.Context, siteID int64) context.Context {
	return context.WithValue(ctx, siteKey{}, siteID)
}

// SiteFrom returns the site id ctx carries (WithSite) and whether it
// carries one.
func SiteFrom(ctx context.Context) (int64, bool) {
	id, ok := ctx.Value(siteKey{}).(int64)
	return id, ok
}

type siteScopeKey struct{}

// WithSiteScope returns ctx limited to the logs, counts and settings of
// one site: the stores and services that honour it (SiteScope) answer as
// if the other sites' data did not exist. A scope of 0 is the whole
// network.
func WithSiteScope(ctx context.Context, siteID int64) context.Context {
	return context.WithValue(ctx, siteScopeKey{}, siteID)
}

// SiteScope returns the site ctx is limited to, 0 for no limit.
func SiteScope(ctx context.Context) int64 {
	id, _ := ctx.Value(siteScopeKey{}).(int64)
	return id
}
