package cli

import (
	"log/slog"
	"time"

	"github.com/mailsvc/mailsvc/adapters/wordpress"
	"github.com/mailsvc/mailsvc/core"
)

// applySiteFilters makes the site's PHP filters govern the service beside
// WordPress: mail_svc_rest_capability, mail_svc_sensitive_keys,
// mail_svc_log_retention_days and mail_svc_api_debug_response_enabled as
// the bridge publishes their results (wordpress.PublishedFilters), the
// capability per site on a network. In standalone mode there is no PHP
// and nothing to register.
func (rt *runtime) applySiteFilters(hooks *core.Hooks, log *slog.Logger) error {
	if rt.standalone() {
		return nil
	}
	filters, err := rt.siteFilters(log)
	if err != nil {
		return err
	}
	filters.Register(hooks)
	return nil
}

// siteFilters returns the site's published filters beside WordPress, one
// reader (and one cache) for the hooks and the authenticator. On a
// network each site's bridge publishes its own filters; the capability
// and the application password rules of a request are its site's.
func (rt *runtime) siteFilters(log *slog.Logger) (*wordpress.PublishedFilters, error) {
	if rt.filters != nil {
		return rt.filters, nil
	}
	src, err := wordpress.NewGormSource(rt.db.Gorm(), rt.prefix)
	if err != nil {
		return nil, err
	}
	n, err := rt.network()
	if err != nil {
		return nil, err
	}
	refresh := time.Duration(rt.consts.Int("MAILSVC_FILTERS_REFRESH", int64(wordpress.DefaultFiltersRefresh/time.Second))) * time.Second
	rt.filters = &wordpress.PublishedFilters{Options: src, Network: n, Logger: log, Refresh: refresh}
	return rt.filters, nil
}

// siteHomes finds the stored address of the site (of each site, on a
// network) where the service sends its signed requests to the bridge.
func (rt *runtime) siteHomes() (*wordpress.SiteHomes, error) {
	src, err := wordpress.NewGormSource(rt.db.Gorm(), rt.prefix)
	if err != nil {
		return nil, err
	}
	net, err := rt.network()
	if err != nil {
		return nil, err
	}
	homes := &wordpress.SiteHomes{Options: src, Network: net}
	if v, ok := rt.wp.Defines["WP_HOME"]; ok {
		homes.Home = v.String()
	}
	return homes, nil
}
