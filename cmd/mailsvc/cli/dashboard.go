package cli

import (
	"context"
	"time"
	_ "time/tzdata" // IANA zones for timezone_string on hosts without a zoneinfo database

	"github.com/mailsvc/mailsvc/adapters/wordpress"
	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/dashboard"
	"github.com/mailsvc/mailsvc/core"
)

// siteOptions is the dashboard's view of the WordPress site, read from
// its options table on each request (the owner may change them at any
// time). Without options (standalone) the zone is UTC and there is no
// admin address.
type siteOptions struct {
	options wordpress.OptionReader
}

// TimeZone implements dashboard.Site: timezone_string, else gmt_offset,
// else UTC.
func (s siteOptions) TimeZone(ctx context.Context) (*time.Location, error) {
	if s.options == nil {
		return time.UTC, nil
	}
	return wordpress.SiteLocation(ctx, s.options)
}

// AdminEmail implements dashboard.Site: the admin_email option.
func (s siteOptions) AdminEmail(ctx context.Context) (string, error) {
	if s.options == nil {
		return "", nil
	}
	v, _, err := s.options.Option(ctx, "admin_email")
	return v, err
}

// dashboard builds the dashboard service: statistics from the outcome
// roll-ups and the queue, and the onboarding wizard over the connection,
// settings and test email services.
func (rt *runtime) dashboard(conns *app.Connections, settings *app.Settings, sender app.ImmediateSender, env core.DriverEnv, hooks *core.Hooks) *dashboard.Service {
	site := siteOptions{}
	if !rt.standalone() {
		src, err := wordpress.NewGormSource(rt.db.Gorm(), rt.prefix)
		if err != nil {
			rt.log.Warn("dashboard: the site's options cannot be read; days are counted in UTC", "err", err)
		} else {
			site.options = src
		}
	}
	return &dashboard.Service{
		Outcomes:    rt.db,
		Queue:       rt.db,
		Logs:        rt.db,
		Connections: rt.db,
		Site:        site,
		Store:       rt.db,
		Editor:      conns,
		Settings:    settings,
		Tester:      &app.ConnectionActions{Connections: conns, Settings: settings, Sender: sender, Env: env, Hooks: hooks},
	}
}
