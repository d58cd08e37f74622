package cli

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // IANA zones for timezone_string on hosts without a zoneinfo database

	"github.com/mailsvc/mailsvc/adapters/wordpress"
	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/dashboard"
	"github.com/mailsvc/mailsvc/app/report"
	"github.com/mailsvc/mailsvc/core"
)

// siteOptions is the dashboard's view of the WordPress site, read from
// its options table on each request (the owner may change them at any
// time). Without options (standalone) the zone is UTC and there is no
// admin address.
type siteOptions struct {
	options wordpress.OptionReader
	// publicURL is MAILSVC_PUBLIC_URL: standalone, its host names the
	// default sender.
	publicURL string
}

// DefaultFrom implements app.SiteSender: beside WordPress, wp_mail()'s
// own sender (wordpress@ and the home option's host without "www.");
// standalone, mailsvc@ and the host of MAILSVC_PUBLIC_URL, else of the
// machine's host name.
func (s siteOptions) DefaultFrom(ctx context.Context) (string, error) {
	if s.options != nil {
		home, _, err := s.options.Option(ctx, "home")
		if err != nil {
			return "", fmt.Errorf("read the home option: %w", err)
		}
		return wordpress.DefaultSender("wordpress", home), nil
	}
	if from := wordpress.DefaultSender("mailsvc", s.publicURL); from != "" {
		return from, nil
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return wordpress.DefaultSender("mailsvc", "http://"+host), nil
}

// TimeZone implements dashboard.Site: timezone_string, else gmt_offset,
// else UTC.
func (s siteOptions) TimeZone(ctx context.Context) (*time.Location, error) {
	if s.options == nil {
		return time.UTC, nil
	}
	return wordpress.SiteLocation(ctx, s.options)
}

// StartOfWeek implements report.Site: the start_of_week option beside
// WordPress; standalone, Monday.
func (s siteOptions) StartOfWeek(ctx context.Context) (time.Weekday, error) {
	if s.options == nil {
		return time.Monday, nil
	}
	return wordpress.StartOfWeek(ctx, s.options)
}

// SiteFormat implements the screens' GET /site/format: the date_format,
// time_format, timezone_string and gmt_offset options; standalone, or
// for an option not set, WordPress's defaults.
func (s siteOptions) SiteFormat(ctx context.Context) (core.SiteFormat, error) {
	f := core.DefaultSiteFormat
	if s.options == nil {
		return f, nil
	}
	read := func(name string) (string, error) {
		v, _, err := s.options.Option(ctx, name)
		if err != nil {
			return "", fmt.Errorf("read the %s option: %w", name, err)
		}
		return strings.TrimSpace(v), nil
	}
	for _, o := range []struct {
		name string
		to   *string
	}{{"date_format", &f.DateFormat}, {"time_format", &f.TimeFormat}, {"timezone_string", &f.TimeZone}} {
		v, err := read(o.name)
		if err != nil {
			return f, err
		}
		if v != "" {
			*o.to = v
		}
	}
	off, err := read("gmt_offset")
	if err != nil {
		return f, err
	}
	f.GMTOffset, _ = strconv.ParseFloat(off, 64)
	return f, nil
}

// AdminEmail implements dashboard.Site: the admin_email option.
func (s siteOptions) AdminEmail(ctx context.Context) (string, error) {
	if s.options == nil {
		return "", nil
	}
	v, _, err := s.options.Option(ctx, "admin_email")
	return v, err
}

// Name implements report.Site: the blogname option; standalone, "".
func (s siteOptions) Name(ctx context.Context) (string, error) {
	if s.options == nil {
		return "", nil
	}
	v, _, err := s.options.Option(ctx, "blogname")
	return v, err
}

// summaryReports builds the summary report service over the store, the
// settings and the delivery queue.
func (rt *runtime) summaryReports(conns *app.Connections, settings *app.Settings, queue report.Enqueuer, siteURL string) *report.Service {
	host, _ := os.Hostname()
	var now func() time.Time
	if off := time.Duration(rt.consts.Int("MAILSVC_REPORT_CLOCK_OFFSET", 0)) * time.Second; off != 0 {
		// Tests and demos: the report of a chosen period, now.
		now = func() time.Time { return time.Now().Add(off) }
	}
	return &report.Service{
		Outcomes:    rt.db.Logs(),
		Queue:       rt.db.Logs(),
		Logs:        rt.db.Logs(),
		Connections: rt.db.Connections(),
		Alerts:      rt.db.AlertHistory(),
		Site:        rt.site(),
		SiteURL:     siteURL,
		Settings:    settings,
		Mailer:      queue,
		Effective:   conns,
		Jobs:        rt.db.Jobs(),
		Owner:       fmt.Sprintf("%s-%d", host, os.Getpid()),
		Now:         now,
	}
}

// dashboard builds the dashboard service: statistics from the outcome
// roll-ups and the queue, and the onboarding wizard over the connection,
// settings and test email services.
func (rt *runtime) dashboard(conns *app.Connections, settings *app.Settings, sender app.ImmediateSender, env core.DriverEnv, hooks *core.Hooks) *dashboard.Service {
	site := rt.site()
	return &dashboard.Service{
		Outcomes:    rt.db.Logs(),
		Queue:       rt.db.Logs(),
		Logs:        rt.db.Logs(),
		Connections: rt.db.Connections(),
		Site:        site,
		Store:       rt.db.Settings(),
		// The bridge counts the core emails the email controls stop.
		EmailControls: rt.db.EmailControls(),
		Editor:        conns,
		Settings:      settings,
		Tester:        &app.ConnectionActions{Connections: conns, Settings: settings, Sender: sender, Env: env, Hooks: hooks, Site: site},
	}
}

// site returns the WordPress site's options as the dashboard and the test
// emails read them (none standalone).
func (rt *runtime) site() siteOptions {
	site := siteOptions{publicURL: rt.consts.String("MAILSVC_PUBLIC_URL")}
	if !rt.standalone() {
		src, err := wordpress.NewGormSource(rt.db.Gorm(), rt.prefix)
		if err != nil {
			rt.log.Warn("the site's options cannot be read; days are counted in UTC and test emails need a from email", "err", err)
		} else {
			site.options = src
		}
	}
	return site
}
