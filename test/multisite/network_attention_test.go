package multisite

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// networkAttentionPHP renders, as a super admin on Network Admin's
// dashboard (the screen dashboard-network), what the bridge adds there:
// the network_admin_notices, the network_admin_menu with Mail's count and
// the wp_network_dashboard_setup widget. The user's logged-in cookie is
// the request's, as the bridge sends it to the service.
const networkAttentionPHP = `require_once ABSPATH . 'wp-admin/includes/plugin.php';
require_once ABSPATH . 'wp-admin/includes/template.php';
require_once ABSPATH . 'wp-admin/includes/class-wp-screen.php';
require_once ABSPATH . 'wp-admin/includes/screen.php';
require_once ABSPATH . 'wp-admin/includes/dashboard.php';
$user  = get_user_by( 'login', %s );
$exp   = time() + DAY_IN_SECONDS;
$token = WP_Session_Tokens::get_instance( $user->ID )->create( $exp );
$_COOKIE[ LOGGED_IN_COOKIE ] = wp_generate_auth_cookie( $user->ID, $exp, 'logged_in', $token );
$_SERVER['HTTP_COOKIE']      = LOGGED_IN_COOKIE . '=' . rawurlencode( $_COOKIE[ LOGGED_IN_COOKIE ] );
wp_set_current_user( $user->ID );
set_current_screen( 'dashboard-network' );
// The minute the bridge keeps the service's answer is over.
delete_site_transient( 'mailsvc_attention_network' );
if ( ! is_network_admin() ) {
	wpsite_fail( 'not on Network Admin' );
}
ob_start();
do_action( 'network_admin_notices' );
$notices = ob_get_clean();
global $menu, $wp_meta_boxes;
$menu = array();
do_action( 'network_admin_menu' );
$mail = '';
foreach ( $menu as $item ) {
	if ( 'mailsvc-network' === $item[2] ) {
		$mail = $item[0];
	}
}
do_action( 'wp_network_dashboard_setup' );
$box = isset( $wp_meta_boxes['dashboard-network']['normal']['core']['mailsvc_dashboard_widget'] ) ? $wp_meta_boxes['dashboard-network']['normal']['core']['mailsvc_dashboard_widget'] : null;
ob_start();
if ( $box ) {
	call_user_func( $box['callback'] );
}
$widget = ob_get_clean();
echo wp_json_encode( array( 'notices' => $notices, 'menu' => $mail, 'widget' => $widget ) );`

// checkNetworkAdminAttention: a message of the main site (sent through the
// network's connection, sink's) fails for good; on
// Network Admin the super admin sees the network's failure in the notice
// (which links to Network Admin's Mail page), the Mail menu's count and
// the Mail widget on the network's dashboard. The service's figures for
// the network (the main site's URL, as a super admin) are the ones shown.
func checkNetworkAdminAttention(t *testing.T, n *wpsite.Network, service string, sink *smtpsink.Sink, attention func() (failed, held int)) {
	t.Setenv("MAILSVC_SERVICE_URL", service)
	before, _ := attention()
	sink.FailNext(1, 550, "5.1.1 No such user here")
	if out := strings.TrimSpace(n.PHPOnSite(t, 1, `echo wp_mail( 'gone@example.com', 'main site refused', 'hello' ) ? 'ok' : 'no';`)); out != "ok" {
		t.Fatalf("wp_mail on the main site: %q", out)
	}
	failed, held := attention()
	for deadline := time.Now().Add(60 * time.Second); failed <= before; failed, held = attention() {
		if time.Now().After(deadline) {
			t.Fatalf("the main site's refused message never failed: %d failed in 24 hours, %d before", failed, before)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var got struct{ Notices, Menu, Widget string }
	out := n.PHP(t, fmt.Sprintf(networkAttentionPHP, wpsite.PHPString(n.AdminLogin)))
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("Network Admin's render %q: %v", out, err)
	}
	failedText := fmt.Sprintf("%d messages failed in the last 24 hours.", failed)
	if failed == 1 {
		failedText = "1 message failed in the last 24 hours."
	}
	if !strings.Contains(got.Notices, `id="mailsvc-attention-failing"`) || !strings.Contains(got.Notices, failedText) ||
		!strings.Contains(got.Notices, "/wp-admin/network/admin.php?page=mailsvc-network") {
		t.Errorf("Network Admin's notices, want the network's %q with a link to Network Admin's Mail page:\n%s", failedText, got.Notices)
	}
	if m := regexp.MustCompile(`id="mailsvc-menu-count"><span class="pending-count" aria-hidden="true">(\d+)<`).FindStringSubmatch(got.Menu); m == nil || m[1] != fmt.Sprint(failed+held) {
		t.Errorf("Network Admin's Mail menu %q, want the count %d (%d failed, %d held)", got.Menu, failed+held, failed, held)
	}
	if !strings.Contains(got.Widget, `id="mailsvc-widget"`) || !strings.Contains(got.Widget, "Failed today: <strong>") ||
		!strings.Contains(got.Widget, "/wp-admin/network/admin.php?page=mailsvc-network") {
		t.Errorf("Network Admin's Mail widget:\n%s", got.Widget)
	}
}

// networkAttention reads the network's failed_24h and held from
// GET /dashboard/attention on the main site's URL, as a super admin.
func networkAttention(t *testing.T, u string, opts func(*http.Request)) func() (int, int) {
	return func() (int, int) {
		t.Helper()
		var a struct {
			Failed int `json:"failed_24h"`
			Held   int `json:"held"`
		}
		r := servicetest.Call(t, "GET", u, "", opts)
		if r.JSON(t, &a); r.Status != 200 {
			t.Fatalf("GET %s: %d %s", u, r.Status, r.Body)
		}
		return a.Failed, a.Held
	}
}

// checkHeldCountedPerSite: with site 2's last message held, site 2's
// notice and Mail count see it and site 3's do not; Network Admin's count
// the network's.
func checkHeldCountedPerSite(t *testing.T, n *wpsite.Network) {
	hold := `global $wpdb;
$t  = $wpdb->base_prefix . 'mailsvc_logs';
$id = (int) $wpdb->get_var( "SELECT id FROM {$t} WHERE site_id = 2 ORDER BY id DESC LIMIT 1" );
$st = $wpdb->get_var( $wpdb->prepare( "SELECT status FROM {$t} WHERE id = %d", $id ) );
$wpdb->query( $wpdb->prepare( "UPDATE {$t} SET status = 'captured' WHERE id = %d", $id ) );
echo wp_json_encode( array( 'id' => $id, 'status' => $st ) );`
	var row struct {
		ID     int64
		Status string
	}
	if err := json.Unmarshal([]byte(n.PHP(t, hold)), &row); err != nil || row.ID == 0 {
		t.Fatalf("hold site 2's last message: %+v %v", row, err)
	}
	t.Cleanup(func() {
		n.PHP(t, fmt.Sprintf(`global $wpdb; $wpdb->update( $wpdb->base_prefix . 'mailsvc_logs', array( 'status' => %s ), array( 'id' => %d ) );`, wpsite.PHPString(row.Status), row.ID))
	})
	held := func(blog int64) string {
		return strings.TrimSpace(n.PHPOnSite(t, blog, `echo mailsvc_bridge_attention_held();`))
	}
	if got := held(2); got == "0" {
		t.Errorf("site 2 counts %s held, want its own held message", got)
	}
	if got := held(3); got != "0" {
		t.Errorf("site 3 counts %s held, want 0: site 2's held mail is not its own", got)
	}
}
