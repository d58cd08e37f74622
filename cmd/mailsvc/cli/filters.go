package cli

import (
	"log/slog"

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
	src, err := wordpress.NewGormSource(rt.db.Gorm(), rt.prefix)
	if err != nil {
		return err
	}
	n, err := rt.network()
	if err != nil {
		return err
	}
	// On a network each site's bridge publishes its own filters; the
	// capability of a request is its site's.
	(&wordpress.PublishedFilters{Options: src, Network: n, Logger: log}).Register(hooks)
	return nil
}
