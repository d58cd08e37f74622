package bridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	api "github.com/mailsvc/mailsvc/adapters/http"
	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/wordpress"
	"github.com/mailsvc/mailsvc/adapters/wordpress/bridge"
	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// emailControlPrelude loads what the triggers use: the admin's functions
// (as wp-admin loads them, its filters included), the automatic updater,
// a signed-in administrator, and helpers that make a fresh user and call
// a protected method.
const emailControlPrelude = `require_once ABSPATH . 'wp-admin/includes/admin.php';
require_once ABSPATH . 'wp-admin/includes/class-wp-upgrader.php';
require_once ABSPATH . 'wp-admin/includes/class-wp-automatic-updater.php';
wp_set_current_user( 1 );
function t_user() {
	$login = 'u' . strtolower( wp_generate_password( 10, false ) );
	$id    = wp_insert_user( array( 'user_login' => $login, 'user_email' => $login . '@example.com', 'user_pass' => 'Pw-' . $login ) );
	if ( is_wp_error( $id ) ) {
		wpsite_fail( 'wp_insert_user: ' . $id->get_error_message() );
	}
	return $id;
}
function t_email() {
	return 'p' . strtolower( wp_generate_password( 10, false ) ) . '@example.com';
}
function t_call( $object, $method, ...$args ) {
	$m = new ReflectionMethod( $object, $method );
	$m->setAccessible( true );
	return $m->invoke( $object, ...$args );
}
function t_comment( $approved ) {
	$post = wp_insert_post( array( 'post_title' => 'Hello', 'post_status' => 'publish', 'post_author' => 1 ) );
	return wp_insert_comment( array( 'comment_post_ID' => $post, 'comment_content' => 'Nice', 'comment_author' => 'Vi', 'comment_author_email' => t_email(), 'comment_approved' => $approved ) );
}
function t_request( $action, $status ) {
	$id = wp_create_user_request( t_email(), $action, array(), $status );
	if ( is_wp_error( $id ) ) {
		wpsite_fail( 'wp_create_user_request: ' . $id->get_error_message() );
	}
	return $id;
}
function t_update( $type, $slug ) {
	return (object) array( 'result' => true, 'name' => ucfirst( $slug ), 'item' => (object) array( $type => $slug, 'url' => '', 'current_version' => '1.0', 'new_version' => '1.1' ) );
}
$t_updater = new WP_Automatic_Updater();
`

// emailControlTriggers are, per kind, PHP that makes WordPress send
// exactly one email of that kind through its own functions, and the
// recipient and a part of the subject of that email.
var emailControlTriggers = []struct {
	kind, php, to, subject string
}{
	{"new_user_admin", `wp_new_user_notification( t_user(), null, 'admin' );`, "admin@example.com", "New User Registration"},
	{"new_user_user", `wp_new_user_notification( t_user(), null, 'user' );`, "@example.com", "Login Details"},
	{"password_change_user", `wp_update_user( array( 'ID' => t_user(), 'user_pass' => 'Changed-1' ) );`, "@example.com", "Password Changed"},
	{"password_change_admin", `wp_password_change_notification( get_userdata( t_user() ) );`, "admin@example.com", "Password Changed"},
	{"email_change_user", `wp_update_user( array( 'ID' => t_user(), 'user_email' => t_email() ) );`, "@example.com", "Email Changed"},
	{"comment_notification", `wp_set_current_user( 0 ); // not the post author: WordPress does not tell an author of their own moderation
wp_notify_postauthor( t_comment( 1 ) );`, "admin@example.com", "Comment:"},
	{"comment_moderation", `wp_notify_moderator( t_comment( 0 ) );`, "admin@example.com", "Please moderate"},
	{"auto_update_core", `t_call( $t_updater, 'send_email', 'success', (object) array( 'current' => '6.1.9', 'version' => '6.1.9', 'response' => 'latest', 'locale' => 'en_US' ) );`, "admin@example.com", "has updated to WordPress"},
	{"auto_update_plugins", `t_call( $t_updater, 'after_plugin_theme_update', array( 'plugin' => array( t_update( 'plugin', 'akismet' ) ) ) );`, "admin@example.com", "Some plugins"},
	{"auto_update_themes", `t_call( $t_updater, 'send_plugin_theme_email', 'success', array( 'theme' => array( t_update( 'theme', 'twentytwenty' ) ) ), array() );`, "admin@example.com", "Some themes"},
	{"privacy_request_user", `wp_send_user_request( t_request( 'export_personal_data', 'pending' ) );`, "@example.com", "Confirm Action"},
	{"privacy_request_confirmed_admin", `_wp_privacy_send_request_confirmation_notification( t_request( 'export_personal_data', 'confirmed' ) );`, "admin@example.com", "Action Confirmed"},
	{"privacy_erasure_done_user", `$r = t_request( 'remove_personal_data', 'confirmed' );
wp_update_post( array( 'ID' => $r, 'post_status' => 'request-completed' ) );
_wp_privacy_send_erasure_fulfillment_notification( $r );`, "@example.com", "Erasure Request Fulfilled"},
	{"privacy_export_ready_user", `$r = t_request( 'export_personal_data', 'confirmed' );
update_post_meta( $r, '_export_file_name', 'export.zip' );
wp_privacy_send_personal_data_export_email( $r );`, "@example.com", "Personal Data Export"},
	{"admin_email_change", `update_option( 'admin_email', t_email() );`, "@example.com", "Admin Email Changed"},
	{"admin_email_change_confirm", `update_option_new_admin_email( 'admin@example.com', t_email() );`, "@example.com", "New Admin Email Address"},
}

// emailControlAPI serves the email control routes over the site's
// database, authenticated as WordPress authenticates (an application
// password of the site's administrator).
func emailControlAPI(t *testing.T, site *wpsite.Site, db *store.DB) (call func(method, body string) app.EmailControlsState) {
	t.Helper()
	src, err := wordpress.NewGormSource(db.Gorm(), site.Prefix)
	if err != nil {
		t.Fatal(err)
	}
	srv := &api.Server{
		Auth:          wordpress.NewAuthenticator(src, wordpress.Site{Salts: site.Salts, EnvironmentType: "local"}),
		Settings:      &app.Settings{Store: db.Settings(), Connections: db.Connections()},
		EmailControls: &app.EmailControls{Store: db.Settings(), Counts: db.EmailControls()},
		Hooks:         &core.Hooks{},
		Logger:        slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	password := site.CreateApplicationPassword(t, site.AdminLogin, "email controls")
	return func(method, body string) app.EmailControlsState {
		t.Helper()
		req, err := http.NewRequest(method, ts.URL+api.Namespace+"/settings/email-controls", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth(site.AdminLogin, password)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s /settings/email-controls: %d %s", method, resp.StatusCode, b)
		}
		var st app.EmailControlsState
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatalf("decode %s: %v", b, err)
		}
		return st
	}
}

// countOf returns the count of kind in a state.
func countOf(st app.EmailControlsState, kind string) (int64, bool) {
	for _, c := range st.Controls {
		if c.Kind == kind {
			return c.Count, c.Enabled
		}
	}
	return -1, false
}

// queuedLogs returns every log of the queue, oldest first.
func queuedLogs(t *testing.T, db *store.DB) []*core.Log {
	t.Helper()
	logs, _, err := db.Logs().FindLogs(context.Background(), core.LogFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(logs)
	return logs
}

// TestEmailControlsStopCoreEmails switches each control off over REST,
// triggers its email through WordPress's own function, and checks that
// nothing reached the queue and the kind's count went up by one; then
// switches it on again and checks that the same trigger queues the email
// as before and counts nothing.
func TestEmailControlsStopCoreEmails(t *testing.T) {
	site, db := bridgedSite(t, "wpec_")
	call := emailControlAPI(t, site, db)
	if got := len(emailControlTriggers); got != len(core.EmailControlKinds) {
		t.Fatalf("%d triggers for %d kinds", got, len(core.EmailControlKinds))
	}
	for i, tr := range emailControlTriggers {
		t.Run(tr.kind, func(t *testing.T) {
			if core.EmailControlKinds[i].Kind != tr.kind {
				t.Fatalf("trigger %d is for %s, kind %d is %s", i, tr.kind, i, core.EmailControlKinds[i].Kind)
			}
			before := call("GET", "")
			countBefore, _ := countOf(before, tr.kind)

			off := call("PUT", fmt.Sprintf(`{%q:false}`, tr.kind))
			if _, enabled := countOf(off, tr.kind); enabled {
				t.Fatal("still enabled after PUT false")
			}
			logsBefore := len(queuedLogs(t, db))
			site.PHP(t, emailControlPrelude+tr.php)
			if logs := queuedLogs(t, db); len(logs) != logsBefore {
				t.Fatalf("switched off, yet %d message(s) queued: %q", len(logs)-logsBefore, logs[len(logs)-1].Message.Subject)
			}
			after := call("GET", "")
			if n, _ := countOf(after, tr.kind); n != countBefore+1 {
				t.Fatalf("count %d after one stopped email, want %d", n, countBefore+1)
			}
			if after.Suppressed != before.Suppressed+1 {
				t.Fatalf("total %d, want %d (another kind counted?)", after.Suppressed, before.Suppressed+1)
			}

			call("PUT", fmt.Sprintf(`{%q:true}`, tr.kind))
			site.PHP(t, emailControlPrelude+tr.php)
			added := queuedLogs(t, db)[logsBefore:]
			if len(added) != 1 {
				t.Fatalf("switched on: %d message(s) queued, want 1", len(added))
			}
			m := added[0].Message
			if !strings.Contains(m.Subject, tr.subject) || len(m.To) != 1 || !strings.Contains(m.To[0].Email, tr.to) {
				t.Fatalf("queued %q to %v, want %q to *%s", m.Subject, m.To, tr.subject, tr.to)
			}
			if h := headerValues(m.Headers, "X-Mailsvc-Control"); len(h) != 0 {
				t.Fatalf("the control's mark reached the message: %v", h)
			}
			if n, _ := countOf(call("GET", ""), tr.kind); n != countBefore+1 {
				t.Fatalf("switched on, the count moved to %d", n)
			}
		})
	}
}

// headerValues returns the values of the headers named name.
func headerValues(headers []core.Header, name string) []string {
	var out []string
	for _, h := range headers {
		if strings.EqualFold(h.Name, name) {
			out = append(out, h.Value)
		}
	}
	return out
}

// TestEmailControlsPluginsOffThemesOn: WordPress's updater leaves the
// switched-off plugins out of a plugin and theme update email and sends
// the themes' part; the plugins' part is counted.
func TestEmailControlsPluginsOffThemesOn(t *testing.T) {
	site, db := bridgedSite(t, "wpecm_")
	call := emailControlAPI(t, site, db)
	call("PUT", `{"auto_update_plugins":false}`)
	site.PHP(t, emailControlPrelude+`t_call( $t_updater, 'after_plugin_theme_update', array( 'plugin' => array( t_update( 'plugin', 'akismet' ) ), 'theme' => array( t_update( 'theme', 'twentytwenty' ) ) ) );`)
	logs := queuedLogs(t, db)
	if len(logs) != 1 || !strings.Contains(logs[0].Message.Subject, "Some themes") || strings.Contains(logs[0].Message.Text, "Akismet") {
		t.Fatalf("queued %d: %+v", len(logs), logs)
	}
	st := call("GET", "")
	if n, _ := countOf(st, "auto_update_plugins"); n != 1 || st.Suppressed != 1 {
		t.Fatalf("plugins counted %d, total %d; want 1 and 1", n, st.Suppressed)
	}
}

// TestEmailControlsWithoutCounterSend: when the count cannot be written
// (the counts table is gone), a switched-off email is sent rather than
// lost.
func TestEmailControlsWithoutCounterSend(t *testing.T) {
	site, db := bridgedSite(t, "wpecn_")
	ctx := context.Background()
	if err := db.Settings().SaveSettings(ctx, core.ScopeEmailControls, map[string]any{"comment_moderation": false, "password_change_user": false}); err != nil {
		t.Fatal(err)
	}
	if err := db.Gorm().Exec("DROP TABLE " + db.TableName("email_control_counts")).Error; err != nil {
		t.Fatal(err)
	}
	site.PHP(t, emailControlPrelude+`wp_notify_moderator( t_comment( 0 ) );
wp_update_user( array( 'ID' => t_user(), 'user_pass' => 'Changed-1' ) );`)
	var subjects []string
	for _, l := range queuedLogs(t, db) {
		subjects = append(subjects, l.Message.Subject)
	}
	if len(subjects) != 2 || !strings.Contains(subjects[0], "Please moderate") || !strings.Contains(subjects[1], "Password Changed") {
		t.Fatalf("queued %q; want the moderation and the password change emails", subjects)
	}
}

// TestEmailControlTagOfAKindThatIsOn: a tag header that other code wrote
// stops nothing while its kind is switched on; once the kind is off, the
// same email is stopped and counted.
func TestEmailControlTagOfAKindThatIsOn(t *testing.T) {
	site, db := bridgedSite(t, "wpect_")
	call := emailControlAPI(t, site, db)
	send := `wp_mail( 'ann@example.com', 'Tagged', 'Hello', array( 'X-Mailsvc-Control: comment_moderation' ) );`
	site.PHP(t, emailControlPrelude+send)
	if logs := queuedLogs(t, db); len(logs) != 1 || logs[0].Message.Subject != "Tagged" {
		t.Fatalf("with the kind on: queued %+v; want the email", logs)
	}
	call("PUT", `{"comment_moderation":false}`)
	site.PHP(t, emailControlPrelude+send)
	if logs := queuedLogs(t, db); len(logs) != 1 {
		t.Fatalf("with the kind off: %d queued; want still 1", len(logs))
	}
	if n, _ := countOf(call("GET", ""), "comment_moderation"); n != 1 {
		t.Fatalf("comment_moderation counted %d; want 1", n)
	}
}

// TestEmailControlKindsMatchBridge: the bridge lists the kinds the
// service knows, in its order.
func TestEmailControlKindsMatchBridge(t *testing.T) {
	src := string(bridge.Files()["mailsvc-bridge/email-controls.php"])
	start := strings.Index(src, "function mailsvc_bridge_email_control_kinds()")
	if start < 0 {
		t.Fatal("the bridge has no mailsvc_bridge_email_control_kinds()")
	}
	body := src[start:]
	body = body[:strings.Index(body, ");")]
	var got []string
	for _, m := range regexp.MustCompile(`'([a-z_]+)'`).FindAllStringSubmatch(body, -1) {
		got = append(got, m[1])
	}
	var want []string
	for _, k := range core.EmailControlKinds {
		want = append(want, k.Kind)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("bridge kinds %v\nservice kinds %v", got, want)
	}
}
