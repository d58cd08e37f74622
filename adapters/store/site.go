package store

import (
	"context"

	"github.com/mailsvc/mailsvc/core"
)

// siteScope returns the condition (" AND column = ?", or "") and its
// argument limiting a query to the site ctx is scoped to
// (core.WithSiteScope).
func siteScope(ctx context.Context, column string) (string, []any) {
	if s := core.SiteScope(ctx); s > 0 {
		return " AND " + column + " = ?", []any{s}
	}
	return "", nil
}

// logSiteID is the site a new log is written for: its own SiteID, else
// the site ctx names, else the main site.
func logSiteID(ctx context.Context, l *core.Log) int64 {
	if l.SiteID > 0 {
		return l.SiteID
	}
	if s, ok := core.SiteFrom(ctx); ok && s > 0 {
		l.SiteID = s
		return s
	}
	l.SiteID = core.MainSiteID
	return l.SiteID
}
