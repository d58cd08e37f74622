package pro

import (
	"context"
	"sync"
	"time"

	httppro "github.com/mailsvc/mailsvc/adapters/http/pro"
	prostore "github.com/mailsvc/mailsvc/adapters/pro/store"
	"github.com/mailsvc/mailsvc/adapters/wordpress"
	"github.com/mailsvc/mailsvc/app/health"
	"github.com/mailsvc/mailsvc/app/pro/routing"
	"github.com/mailsvc/mailsvc/cmd/mailsvc/cli"
)

// siteZoneTTL is how long the site's time zone is reused once read.
const siteZoneTTL = time.Minute

// joinRouting gives m the routing rule and sender group routes and makes
// their service the delivery engine's connection chooser. Days of the
// daily caps follow the site's time zone (WordPress's timezone_string or
// gmt_offset; UTC standalone or when the options cannot be read). An
// SES connection sends as its verified identities (asked of m.SES, which
// joinIdentityTools sets); a connection-level delivery failure marks the
// connection down until the health check passes again.
func joinRouting(env *cli.ServeEnv, m *httppro.Module) {
	svc := &routing.Service{
		Store:       prostore.New(env.DB).Routing(),
		Connections: env.Connections,
		Settings:    env.Delivery.Settings,
		Location:    siteZone(env),
		Identities: func(ctx context.Context, id int64) ([]string, []string, error) {
			if m.SES == nil {
				return nil, nil, nil
			}
			v, err := m.SES.ValidSenders(ctx, id)
			if err != nil {
				return nil, nil, err
			}
			return v.Addresses, v.Domains, nil
		},
		Health: &health.SendFailures{State: env.DB.Connections(), Alerts: env.Delivery.Alerts, Site: env.SiteURL},
		Use:    env.ConnectionUse,
		Logger: env.Logger,
	}
	env.Delivery.Chooser = svc
	m.RoutingRules = svc
	m.SenderGroups = svc
}

// siteZone returns the site's time zone, read at most once a minute.
func siteZone(env *cli.ServeEnv) func(ctx context.Context) (*time.Location, error) {
	src, err := wordpress.NewGormSource(env.DB.Gorm(), env.DB.Prefix())
	if err != nil {
		return nil
	}
	var mu sync.Mutex
	var loc *time.Location
	var at time.Time
	return func(ctx context.Context) (*time.Location, error) {
		mu.Lock()
		defer mu.Unlock()
		if loc != nil && time.Since(at) < siteZoneTTL {
			return loc, nil
		}
		l, err := wordpress.SiteLocation(ctx, src)
		if err != nil {
			l = time.UTC // standalone: no options table
		}
		loc, at = l, time.Now()
		return loc, nil
	}
}
