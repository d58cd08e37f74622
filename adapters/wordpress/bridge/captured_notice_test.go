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

// TestFloodHeldNotice: while the flood guard holds messages (status
// held), an administrator sees its own notice on every wp-admin screen,
// the Mail page's included, with the count and the way to the held
// messages on the Email logs screen, beside the staging guard's; a user
// without the capability sees nothing.
func TestFloodHeldNotice(t *testing.T) {
	site, _ := bridgedSite(t, "wpfh_")
	site.CreateUser(t, "sub", "sub@example.com", "subscriber", "sub-password-1")
	out := site.PHP(t, `for ( $i = 0; $i < 3; $i++ ) { wp_mail( "r$i@customer.example", 'Reset', "Body $i" ); }
global $wpdb;
$wpdb->query( "UPDATE {$wpdb->prefix}mailsvc_logs SET status = 'held'" );
$wpdb->query( "UPDATE {$wpdb->prefix}mailsvc_logs SET status = 'captured' ORDER BY id LIMIT 1" );
require_once ABSPATH . 'wp-admin/includes/class-wp-screen.php';
require_once ABSPATH . 'wp-admin/includes/screen.php';
$out = array();
foreach ( array( 'admin' => 1, 'sub' => get_user_by( 'login', 'sub' )->ID ) as $who => $id ) {
	wp_set_current_user( $id );
	foreach ( array( 'dashboard', 'toplevel_page_mailsvc' ) as $screen ) {
		set_current_screen( $screen );
		ob_start();
		do_action( 'admin_notices' );
		$out[ $who . ' ' . $screen ] = ob_get_clean();
	}
}
$out['count'] = (string) mailsvc_bridge_attention_count( array( 'service' => 'down' ) );
echo wp_json_encode( $out );`)
	var got map[string]string
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("PHP output %q: %v", out, err)
	}
	for _, k := range []string{"admin dashboard", "admin toplevel_page_mailsvc", "sub dashboard", "sub toplevel_page_mailsvc"} {
		v := got[k]
		want := strings.HasPrefix(k, "admin")
		if has := strings.Contains(v, `id="mailsvc-flood-held"`); has != want {
			t.Errorf("%s: flood notice shown %v, want %v:\n%s", k, has, want, v)
		}
		if want && (!strings.Contains(v, "2 messages are held by the flood guard, not sent.") || !strings.Contains(v, "page=mailsvc#/logs?status=held")) {
			t.Errorf("%s: the flood notice does not give the count and the way to the held messages:\n%s", k, v)
		}
	}
	if !strings.Contains(got["admin dashboard"], "1 message is held, not sent.") {
		t.Errorf("the staging guard's notice is gone beside the flood guard's:\n%s", got["admin dashboard"])
	}
	if got["count"] != "3" {
		t.Errorf("the Mail menu counts %s, want 3 (1 captured, 2 held)", got["count"])
	}
}
