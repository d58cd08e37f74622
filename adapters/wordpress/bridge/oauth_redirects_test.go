package bridge_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/wordpress"
	"github.com/mailsvc/mailsvc/adapters/wordpress/bridge"
	"github.com/mailsvc/mailsvc/test/wpsite"
	"gorm.io/driver/mysql"
	"gorm.io/gorm"
)

// TestBridgePublishesRedirectFilters registers the spec's redirect URI
// filters in a real site, lets the bridge run, and reads the overrides
// back the way the service does.
func TestBridgePublishesRedirectFilters(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	site := wpsite.Install(t, wpsite.Options{Prefix: "wpo_"})
	if _, err := bridge.Install(site.ContentDir); err != nil {
		t.Fatal(err)
	}
	gdb, err := gorm.Open(mysql.Open(site.DSN), &gorm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	src, err := wordpress.NewGormSource(gdb, site.Prefix)
	if err != nil {
		t.Fatal(err)
	}
	redirects := &wordpress.OAuthRedirects{Options: src}
	ctx := context.Background()
	read := func() map[string]string {
		out := map[string]string{}
		for _, p := range []string{"google", "microsoft", "zoho"} {
			uri, err := redirects.RedirectURI(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			out[p] = uri
		}
		return out
	}

	site.PHP(t, `echo "loaded";`)
	if got := read(); got["google"] != "" || got["microsoft"] != "" || got["zoho"] != "" {
		t.Fatalf("without filters the service sees overrides %v", got)
	}

	filters := `<?php
add_filter( 'mail_svc_google_oauth_redirect_uri', function () { return 'https://relay.example.com/google'; } );
add_filter( 'mail_svc_zoho_oauth_redirect_uri', function ( $uri ) { return $uri; } ); // unchanged: no override
`
	plugin := filepath.Join(site.ContentDir, "mu-plugins", "redirect-filters.php")
	if err := os.WriteFile(plugin, []byte(filters), 0o644); err != nil {
		t.Fatal(err)
	}
	site.PHP(t, `echo "loaded";`)
	got := read()
	if got["google"] != "https://relay.example.com/google" || got["microsoft"] != "" || got["zoho"] != "" {
		t.Fatalf("overrides = %v, want only google's", got)
	}

	// Removing the filter withdraws the override on the next page load.
	if err := os.Remove(plugin); err != nil {
		t.Fatal(err)
	}
	site.PHP(t, `echo "loaded";`)
	if got := read(); got["google"] != "" {
		t.Fatalf("after removing the filter the service still sees %v", got)
	}
}
