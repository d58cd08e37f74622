package wordpress_test

import (
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/mailsvc/mailsvc/adapters/wordpress"
	"github.com/mailsvc/mailsvc/adapters/wordpress/bridge"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// TestNetworkAgainstRealWordPress reads a multisite network WordPress
// made: the sites by host and path as ms-load.php finds them, the
// per-site capabilities of a site administrator, the super admin, and
// the network's cookie and application passwords.
func TestNetworkAgainstRealWordPress(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	n := wpsite.InstallNetwork(t, wpsite.NetworkOptions{Site: wpsite.Options{EnvironmentType: "local"}})
	db, err := gorm.Open(mysql.Open(n.DSN), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	u, _ := url.Parse(n.SiteURL)
	network, err := wordpress.NewNetwork(db, n.Prefix, wordpress.NetworkConfig{Domain: n.Domain, Path: n.PathCurrentSite, NetworkID: 1, MainSiteID: 1})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("sites by host and path", func(t *testing.T) {
		for _, tc := range []struct {
			host, path string
			want       int64
		}{
			{u.Host, "/", 1},
			{u.Host, "/wp-json/mailsvc/v1/logs", 1},
			{u.Host, "/site2/wp-json/mailsvc/v1/logs", 2},
			{u.Host, "/SITE3/", 3},
			{u.Host, "/site4", 4},
			{u.Host, "/site22/x", 1},
			{"127.0.0.1:8025", "/site2/wp-json/", 2}, // the service over loopback
		} {
			s, err := network.SiteByPath(ctx, tc.host, tc.path)
			if err != nil || s == nil || s.ID != tc.want {
				t.Errorf("SiteByPath(%q, %q) = %+v, %v; want site %d", tc.host, tc.path, s, err, tc.want)
			}
		}
		sites, err := network.Sites(ctx)
		if err != nil || len(sites) != 4 || sites[1].Path != "/site2/" {
			t.Fatalf("Sites = %+v, %v", sites, err)
		}
	})

	t.Run("salts the network keeps in sitemeta", func(t *testing.T) {
		// What wp_salt('nonce') is without the constants: the network
		// options nonce_key and nonce_salt (get_site_option), which
		// WordPress generates and stores with update_site_option.
		want := n.PHP(t, `foreach ( array( 'nonce_key', 'nonce_salt' ) as $name ) {
	update_site_option( $name, wp_generate_password( 64, true, true ) );
}
echo get_site_option( 'nonce_key' ) . get_site_option( 'nonce_salt' );`)
		got, err := wordpress.NewAuthenticator(nil, wordpress.Site{}, wordpress.WithNetwork(network)).Salter().Salt(ctx, "nonce")
		if err != nil || got != want {
			t.Fatalf("Salt(nonce) = %q, %v; WordPress stored %q", got, err, want)
		}
	})

	src, err := wordpress.NewGormSource(db, n.Prefix)
	if err != nil {
		t.Fatal(err)
	}

	// The capability filter is each site's: the bridge on site 2 publishes
	// a filter active there only in site 2's own option, and a request to
	// site 2 needs it while one to site 1 does not. A site whose bridge
	// has not published yet (site 3), or whose option was deleted or
	// overwritten (site 4), refuses.
	t.Run("the capability filter per site", func(t *testing.T) {
		if _, err := bridge.Install(n.ContentDir); err != nil {
			t.Fatal(err)
		}
		plugin := filepath.Join(n.ContentDir, "mu-plugins", "site2-capability.php")
		if err := os.WriteFile(plugin, []byte(`<?php
add_filter( 'mail_svc_rest_capability', function ( $cap ) { return 2 === get_current_blog_id() ? 'manage_mail' : $cap; } );
`), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(plugin) })
		n.PHP(t, `echo "a page load of the main site";`)
		// The bridge's filters as a page load of each site runs them.
		for _, site := range []int64{2, 4} {
			n.PHPOnSite(t, site, `mailsvc_bridge_sync_filters();`)
		}
		n.PHPOnSite(t, 4, `update_option( 'mailsvc_filters', 'overwritten' );`)
		p := &wordpress.PublishedFilters{Options: src, Network: network, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		h := &core.Hooks{}
		p.Register(h)
		for site, want := range map[int64]string{1: "manage_options", 2: "manage_mail", 3: "do_not_allow", 4: "do_not_allow"} {
			got := h.ApplyFilters(core.HookRESTCapability, "manage_options", "/wp-json/mailsvc/v1/logs", core.WithSite(ctx, site))
			if got != want {
				t.Errorf("capability on site %d = %v, want %s", site, got, want)
			}
		}
	})

	auth := wordpress.NewAuthenticator(src, wordpress.Site{Salts: n.Salts, EnvironmentType: "local"}, wordpress.WithNetwork(network))
	n.CreateSiteUser(t, 2, "ann", "ann@example.com", "administrator", "pw-ann-1")
	annPW := n.CreateApplicationPassword(t, "ann", "mailsvc")
	adminPW := n.CreateApplicationPassword(t, n.AdminLogin, "mailsvc")

	basic := func(site int64, login, pw string) *core.User {
		t.Helper()
		r := httptest.NewRequest(http.MethodGet, "/wp-json/", nil)
		r = r.WithContext(core.WithSite(r.Context(), site))
		r.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(login+":"+pw)))
		user, err := auth.Authenticate(r, false)
		if err != nil || user == nil {
			t.Fatalf("Authenticate %s on site %d = %+v, %v", login, site, user, err)
		}
		return user
	}
	t.Run("capabilities per site", func(t *testing.T) {
		for site, want := range map[int64]bool{1: false, 2: true, 3: false} {
			user := basic(site, "ann", annPW)
			if user.Can("manage_options") != want || user.SuperAdmin {
				t.Errorf("ann on site %d: %+v", site, user)
			}
		}
		for _, site := range []int64{1, 3} {
			user := basic(site, n.AdminLogin, adminPW)
			if !user.SuperAdmin || !user.Can("manage_options") || user.Can("do_not_allow") {
				t.Errorf("admin on site %d: %+v", site, user)
			}
		}
	})

	t.Run("cookie and nonce of the network", func(t *testing.T) {
		cookie := n.LoginCookie(t, "ann")
		nonce := n.RESTNonce(t, "ann", cookie)
		for site, want := range map[int64]bool{1: false, 2: true} {
			r := httptest.NewRequest(http.MethodGet, "/wp-json/", nil)
			r = r.WithContext(core.WithSite(r.Context(), site))
			r.Header.Set("Cookie", cookie.Name+"="+cookie.Value)
			r.Header.Set("X-WP-Nonce", nonce)
			user, err := auth.Authenticate(r, false)
			if err != nil || user == nil || user.Login != "ann" || user.Can("manage_options") != want {
				t.Fatalf("site %d: Authenticate = %+v, %v", site, user, err)
			}
		}
	})
}
