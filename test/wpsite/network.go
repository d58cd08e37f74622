package wpsite

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
)

// NetworkOptions configures a multisite network. The zero value is a
// subdirectory network with the sites /site2/, /site3/ and /site4/.
type NetworkOptions struct {
	// Site configures the main site (see Options); its SiteURL is the
	// network's domain and path.
	Site Options
	// Paths are the paths of the sites created besides the main site,
	// without slashes ("site2"); default site2, site3, site4.
	Paths []string
}

// NetworkSite is one site of a network.
type NetworkSite struct {
	// ID is the blog id (1 for the main site).
	ID int64
	// Path is the site's path in wp_blogs, with both slashes ("/site2/").
	Path string
	// URL is the site's home, without a trailing slash.
	URL string
	// Prefix is the site's table prefix: the base prefix for the main
	// site, base prefix + id + "_" for the others.
	Prefix string
}

// Network is a WordPress multisite network (subdirectory install) made by
// WordPress itself: the main site installed by wp_install(), the network
// by install_network() and populate_network(), the MULTISITE constants in
// wp-config.php, and the further sites by wpmu_create_blog(). The embedded
// Site is the main site; its PHP runs on the main site (use switch_to_blog
// for another). The installer's administrator "admin" is the super admin.
type Network struct {
	*Site
	// Domain is DOMAIN_CURRENT_SITE (host[:port]) and PathCurrentSite is
	// PATH_CURRENT_SITE ("/").
	Domain          string
	PathCurrentSite string
	// Sites lists the main site then the created ones, by id.
	Sites []NetworkSite
}

// InstallNetwork installs a single site, turns it into a subdirectory
// multisite network and creates the further sites, all owned by the super
// admin "admin". Everything is removed when the test ends.
func InstallNetwork(t testing.TB, opts NetworkOptions) *Network {
	t.Helper()
	if len(opts.Paths) == 0 {
		opts.Paths = []string{"site2", "site3", "site4"}
	}
	s := Install(t, opts.Site)
	u, err := url.Parse(s.SiteURL)
	if err != nil {
		t.Fatalf("wpsite: site URL: %v", err)
	}
	path := strings.TrimRight(u.Path, "/") + "/"
	n := &Network{Site: s, Domain: u.Host, PathCurrentSite: path}

	// The network tables and the network, as Network Setup does.
	out := s.PHP(t, fmt.Sprintf(`global $wpdb;
require_once ABSPATH . 'wp-admin/includes/upgrade.php';
// What wp-admin/network.php does first: name the global tables.
foreach ( $wpdb->tables( 'ms_global' ) as $table => $prefixed_table ) {
	$wpdb->$table = $prefixed_table;
}
install_network();
$r = populate_network( 1, %s, %s, 'mailsvc test network', %s, false );
if ( is_wp_error( $r ) ) {
	wpsite_fail( 'populate_network: ' . $r->get_error_code() . ': ' . $r->get_error_message() );
}
echo 'ok';
`, PHPString(n.Domain), PHPString(s.AdminEmail), PHPString(path)))
	if strings.TrimSpace(out) != "ok" {
		t.Fatalf("wpsite: populate_network printed %q", out)
	}

	// wp-config.php as Network Setup tells the administrator to edit it.
	extra := opts.Site.ExtraConfig + fmt.Sprintf(`
define( 'WP_ALLOW_MULTISITE', true );
define( 'MULTISITE', true );
define( 'SUBDOMAIN_INSTALL', false );
define( 'DOMAIN_CURRENT_SITE', %s );
define( 'PATH_CURRENT_SITE', %s );
define( 'SITE_ID_CURRENT_SITE', 1 );
define( 'BLOG_ID_CURRENT_SITE', 1 );
`, PHPString(n.Domain), PHPString(path))
	siteOpts := opts.Site
	siteOpts.SiteURL = s.SiteURL
	siteOpts.Prefix = s.Prefix
	siteOpts.ExtraConfig = extra
	if err := os.WriteFile(s.WPConfigPath, []byte(s.wpConfig(siteOpts)), 0o644); err != nil {
		t.Fatalf("wpsite: write wp-config.php: %v", err)
	}

	n.Sites = []NetworkSite{{ID: 1, Path: path, URL: s.SiteURL, Prefix: s.Prefix}}
	for _, p := range opts.Paths {
		sitePath := path + strings.Trim(p, "/") + "/"
		// The new-site notification to the network admin is not wanted.
		out := s.PHP(t, fmt.Sprintf(`add_filter( 'pre_wp_mail', '__return_true' );
remove_action( 'wp_initialize_site', 'newblog_notify_siteadmin', 100 );
$id = wpmu_create_blog( %[1]s, %[2]s, %[3]s, 1, array( 'public' => 1 ), 1 );
if ( is_wp_error( $id ) ) {
	wpsite_fail( 'wpmu_create_blog: ' . $id->get_error_code() . ': ' . $id->get_error_message() );
}
// WordPress strips the port from a new site's domain (multisite
// supports none but 80 and 443); a test network lives on a loopback port,
// so the site gets the network's domain back, as a database edit would.
global $wpdb;
$wpdb->update( $wpdb->blogs, array( 'domain' => %[1]s ), array( 'blog_id' => $id ) );
clean_blog_cache( $id );
switch_to_blog( $id );
$url = set_url_scheme( 'http://' . %[1]s . %[2]s, %[4]s );
update_option( 'siteurl', untrailingslashit( $url ) );
update_option( 'home', untrailingslashit( $url ) );
update_option( 'permalink_structure', '/%%postname%%/' );
delete_option( 'rewrite_rules' );
echo json_encode( array( 'id' => $id, 'home' => untrailingslashit( home_url() ) ) );
`, PHPString(n.Domain), PHPString(sitePath), PHPString("Site "+p), PHPString(u.Scheme)))
		var got struct {
			ID   int64  `json:"id"`
			Home string `json:"home"`
		}
		if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &got); err != nil || got.ID < 2 {
			t.Fatalf("wpsite: wpmu_create_blog printed %q (%v)", out, err)
		}
		n.Sites = append(n.Sites, NetworkSite{ID: got.ID, Path: sitePath, URL: got.Home, Prefix: fmt.Sprintf("%s%d_", s.Prefix, got.ID)})
	}
	return n
}

// SiteByID returns the site with blog id id; the test fails without one.
func (n *Network) SiteByID(t testing.TB, id int64) NetworkSite {
	t.Helper()
	for _, s := range n.Sites {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("wpsite: the network has no site %d", id)
	return NetworkSite{}
}

// PHPOnSite is PHP run on the site with blog id blogID (after
// switch_to_blog, as WordPress's own cross-site code does).
func (n *Network) PHPOnSite(t testing.TB, blogID int64, code string) string {
	t.Helper()
	return n.PHP(t, fmt.Sprintf("switch_to_blog( %d );\n%s", blogID, code))
}

// PHPInSiteRequest is PHP run in a request for the home of the site with
// blog id blogID: WordPress finds the site from the request's path, as on
// a page load of that site, so everything a page load runs (init,
// wp_loaded and what plugins hook there) runs on that site, then code.
// PHPOnSite, by contrast, loads the main site and switches after.
func (n *Network) PHPInSiteRequest(t testing.TB, blogID int64, code string) string {
	t.Helper()
	site := n.SiteByID(t, blogID)
	return n.runPHP(t, fmt.Sprintf("$_SERVER['REQUEST_URI'] = %s;\n", PHPString(site.Path)), code)
}

// AddUserToSite gives the user role on the site with blog id blogID
// (add_user_to_blog).
func (n *Network) AddUserToSite(t testing.TB, blogID int64, login, role string) {
	t.Helper()
	out := n.PHP(t, fmt.Sprintf(`$user = get_user_by( 'login', %s );
if ( ! $user ) {
	wpsite_fail( 'no such user' );
}
$r = add_user_to_blog( %d, $user->ID, %s );
if ( is_wp_error( $r ) ) {
	wpsite_fail( 'add_user_to_blog: ' . $r->get_error_message() );
}
echo 'ok';
`, PHPString(login), blogID, PHPString(role)))
	if strings.TrimSpace(out) != "ok" {
		t.Fatalf("wpsite: add_user_to_blog printed %q", out)
	}
}

// CreateSiteUser creates a user who belongs to the site with blog id
// blogID only, with role there, and returns its id.
func (n *Network) CreateSiteUser(t testing.TB, blogID int64, login, email, role, password string) int64 {
	t.Helper()
	id := n.CreateUser(t, login, email, "", password)
	n.PHP(t, fmt.Sprintf(`remove_user_from_blog( %d, 1 );`, id))
	n.AddUserToSite(t, blogID, login, role)
	return id
}
