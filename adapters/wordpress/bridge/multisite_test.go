package bridge_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/wordpress/bridge"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// TestBridgeOnANetwork runs the bridge on every site of a real multisite
// network (the package's one network): wp_mail() on each site queues
// into the one network queue with the site's id, a request on a site is
// forwarded on the site's path, and a message's host hooks run on the
// site that sent it.
func TestBridgeOnANetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	n := wpsite.InstallNetwork(t, wpsite.NetworkOptions{})
	ctx := context.Background()
	db, err := store.Open(ctx, "mysql:"+n.DSN, n.Prefix, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := bridge.Install(n.ContentDir); err != nil {
		t.Fatal(err)
	}
	listener := `<?php
add_action( 'mail_svc_delivered', function ( $log_id ) {
	update_site_option( 'hook_ran_on_' . $log_id, get_current_blog_id() );
} );
`
	if err := os.WriteFile(filepath.Join(n.ContentDir, "mu-plugins", "listener.php"), []byte(listener), 0o644); err != nil {
		t.Fatal(err)
	}

	ids := map[int64]int64{}
	for _, site := range []int64{1, 2, 3} {
		out := n.PHPOnSite(t, site, fmt.Sprintf(`if ( ! wp_mail( 'x@example.com', 'from site %d', 'body' ) ) { wpsite_fail( 'wp_mail failed' ); }
global $wpdb;
echo $wpdb->get_var( "SELECT MAX(id) FROM {$wpdb->base_prefix}mailsvc_logs" );`, site))
		var id int64
		if _, err := fmt.Sscan(strings.TrimSpace(out), &id); err != nil {
			t.Fatalf("site %d: %q", site, out)
		}
		l, err := db.Logs().FindLogByID(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if l.SiteID != site || l.Message.Subject != fmt.Sprintf("from site %d", site) {
			t.Fatalf("site %d queued log %+v", site, l)
		}
		ids[site] = id
	}
	if logs, _, err := db.Logs().FindLogs(core.WithSiteScope(ctx, 2), core.LogFilter{}); err != nil || len(logs) != 1 || logs[0].ID != ids[2] {
		t.Fatalf("site 2's logs: %+v, %v", logs, err)
	}

	for site, want := range map[int64]string{1: "", 2: "/site2", 3: "/site3"} {
		if got := n.PHPOnSite(t, site, `echo mailsvc_bridge_site_path();`); got != want {
			t.Errorf("site %d forwards on %q, want %q", site, got, want)
		}
	}

	// The service recorded mail_svc_delivered for site 3's message; a
	// request on the main site runs it on site 3.
	table := n.Prefix + "mailsvc_hook_events"
	n.PHP(t, fmt.Sprintf(`global $wpdb; $wpdb->query( "INSERT INTO %s (hook, args, created_at) VALUES ('mail_svc_delivered', '[%d, 1, \"pm\"]', UTC_TIMESTAMP(6))" );`, table, ids[3]))
	out := n.PHP(t, fmt.Sprintf(`mailsvc_bridge_run_hooks( 10 ); echo get_site_option( 'hook_ran_on_%d' ), ',', get_current_blog_id();`, ids[3]))
	if out != "3,1" {
		t.Fatalf("the hook ran on site, then the request is on site: %q, want 3,1", out)
	}
}
