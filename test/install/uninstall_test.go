package install

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/wordpress/bridge"
	"github.com/mailsvc/mailsvc/test/servicetest"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// bridgeCron is a PHP line that says whether the bridge's WP-cron event is
// in the site's cron option.
const bridgeCron = `echo false === strpos( serialize( _get_cron_array() ), 'mailsvc_bridge_run_hooks' ) ? 'none' : 'scheduled';`

// TestUninstallLeavesNoCronEventNorItsFolder checks that mailsvc
// uninstall removes the bridge's WP-cron event from the site's cron
// option (WordPress would log invalid_schedule without the bridge) and a
// mu-plugins/ folder wp install created, whether or not the data is
// preserved.
func TestUninstallLeavesNoCronEventNorItsFolder(t *testing.T) {
	for _, preserve := range []bool{false, true} {
		name := map[bool]string{false: "tables dropped", true: "data preserved"}[preserve]
		t.Run(name, func(t *testing.T) {
			site := wpsite.Install(t, wpsite.Options{Prefix: "wpu_"})
			muPlugins := filepath.Join(site.ContentDir, "mu-plugins")
			// A site without mu-plugins/: wp install creates it.
			if err := os.Remove(muPlugins); err != nil {
				t.Fatalf("a fresh site's mu-plugins/ should be empty: %v", err)
			}
			dir := t.TempDir()
			env := servicetest.Environ(dir)
			if preserve {
				env = append(env, "MAIL_SVC_PRESERVE_DATA=true")
			}
			if r := servicetest.Run(dir, env, "", "wp", "install", "--wp-path", site.Dir); r.Code != 0 {
				t.Fatalf("wp install: %s%s", r.Stdout, r.Stderr)
			}
			// A page load runs the bridge, which schedules its event.
			if got := site.PHP(t, bridgeCron); got != "scheduled" {
				t.Fatalf("after a page load with the bridge the event is %q", got)
			}
			r := servicetest.Run(dir, env, "", "uninstall", "--wp-path", site.Dir)
			if r.Code == 0 || !strings.Contains(r.Stderr, "pass --yes") {
				t.Errorf("uninstall off a terminal without --yes: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
			}
			r = servicetest.Run(dir, env, "", "uninstall", "--yes", "--wp-path", site.Dir)
			if r.Code != 0 {
				t.Fatalf("uninstall: %s%s", r.Stdout, r.Stderr)
			}
			if !strings.Contains(r.Stdout, "Unscheduled the bridge's WP-cron event mailsvc_bridge_run_hooks (1 events in 1 options tables)") {
				t.Errorf("uninstall does not say it unscheduled the event:\n%s", r.Stdout)
			}
			if got := site.PHP(t, bridgeCron); got != "none" {
				t.Errorf("after uninstall the bridge's event is %q in the cron option", got)
			}
			if _, err := os.Stat(muPlugins); !os.IsNotExist(err) {
				t.Errorf("the mu-plugins/ folder wp install created is still there: %v\n%s", err, r.Stdout)
			}
		})
	}
}

// TestInstallAndUninstallTheBridgeFolder checks that mailsvc wp install
// writes the bridge's loader and its whole folder into a mu-plugins/ that
// holds another plugin, replacing an earlier version's files and removing
// those this build no longer ships, that WordPress then runs the bridge,
// and that uninstall leaves neither the loader nor the folder while the
// other plugin stays.
func TestInstallAndUninstallTheBridgeFolder(t *testing.T) {
	site := wpsite.Install(t, wpsite.Options{Prefix: "wpf_"})
	muPlugins := filepath.Join(site.ContentDir, "mu-plugins")
	other := filepath.Join(muPlugins, "other.php")
	// An earlier version's files: one the build replaces, one it no longer ships.
	old := map[string]string{
		"other.php":                     "<?php\n// Another must-use plugin.\n",
		"mailsvc-bridge/queue.php":      "<?php\n// an earlier version\n",
		"mailsvc-bridge/retired.php":    "<?php\n// no longer shipped\n",
		"mailsvc-bridge/old/nested.php": "<?php\n",
	}
	for name, content := range old {
		path := filepath.Join(muPlugins, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	env := servicetest.Environ(dir)
	if r := servicetest.Run(dir, env, "", "wp", "install", "--wp-path", site.Dir); r.Code != 0 {
		t.Fatalf("wp install: %s%s", r.Stdout, r.Stderr)
	}
	for name, want := range bridge.Files() {
		got, err := os.ReadFile(filepath.Join(muPlugins, filepath.FromSlash(name)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("after wp install, %s is not this build's (%v)", name, err)
		}
	}
	for _, gone := range []string{"mailsvc-bridge/retired.php", "mailsvc-bridge/old"} {
		if _, err := os.Stat(filepath.Join(muPlugins, gone)); !os.IsNotExist(err) {
			t.Errorf("wp install left the earlier version's %s: %v", gone, err)
		}
	}
	takenOver := `echo defined( 'MAIL_SVC_WP_MAIL_TAKEOVER' ) && function_exists( 'mailsvc_bridge_queue' ) ? 'bridge' : 'wordpress';`
	if got := site.PHP(t, takenOver); got != "bridge" {
		t.Fatalf("after wp install, wp_mail() is %q's", got)
	}
	if r := servicetest.Run(dir, env, "", "uninstall", "--yes", "--wp-path", site.Dir); r.Code != 0 {
		t.Fatalf("uninstall: %s%s", r.Stdout, r.Stderr)
	}
	for _, gone := range []string{bridge.Path(site.ContentDir), bridge.DirPath(site.ContentDir)} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Errorf("uninstall left %s: %v", gone, err)
		}
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("uninstall removed another plugin: %v", err)
	}
	if got := site.PHP(t, takenOver); got != "wordpress" {
		t.Errorf("after uninstall, wp_mail() is %q's", got)
	}
}

// bridgeRowsPHP prints, as a JSON list, every row of WordPress's own
// tables named after the service or its bridge, wherever it is: each
// site's options (with transients, and a single site's site transients),
// the bridge's WP-cron event in each site's cron option, the network's
// options (sitemeta: network options and site transients) and every
// user's meta. Each row reads "site N option NAME", "site N cron",
// "network option KEY" or "user LOGIN meta KEY".
const bridgeRowsPHP = `global $wpdb;
$named = function ( $table, $column ) use ( $wpdb ) {
	return $wpdb->get_col( $wpdb->prepare( "SELECT {$column} FROM {$table} WHERE {$column} LIKE %s OR {$column} LIKE %s ORDER BY {$column}", '%mailsvc%', '%' . $wpdb->esc_like( 'mail_svc' ) . '%' ) );
};
$rows = array();
foreach ( is_multisite() ? get_sites( array( 'fields' => 'ids', 'number' => 0 ) ) : array( 1 ) as $blog ) {
	if ( is_multisite() ) {
		switch_to_blog( $blog );
	}
	foreach ( $named( $wpdb->options, 'option_name' ) as $name ) {
		$rows[] = "site $blog option $name";
	}
	if ( false !== strpos( serialize( _get_cron_array() ), 'mailsvc' ) ) {
		$rows[] = "site $blog cron";
	}
	if ( is_multisite() ) {
		restore_current_blog();
	}
}
if ( is_multisite() ) {
	foreach ( $named( $wpdb->sitemeta, 'meta_key' ) as $key ) {
		$rows[] = "network option $key";
	}
}
$meta = $wpdb->get_results( $wpdb->prepare( "SELECT u.user_login, m.meta_key FROM {$wpdb->usermeta} m JOIN {$wpdb->users} u ON u.ID = m.user_id WHERE m.meta_key LIKE %s OR m.meta_key LIKE %s ORDER BY u.user_login, m.meta_key", '%mailsvc%', '%' . $wpdb->esc_like( 'mail_svc' ) . '%' ), ARRAY_N );
foreach ( $meta as $row ) {
	$rows[] = "user {$row[0]} meta {$row[1]}";
}
echo wp_json_encode( $rows );`

// dismissNoticePHP shows a user the admin notices of a screen of
// wp-admin while the service does not answer (MAILSVC_SERVICE_URL on a
// closed port), which keeps the service's state in the bridge's
// transient, then dismisses the notice of the stopped service as its
// close button does: the bridge's AJAX action with its nonce, which
// records the dismissal in the user's meta and answers
// {"success":true} (a user who dismissed it on another screen no longer
// sees it, and dismisses it again). Arguments: the service's URL, the
// user's login, the screen (dashboard, or dashboard-network for Network
// Admin).
const dismissNoticePHP = `require_once ABSPATH . 'wp-admin/includes/plugin.php';
require_once ABSPATH . 'wp-admin/includes/template.php';
require_once ABSPATH . 'wp-admin/includes/class-wp-screen.php';
require_once ABSPATH . 'wp-admin/includes/screen.php';
define( 'MAILSVC_SERVICE_URL', %s );
wp_set_current_user( get_user_by( 'login', %s )->ID );
set_current_screen( %s );
ob_start();
do_action( is_network_admin() ? 'network_admin_notices' : 'admin_notices' );
ob_end_clean();
$conditions = mailsvc_bridge_attention_conditions( mailsvc_bridge_attention_state() );
if ( ! isset( $conditions['down'] ) ) {
	wpsite_fail( 'the bridge does not see the service stopped: ' . wp_json_encode( $conditions ) );
}
$_POST['condition']      = 'down';
$_POST['key']            = $conditions['down'];
$_REQUEST['_ajax_nonce'] = wp_create_nonce( 'mailsvc_attention_dismiss' );
add_filter( 'wp_doing_ajax', '__return_true' );
do_action( 'wp_ajax_mailsvc_attention_dismiss' );`

// publishingFiltersPlugin is a must-use plugin with callbacks on the
// filters whose results the bridge publishes only when a site has them
// (the OAuth redirect address, the log redaction patterns).
const publishingFiltersPlugin = `<?php
add_filter( 'mail_svc_google_oauth_redirect_uri', function () {
	return 'https://auth.example.org/google/callback';
} );
add_filter( 'mail_svc_log_redact_patterns', function () {
	return array( '/order-[0-9]+/' );
} );
`

// noticeVisit is a user who sees, and dismisses, the notice of the
// stopped service on a screen of a site's wp-admin.
type noticeVisit struct {
	blog          int64
	login, screen string
}

// closedServiceURL returns the address of a loopback port nothing
// listens on: a service that does not answer.
func closedServiceURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr
}

// TestUninstallLeavesNothingTheBridgeWrote checks, on a single site and
// on a multisite network, that the rows the bridge writes in WordPress's
// own tables through its own code paths (a page load of each site: the
// published options and the WP-cron event; the admin notices: the
// transient of the service's state, on a network the network's site
// transient, and the option since when the service is down; a dismissed
// notice: the user's meta) all stay when MAIL_SVC_PRESERVE_DATA is true
// but the cron event, and that none is left after an uninstall without
// it, which says how many it deleted.
func TestUninstallLeavesNothingTheBridgeWrote(t *testing.T) {
	type wordpressUnderTest struct {
		site *wpsite.Site
		// pageLoad runs PHP in a page load of the site with blog id blog.
		pageLoad func(t *testing.T, blog int64, code string) string
		blogs    []int64
		visits   []noticeVisit
		// want are rows bridgeRowsPHP must list before the uninstall.
		want []string
	}
	// published are the options a page load of a site publishes.
	published := func(blog int64) []string {
		var rows []string
		for _, name := range []string{"mailsvc_filters", "mailsvc_host_hooks", "mailsvc_log_redact_patterns", "mailsvc_oauth_redirect_uris"} {
			rows = append(rows, fmt.Sprintf("site %d option %s", blog, name))
		}
		return append(rows, fmt.Sprintf("site %d cron", blog))
	}
	for _, tc := range []struct {
		name    string
		install func(t *testing.T) wordpressUnderTest
	}{
		{"single site", func(t *testing.T) wordpressUnderTest {
			site := wpsite.Install(t, wpsite.Options{Prefix: "wpr_"})
			return wordpressUnderTest{
				site:     site,
				pageLoad: func(t *testing.T, _ int64, code string) string { return site.PHP(t, code) },
				blogs:    []int64{1},
				visits:   []noticeVisit{{1, site.AdminLogin, "dashboard"}},
				want: append(published(1),
					"site 1 option _transient_mailsvc_attention",
					"site 1 option _transient_timeout_mailsvc_attention",
					"site 1 option mailsvc_attention_down_since",
					"user admin meta mailsvc_attention_dismissed"),
			}
		}},
		{"network", func(t *testing.T) wordpressUnderTest {
			n := wpsite.InstallNetwork(t, wpsite.NetworkOptions{Site: wpsite.Options{Prefix: "wpn_"}})
			n.CreateSiteUser(t, 2, "ann", "ann@example.com", "administrator", "Ann-pass-123")
			want := []string{
				// The super admin's view of the main site, kept apart.
				"site 1 option _transient_mailsvc_attention_super",
				"site 1 option _transient_timeout_mailsvc_attention_super",
				"site 1 option mailsvc_attention_down_since",
				"network option _site_transient_mailsvc_attention_network",
				"network option _site_transient_timeout_mailsvc_attention_network",
				"site 2 option _transient_mailsvc_attention",
				"site 2 option _transient_timeout_mailsvc_attention",
				"site 2 option mailsvc_attention_down_since",
				"user admin meta mailsvc_attention_dismissed",
				"user ann meta mailsvc_attention_dismissed",
			}
			var blogs []int64
			for _, s := range n.Sites {
				blogs = append(blogs, s.ID)
				want = append(want, published(s.ID)...)
			}
			return wordpressUnderTest{
				site:     n.Site,
				pageLoad: func(t *testing.T, blog int64, code string) string { return n.PHPInSiteRequest(t, blog, code) },
				blogs:    blogs,
				visits: []noticeVisit{
					{1, n.AdminLogin, "dashboard"},
					{1, n.AdminLogin, "dashboard-network"},
					{2, "ann", "dashboard"},
				},
				want: want,
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wp := tc.install(t)
			wp.site.WriteContent(t, map[string]string{"mu-plugins/publishing-filters.php": publishingFiltersPlugin})
			dir := t.TempDir()
			env := servicetest.Environ(dir)
			if r := servicetest.Run(dir, env, "", "wp", "install", "--wp-path", wp.site.Dir); r.Code != 0 {
				t.Fatalf("wp install: %s%s", r.Stdout, r.Stderr)
			}
			for _, blog := range wp.blogs {
				wp.pageLoad(t, blog, `echo 'loaded';`)
			}
			service := closedServiceURL(t)
			for _, v := range wp.visits {
				code := fmt.Sprintf(dismissNoticePHP, wpsite.PHPString(service), wpsite.PHPString(v.login), wpsite.PHPString(v.screen))
				if out := wp.pageLoad(t, v.blog, code); out != `{"success":true}` {
					t.Fatalf("%s dismissing the notice on site %d's %s: %q", v.login, v.blog, v.screen, out)
				}
			}
			rows := func() []string {
				t.Helper()
				var rows []string
				if err := json.Unmarshal([]byte(wp.site.PHP(t, bridgeRowsPHP)), &rows); err != nil {
					t.Fatal(err)
				}
				return rows
			}
			before := rows()
			for _, want := range wp.want {
				if !slices.Contains(before, want) {
					t.Errorf("the bridge did not write %q; it wrote %q", want, before)
				}
			}
			if t.Failed() {
				t.FailNow()
			}

			// MAIL_SVC_PRESERVE_DATA: everything stays but the cron event.
			r := servicetest.Run(dir, append(slices.Clone(env), "MAIL_SVC_PRESERVE_DATA=true"), "", "uninstall", "--yes", "--wp-path", wp.site.Dir)
			if r.Code != 0 {
				t.Fatalf("uninstall (preserve): %s%s", r.Stdout, r.Stderr)
			}
			kept := slices.DeleteFunc(slices.Clone(before), func(row string) bool { return strings.HasSuffix(row, " cron") })
			if got := rows(); !slices.Equal(got, kept) {
				t.Errorf("after a preserving uninstall: %q, want %q", got, kept)
			}

			// Reinstalled, then uninstalled for good: nothing is left, and
			// the command counts what it deleted.
			if r := servicetest.Run(dir, env, "", "wp", "install", "--wp-path", wp.site.Dir); r.Code != 0 {
				t.Fatalf("wp install again: %s%s", r.Stdout, r.Stderr)
			}
			r = servicetest.Run(dir, env, "", "uninstall", "--yes", "--wp-path", wp.site.Dir)
			if r.Code != 0 {
				t.Fatalf("uninstall: %s%s", r.Stdout, r.Stderr)
			}
			if got := rows(); len(got) != 0 {
				t.Errorf("after uninstall these are left: %q\n%s", got, r.Stdout)
			}
			count := func(infix string) int {
				n := 0
				for _, row := range kept {
					if strings.Contains(row, infix) {
						n++
					}
				}
				return n
			}
			deleted := fmt.Sprintf("Deleted %d options, %d network options and %d user meta rows.", count(" option ")-count("network option "), count("network option "), count(" meta "))
			if !strings.Contains(r.Stdout, deleted) {
				t.Errorf("uninstall does not say %q:\n%s", deleted, r.Stdout)
			}
		})
	}
}
