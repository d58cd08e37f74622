package cli

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	mysqldriver "github.com/go-sql-driver/mysql"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/wordpress"
	"github.com/mailsvc/mailsvc/app/capture"
	"github.com/mailsvc/mailsvc/core"
)

// siteFingerprint reads the running site's fingerprint: siteurl and home
// from the site's options (standalone: MAILSVC_PUBLIC_URL), the database
// name and host from the DSN in use, and the table prefix; and its
// environment type: what the bridge published of
// wp_get_environment_type(), else WP_ENVIRONMENT_TYPE (wp-config.php or
// the environment).
type siteFingerprint struct {
	rt      *runtime
	options wordpress.OptionReader // nil standalone
}

// Fingerprint implements capture.Site.
func (s *siteFingerprint) Fingerprint(ctx context.Context) (core.Fingerprint, error) {
	f := core.Fingerprint{TablePrefix: s.rt.prefix}
	f.DBName, f.DBHost = dsnIdentity(s.rt.dsn)
	if s.options == nil {
		public := s.rt.consts.String("MAILSVC_PUBLIC_URL")
		f.SiteURL, f.Home = public, public
		return f, nil
	}
	for _, o := range []struct {
		name string
		dst  *string
	}{{"siteurl", &f.SiteURL}, {"home", &f.Home}} {
		v, _, err := s.options.Option(ctx, o.name)
		if err != nil {
			return f, fmt.Errorf("read the %s option: %w", o.name, err)
		}
		*o.dst = strings.TrimSpace(v)
	}
	return f, nil
}

// EnvironmentType implements capture.Site.
func (s *siteFingerprint) EnvironmentType(ctx context.Context) (string, error) {
	if s.options != nil {
		r, err := wordpress.ReadFilterResults(ctx, s.options)
		if err != nil {
			return "", err
		}
		if r.EnvironmentType != "" {
			return r.EnvironmentType, nil
		}
	}
	return s.rt.consts.String("WP_ENVIRONMENT_TYPE"), nil
}

// dsnIdentity returns the database name and host of a store DSN
// ("mysql:…" or "sqlite:PATH"): a MySQL socket counts as localhost, an
// SQLite file is named by its base name on localhost.
func dsnIdentity(dsn string) (name, host string) {
	switch {
	case strings.HasPrefix(dsn, "mysql:"):
		cfg, err := mysqldriver.ParseDSN(strings.TrimPrefix(dsn, "mysql:"))
		if err != nil {
			return "", ""
		}
		if cfg.Net == "unix" {
			return cfg.DBName, "localhost"
		}
		return cfg.DBName, cfg.Addr
	case strings.HasPrefix(dsn, "sqlite:"):
		path, _, _ := strings.Cut(strings.TrimPrefix(dsn, "sqlite:"), "?")
		return filepath.Base(path), "localhost"
	}
	return "", ""
}

// captureGuard builds the staging guard (docs/staging.md). An invalid
// MAILSVC_ENVIRONMENT is an error: the guard must not guess when it was
// told.
func (rt *runtime) captureGuard(db *store.DB, settings capture.SettingsSource, wake func(), log *slog.Logger) (*capture.Guard, error) {
	env := strings.ToLower(strings.TrimSpace(rt.consts.String(core.EnvironmentConstant)))
	if env != "" && !containsEnv(env) {
		return nil, fmt.Errorf("%s must be one of %s, not %q", core.EnvironmentConstant, strings.Join(core.Environments, ", "), env)
	}
	site := &siteFingerprint{rt: rt}
	if !rt.standalone() {
		src, err := wordpress.NewGormSource(db.Gorm(), rt.prefix)
		if err != nil {
			return nil, err
		}
		site.options = src
	}
	return &capture.Guard{Store: db.Capture(), Site: site, Settings: settings, Environment: env, Wake: wake, Logger: log}, nil
}

func containsEnv(env string) bool {
	for _, e := range core.Environments {
		if e == env {
			return true
		}
	}
	return false
}
