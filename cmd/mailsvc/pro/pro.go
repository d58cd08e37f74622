// Package pro joins the Pro add-on to the mailsvc command line: a blank
// import of this package (as cmd/mailsvc does) registers it with
// cli.RegisterModule and its admin screens and the Pro tab with
// admin.RegisterScreens, and links adapters/pro/store, which registers
// the Pro schema history (store.RegisterMigrations), the counter of the
// roll-ups by source and by site (store.RegisterOutcomeCounter), its
// roll-ups for compaction (store.RegisterRollupTables) and the erase of
// the provider events naming an address (store.RegisterLogEraser).
// `mailsvc serve` then writes the WordPress bridge's directive of the
// plugin exclusions (none when wp-config.php switches Pro off), adds the
// suppression list and the provider events
// to personal data requests and the provider events to the delivery
// engine's uncertain attempts, and unless MAIL_SVC_PRO_ENABLED is false
// serves the /pro/... routes and sets its parts of the delivery options
// (Policy, Suppressions, Chooser) and the OAuth client (when it is false,
// it hides the Pro tab); `mailsvc license` mints vendor keys and licence
// keys.
package pro

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	api "github.com/mailsvc/mailsvc/adapters/http"
	adminui "github.com/mailsvc/mailsvc/adapters/http/admin"
	httppro "github.com/mailsvc/mailsvc/adapters/http/pro"
	"github.com/mailsvc/mailsvc/adapters/pro/licenseserver"
	prostore "github.com/mailsvc/mailsvc/adapters/pro/store"
	apppro "github.com/mailsvc/mailsvc/app/pro"
	"github.com/mailsvc/mailsvc/app/pro/events"
	"github.com/mailsvc/mailsvc/app/pro/suppression"
	"github.com/mailsvc/mailsvc/cmd/mailsvc/cli"
)

func init() {
	cli.RegisterModule(module{})
	adminui.RegisterScreens(httppro.Screens(), httppro.Tab())
}

// module is the Pro add-on as a cli.Module.
type module struct{}

// Commands implements cli.Module.
func (module) Commands() []*cobra.Command { return []*cobra.Command{licenseCommand()} }

// Serve implements cli.Module: with Pro switched on, it sets the delivery
// policy from the Pro settings and returns the Pro routes.
func (module) Serve(ctx context.Context, env *cli.ServeEnv) (api.Module, error) {
	// The suppression list and the provider events are part of personal
	// data requests whether Pro is switched on or off, and events recorded
	// before resolve uncertain attempts: their tables are there either way.
	store := prostore.New(env.DB)
	env.Privacy.Keepers = append(env.Privacy.Keepers, &suppression.PersonalData{Store: store.Suppressions()})
	env.Privacy.LogItems = append(env.Privacy.LogItems, &events.PersonalData{Store: store.Events()})
	env.Delivery.Events = &events.Uncertain{Store: store.Events()}
	if err := joinBridge(ctx, env); err != nil {
		return nil, err
	}
	if !env.Constants.Bool("MAIL_SVC_PRO_ENABLED") {
		env.Logger.Info("the Pro add-on is switched off (MAIL_SVC_PRO_ENABLED=false)")
		// Its screens are still served, but without its routes the
		// navigation shows no Pro tab.
		env.HiddenTabs = append(env.HiddenTabs, httppro.Tab().Slug)
		return nil, nil
	}
	vendors, err := apppro.VendorKeys(cli.SplitList(env.Constants.String("MAILSVC_LICENSE_PUBLIC_KEYS")))
	if err != nil {
		return nil, fmt.Errorf("MAILSVC_LICENSE_PUBLIC_KEYS: %w", err)
	}
	settings := &apppro.Settings{Store: env.DB.Settings(), Tx: settingsTransactor{env.DB}}
	env.Delivery.Policy = settings
	licenses := &apppro.Licenses{Store: env.DB.Settings(), Cipher: env.Cipher, Vendors: vendors, Site: env.SiteURL,
		Version: env.Version, Logger: env.Logger}
	if base := env.Constants.String("MAILSVC_LICENSE_SERVER"); base != "" {
		hc := &http.Client{Timeout: licenseserver.DefaultTimeout}
		if env.HTTPClient != nil {
			hc.Transport = env.HTTPClient.Transport
		}
		licenses.Server = &licenseserver.Client{BaseURL: base, HTTPClient: hc}
	}
	if env.SiteURL == "" {
		env.Logger.Warn("the site URL is unknown, so no Pro licence can be activated: set MAILSVC_PUBLIC_URL")
	}
	m := &httppro.Module{Licenses: licenses, Settings: settings}
	m.Transfer = transferService(env)
	if oc := oneClickService(env); oc != nil {
		m.OneClick = oc
	}
	joinRouting(env, m)
	joinAnalytics(env, m)
	if err := joinIdentityTools(env, m); err != nil {
		return nil, err
	}
	if err := joinWebhooks(env, m); err != nil {
		return nil, err
	}
	return m, nil
}

// endOfDay returns the first instant after the named UTC day.
func endOfDay(date string) (time.Time, error) {
	d, err := time.Parse("2006-01-02", date)
	if err != nil {
		return time.Time{}, fmt.Errorf("--expires %q is not a date YYYY-MM-DD", date)
	}
	return d.AddDate(0, 0, 1), nil
}
