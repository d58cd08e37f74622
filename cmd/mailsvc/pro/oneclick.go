package pro

import (
	"context"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/oauth"
	"github.com/mailsvc/mailsvc/cmd/mailsvc/cli"
	"github.com/mailsvc/mailsvc/core"
)

// oneClickService builds one-click OAuth from the MAILSVC_ONECLICK_*
// constants, and makes the OAuth service's client use the vendor's app
// for connections with oauth_app=oneclick (the scheduled and manual
// refreshes included). It returns nil when serve has no OAuth service.
func oneClickService(env *cli.ServeEnv) *oauth.OneClick {
	if env.OAuth == nil {
		return nil
	}
	apps := map[string]oauth.VendorApp{}
	for provider, prefix := range map[string]string{core.ProviderGoogle: "MAILSVC_ONECLICK_GOOGLE_", core.ProviderMicrosoft: "MAILSVC_ONECLICK_MICROSOFT_"} {
		apps[provider] = oauth.VendorApp{
			ClientID:     env.Constants.String(prefix + "CLIENT_ID"),
			ClientSecret: env.Constants.String(prefix + "CLIENT_SECRET"),
			BaseURL:      env.Constants.String(prefix + "OAUTH_BASE_URL"),
		}
	}
	env.OAuth.Client = &oauth.AppClient{Next: env.OAuth.Client, Name: core.OAuthAppOneClick, Apps: apps}
	return &oauth.OneClick{
		Service: env.OAuth,
		Apps:    apps,
		Create: func(ctx context.Context, name, driver string, settings map[string]any) (int64, error) {
			c, err := env.Connections.Create(ctx, app.ConnectionInput{Name: &name, Driver: &driver, Settings: settings})
			if err != nil {
				return 0, err
			}
			return c.ID, nil
		},
		Delete: env.Connections.Delete,
	}
}
