package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/mailsvc/mailsvc/adapters/wordpress"
)

// authenticator returns the WordPress-compatible authenticator over the
// site's tables. In standalone mode it first creates the WordPress-shaped
// tables, and application passwords work over plain HTTP
// (WP_ENVIRONMENT_TYPE defaults to "local" there).
func (rt *runtime) authenticator(ctx context.Context) (*wordpress.Authenticator, error) {
	gdb := rt.db.Gorm()
	if rt.standalone() {
		if err := wordpress.EnsureSchema(ctx, gdb, rt.prefix); err != nil {
			return nil, fmt.Errorf("create user tables: %w", err)
		}
	}
	src, err := wordpress.NewGormSource(gdb, rt.prefix)
	if err != nil {
		return nil, err
	}
	env := rt.consts.String("WP_ENVIRONMENT_TYPE")
	if _, _, set := rt.consts.Lookup("WP_ENVIRONMENT_TYPE"); !set && rt.standalone() {
		env = "local"
	}
	site := wordpress.Site{Salts: rt.saltConstants(), EnvironmentType: env}
	if rt.wp != nil {
		for field, name := range map[*string]string{&site.SiteURL: "WP_SITEURL", &site.CookieHash: "COOKIEHASH", &site.LoggedInCookie: "LOGGED_IN_COOKIE"} {
			if v, ok := rt.wp.Defines[name]; ok {
				*field = v.String()
			}
		}
	}
	opts := []wordpress.Option{wordpress.WithLogger(rt.log)}
	net, err := rt.network()
	if err != nil {
		return nil, err
	}
	if net != nil {
		opts = append(opts, wordpress.WithNetwork(net))
	}
	if rt.standalone() {
		return wordpress.NewAuthenticator(src, site, opts...), nil
	}
	// Beside WordPress its application password filters decide too
	// (docs/security.md): published, or asked of WordPress per request.
	filters, err := rt.siteFilters(rt.log)
	if err != nil {
		return nil, err
	}
	homes, err := rt.siteHomes()
	if err != nil {
		return nil, err
	}
	asker := &wordpress.BridgeAsker{Sites: homes, Client: &http.Client{}}
	a := wordpress.NewAuthenticator(src, site, append(opts, wordpress.WithApplicationPasswordPolicy(filters, asker))...)
	asker.Salter = a.Salter()
	return a, nil
}

// firstRunAdmin creates the administrator "admin" with an application
// password when the standalone user table is empty, and prints how to call
// the API with it.
func (rt *runtime) firstRunAdmin(ctx context.Context, out io.Writer, base string) error {
	var n int64
	if err := rt.db.Gorm().WithContext(ctx).Table(rt.prefix + "users").Count(&n).Error; err != nil {
		return fmt.Errorf("count users: %w", err)
	}
	if n > 0 {
		return nil
	}
	id, err := wordpress.CreateUser(ctx, rt.db.Gorm(), rt.prefix, "admin", "admin@localhost.localdomain", "administrator")
	if err != nil {
		return fmt.Errorf("create the first administrator: %w", err)
	}
	pw, err := wordpress.CreateApplicationPassword(ctx, rt.db.Gorm(), rt.prefix, id, "mailsvc first start")
	if err != nil {
		return fmt.Errorf("create the first application password: %w", err)
	}
	fmt.Fprintf(out, `First start: created the administrator "admin" with this application password (shown once):

    %[2]s

Try it:

    curl -u 'admin:%[2]s' %[1]s/settings

`, base, pw)
	return nil
}
