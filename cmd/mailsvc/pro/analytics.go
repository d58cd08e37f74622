package pro

import (
	httppro "github.com/mailsvc/mailsvc/adapters/http/pro"
	prostore "github.com/mailsvc/mailsvc/adapters/pro/store"
	"github.com/mailsvc/mailsvc/app/pro/analytics"
	"github.com/mailsvc/mailsvc/cmd/mailsvc/cli"
)

// joinAnalytics gives m the analytics routes over the Pro store's
// roll-ups, provider events and log export, with dates read in the site's
// time zone.
func joinAnalytics(env *cli.ServeEnv, m *httppro.Module) {
	db := prostore.New(env.DB)
	m.Analytics = &analytics.Service{Rollups: db.Analytics(), Events: db.Events(), Logs: db.Analytics(), Connections: env.DB.Connections(),
		Location: siteZone(env), Logger: env.Logger}
}
