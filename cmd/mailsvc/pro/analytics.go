package pro

import (
	httppro "github.com/mailsvc/mailsvc/adapters/http/pro"
	prostore "github.com/mailsvc/mailsvc/adapters/pro/store"
	"github.com/mailsvc/mailsvc/app/pro/analytics"
	"github.com/mailsvc/mailsvc/cmd/mailsvc/cli"
)

// joinAnalytics gives m the analytics routes over the database's roll-ups,
// provider events and log, with dates read in the site's time zone.
func joinAnalytics(env *cli.ServeEnv, m *httppro.Module) {
	m.Analytics = &analytics.Service{Rollups: env.DB, Events: prostore.New(env.DB), Logs: env.DB, Connections: env.DB.Connections(),
		Location: siteZone(env), Logger: env.Logger}
}
