package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	api "github.com/mailsvc/mailsvc/adapters/http"
	adminui "github.com/mailsvc/mailsvc/adapters/http/admin"
	"github.com/mailsvc/mailsvc/app"
)

func serveCommand() *cobra.Command {
	var addr string
	var siteArgs []string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the REST API under /wp-json/mailsvc/v1",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sites, err := fleetSites(siteArgs)
			if err != nil {
				return err
			}
			return serve(cmd.Context(), addr, sites, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "", "listen address HOST:PORT (default $MAILSVC_ADDR or 127.0.0.1:8025)")
	cmd.Flags().StringArrayVar(&siteArgs, "site", nil, "serve the WordPress site of this wp-config.php (repeat for each site of a fleet; default $MAILSVC_SITES)")
	return cmd
}

// newLogger returns the commands' logger, at MAILSVC_LOG_LEVEL (info
// when unset or not a level).
func newLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel(os.Getenv("MAILSVC_LOG_LEVEL"))}))
}

// logLevel reads a MAILSVC_LOG_LEVEL value: debug, info, warn or error.
func logLevel(v string) slog.Level {
	var l slog.Level
	if v == "" || l.UnmarshalText([]byte(strings.TrimSpace(v))) != nil {
		return slog.LevelInfo
	}
	return l
}

// serve boots the service and serves until ctx is cancelled (SIGINT or
// SIGTERM), or until its tables are dropped under it (tablesGoneGuard),
// then shuts down gracefully. With sites (--site or MAILSVC_SITES) it
// serves each of them as a fleet (serveFleet); without, the one site of
// MAILSVC_WP_CONFIG, or standalone.
func serve(ctx context.Context, addr string, sites []string, out io.Writer) error {
	if len(sites) > 0 {
		return serveFleet(ctx, addr, sites, out)
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	guard := newTablesGoneGuard(newLogger().Handler(), stop)
	log := slog.New(guard)
	rt, err := boot(ctx, log)
	if err != nil {
		return err
	}
	defer rt.db.Close()
	guard.confirmWith(func() bool {
		// A database dropped whole is an outage, not an uninstall.
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		exists, err := rt.db.Installation().DatabaseExists(cctx)
		return err == nil && exists
	})
	if addr == "" {
		addr = rt.consts.String("MAILSVC_ADDR")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	site, err := buildSite(ctx, rt, siteBuild{serviceAddr: ln.Addr().String()})
	if err != nil {
		ln.Close()
		return err
	}
	defer site.stop()
	certFile, keyFile := rt.consts.String("MAILSVC_TLS_CERT"), rt.consts.String("MAILSVC_TLS_KEY")
	scheme := "http"
	if certFile != "" {
		scheme = "https"
	}
	base := fmt.Sprintf("%s://%s%s", scheme, ln.Addr(), api.Namespace)
	if rt.standalone() {
		if err := rt.firstRunAdmin(ctx, out, base); err != nil {
			ln.Close()
			return err
		}
	}
	fmt.Fprintf(out, "mailsvc is serving %s\n", base)
	fmt.Fprintln(out, screensBanner(rt.standalone(), site.admin, fmt.Sprintf("%s://%s%s", scheme, ln.Addr(), adminui.Prefix)))
	if rt.standalone() {
		fmt.Fprintln(out, "Add a login with: mailsvc users add NAME --role administrator")
	}
	log.Info("mailsvc serving", "version", Version, "api", base, "standalone", rt.standalone(), "database", rt.db.Dialect())
	return serveHTTP(ctx, ln, site.handler, certFile, keyFile, log)
}

// serveHTTP serves handler on ln (over TLS with a certificate) until ctx
// is cancelled, then shuts the server down gracefully.
func serveHTTP(ctx context.Context, ln net.Listener, handler http.Handler, certFile, keyFile string, log *slog.Logger) error {
	hs := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() {
		if certFile != "" {
			errc <- hs.ServeTLS(ln, certFile, keyFile)
		} else {
			errc <- hs.Serve(ln)
		}
	}()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := hs.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("stopped")
	return nil
}

// screensBanner is the line of the banner that says where the screens
// are: beside WordPress its owner opens them in wp-admin → Mail (admin,
// the page's address), standalone at the service's own screens.
func screensBanner(standalone bool, admin, screens string) string {
	if standalone || admin == "" {
		return "The screens are at " + screens
	}
	return "Open wp-admin → Mail (" + admin + ")"
}

// reportUndecryptable logs, at boot, every connection whose stored settings
// cannot be used: secrets that cannot be decrypted with the current key,
// or an endpoint off the provider's hosts (core.Connection.SettingsError).
func reportUndecryptable(ctx context.Context, log *slog.Logger, conns *app.Connections) {
	list, _, err := conns.List(ctx, 0, 0)
	if err != nil {
		log.Error("could not check stored connections", "err", err)
		return
	}
	for _, c := range list {
		if c.SettingsError != "" {
			log.Warn("connection settings unusable", "connection_id", c.ID, "name", c.Name, "problem", c.SettingsError)
		}
	}
}

// SplitList splits a comma-separated configuration value into its
// entries, trimmed, the empty ones left out.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// parseCIDRs parses a comma-separated list of IP addresses and CIDRs.
func parseCIDRs(s string) ([]*net.IPNet, error) {
	var out []*net.IPNet
	for _, p := range SplitList(s) {
		if !strings.Contains(p, "/") {
			if ip := net.ParseIP(p); ip != nil && ip.To4() != nil {
				p += "/32"
			} else {
				p += "/128"
			}
		}
		_, n, err := net.ParseCIDR(p)
		if err != nil {
			return nil, fmt.Errorf("%q is not an IP address or CIDR", p)
		}
		out = append(out, n)
	}
	return out, nil
}
