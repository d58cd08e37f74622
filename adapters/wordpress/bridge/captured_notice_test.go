package bridge_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCapturedNoticeOnEveryAdminScreen: while the staging guard holds
// messages, an administrator sees it on every wp-admin screen (the Mail
// page's screens have their own banner), with the count and the way to
// the Mail page; a user without the capability sees nothing, and nothing
// is shown while no message is held.
func TestCapturedNoticeOnEveryAdminScreen(t *testing.T) {
	site, _ := bridgedSite(t, "wpcn_")
	site.CreateUser(t, "sub", "sub@example.com", "subscriber", "sub-password-1")
	notices := func(setup string) map[string]string {
		t.Helper()
		out := site.PHP(t, setup+`
require_once ABSPATH . 'wp-admin/includes/class-wp-screen.php';
require_once ABSPATH . 'wp-admin/includes/screen.php';
$out = array();
foreach ( array( 'admin' => 1, 'sub' => get_user_by( 'login', 'sub' )->ID ) as $who => $id ) {
	wp_set_current_user( $id );
	foreach ( array( 'dashboard', 'edit-post', 'toplevel_page_mailsvc' ) as $screen ) {
		set_current_screen( $screen );
		ob_start();
		do_action( 'admin_notices' );
		$out[ $who . ' ' . $screen ] = ob_get_clean();
	}
}
echo wp_json_encode( $out );`)
		var got map[string]string
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("PHP output %q: %v", out, err)
		}
		return got
	}

	// A queued message is not held: no notice.
	for k, v := range notices(`wp_mail( 'one@customer.example', 'Order', 'Thanks' );`) {
		if strings.Contains(v, "mailsvc-captured") {
			t.Errorf("%s: a notice with nothing held:\n%s", k, v)
		}
	}
	// Two held messages (as the service leaves them on a copy).
	got := notices(`wp_mail( 'two@customer.example', 'Order', 'Thanks' );
global $wpdb;
$wpdb->query( "UPDATE {$wpdb->prefix}mailsvc_logs SET status = 'captured'" );`)
	for k, v := range got {
		want := k == "admin dashboard" || k == "admin edit-post"
		if has := strings.Contains(v, `id="mailsvc-captured"`); has != want {
			t.Errorf("%s: notice shown %v, want %v:\n%s", k, has, want, v)
		}
		if want && (!strings.Contains(v, "2 messages are held, not sent.") || !strings.Contains(v, "admin.php?page=mailsvc")) {
			t.Errorf("%s: the notice does not give the count and the way to the Mail page:\n%s", k, v)
		}
	}
}
