package wpsite

import (
	"encoding/json"
	"testing"
)

// TestInstallNetwork checks that WordPress itself sees the network the
// fixture made: multisite on, each created site with its own tables and
// URL, the installer's administrator a super admin, and a site user who is
// an administrator of one site only; and that a request of a site's home
// loads that site.
func TestInstallNetwork(t *testing.T) {
	n := InstallNetwork(t, NetworkOptions{Site: Options{EnvironmentType: "local"}})
	if len(n.Sites) != 4 {
		t.Fatalf("sites = %+v, want the main site and three more", n.Sites)
	}
	var got struct {
		Multisite  bool     `json:"multisite"`
		Count      int      `json:"count"`
		SuperAdmin []string `json:"super_admins"`
	}
	phpJSON(t, n.Site, `echo json_encode( array(
	'multisite'    => is_multisite(),
	'count'        => (int) get_blog_count(),
	'super_admins' => get_super_admins(),
) );`, &got)
	if !got.Multisite || got.Count != 4 || len(got.SuperAdmin) != 1 || got.SuperAdmin[0] != "admin" {
		t.Fatalf("WordPress sees %+v", got)
	}
	for _, s := range n.Sites[1:] {
		var site struct {
			Prefix string `json:"prefix"`
			Home   string `json:"home"`
		}
		out := n.PHPOnSite(t, s.ID, `global $wpdb; echo json_encode( array( 'prefix' => $wpdb->prefix, 'home' => untrailingslashit( home_url() ) ) );`)
		if err := json.Unmarshal([]byte(out), &site); err != nil {
			t.Fatal(err)
		}
		if site.Prefix != s.Prefix || site.Home != s.URL || s.URL != n.SiteURL+s.Path[:len(s.Path)-1] {
			t.Errorf("site %d: WordPress %+v, fixture %+v", s.ID, site, s)
		}
	}
	// A request of site 3's home loads site 3 itself: its page load's
	// hooks run there.
	out := n.PHPInSiteRequest(t, 3, `echo json_encode( array( 'blog' => get_current_blog_id(), 'loaded' => did_action( 'wp_loaded' ), 'switched' => ms_is_switched() ) );`)
	if out != `{"blog":3,"loaded":1,"switched":false}` {
		t.Errorf("a request of site 3's home runs %s", out)
	}
	n.CreateSiteUser(t, 2, "ann", "ann@example.com", "administrator", "pw-ann-1")
	for id, want := range map[int64]bool{1: false, 2: true, 3: false} {
		out := n.PHPOnSite(t, id, `echo user_can( get_user_by( 'login', 'ann' ), 'manage_options' ) ? 'yes' : 'no';`)
		if (out == "yes") != want {
			t.Errorf("ann manage_options on site %d = %s, want %v", id, out, want)
		}
	}
}
