package cli

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/spf13/cobra"

	api "github.com/mailsvc/mailsvc/adapters/http"
	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/delivery"
	"github.com/mailsvc/mailsvc/app/oauth"
	"github.com/mailsvc/mailsvc/app/scheduler"
	"github.com/mailsvc/mailsvc/core"
)

// Module is an add-on joined to the binary at build time, as a driver is:
// its package calls RegisterModule from init(), and a main package
// blank-imports it beside drivers/all. The shipped mailsvc joins the Pro
// add-on this way (cmd/mailsvc/pro); a build without that import has no
// Pro at all.
type Module interface {
	// Commands returns the subcommands the module adds to the root
	// command (none is fine).
	Commands() []*cobra.Command
	// Serve joins the module to a starting `mailsvc serve`, before the
	// delivery workers start: it may set hooks on env.Delivery (its
	// Policy) and returns the routes to add to the REST API, or nil for
	// none (e.g. when the module is switched off). An error stops serve.
	Serve(ctx context.Context, env *ServeEnv) (api.Module, error)
}

// ServeEnv is what `mailsvc serve` offers a Module: the parts it may set
// or add to (Delivery, Privacy.Keepers, OAuth.Client, Jobs, HiddenTabs)
// and what it may use (DB, Cipher, Hooks, ...). Serve reads what the
// modules set once every module has joined, before the workers and the
// scheduler start and before it builds the REST API and the screens.
type ServeEnv struct {
	Constants *core.Constants
	// DB is the open, migrated database (settings, logs, connections,
	// leases).
	DB     *store.DB
	Cipher core.Cipher
	Hooks  *core.Hooks
	// HostHooks carries events to WordPress's hooks (docs/hooks.md); nil
	// in standalone mode.
	HostHooks   core.HostHooks
	Connections *app.Connections
	// Delivery is the delivery service's options: a module sets its
	// add-on parts (Policy, Suppressions, Chooser, Events) there; serve builds
	// the service (delivery.New) once every module has joined.
	Delivery *delivery.Options
	// Privacy answers personal data requests; a module adds what it
	// keeps about an address to its Keepers, and what it keeps per log
	// to its LogItems.
	Privacy *app.Privacy
	// OAuth runs the OAuth flows and token refreshes; a module may wrap
	// its Client (before serve starts the scheduler).
	OAuth *oauth.Service
	// Jobs are the module's scheduled jobs: a module appends its
	// scheduler.Job values (a Name of its own, e.g. "pro_<job>", Every
	// and a Run that honours its context), and serve's scheduler runs
	// them beside the built-in ones, each once per interval across the
	// replicas (app/scheduler). Empty unless a module adds to it.
	Jobs []scheduler.Job
	// HiddenTabs are slugs of the tabs a module registered with its
	// screens (admin.RegisterScreens) that the screens' navigation
	// leaves out: a module switched off, which serves no routes, hides
	// its own. Serve reads it when it builds the screens' handler.
	HiddenTabs []string
	// HTTPClient is the client outgoing calls should use (it honours
	// MAIL_SVC_DEBUG_HTTP); it has no timeout of its own.
	HTTPClient *http.Client
	// SiteURL is the site's public URL: MAILSVC_PUBLIC_URL, else
	// WordPress's home option; "" standalone without MAILSVC_PUBLIC_URL.
	SiteURL string
	// ConnectionUse, on a multisite network, is which connections a
	// site may use (network.Service): the network's settings, rules and
	// groups name the network's connections only. Nil on a single site.
	ConnectionUse core.ConnectionUse
	Version       string
	Logger        *slog.Logger
}

var modules []Module

// RegisterModule joins m to the command line; call it from an init().
func RegisterModule(m Module) {
	if m == nil {
		panic("cli: RegisterModule of a nil module")
	}
	modules = append(modules, m)
}

// serveModules joins every registered module to serve and returns the
// route sets they add.
func serveModules(ctx context.Context, env *ServeEnv) ([]api.Module, error) {
	var out []api.Module
	for _, m := range modules {
		rm, err := m.Serve(ctx, env)
		if err != nil {
			return nil, err
		}
		if rm != nil {
			out = append(out, rm)
		}
	}
	return out, nil
}
