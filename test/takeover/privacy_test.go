package takeover

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// privacyFlowPHP runs WordPress's own personal data request flow for
// %[1]s (a PHP string) as wp-admin's AJAX handlers do: a confirmed
// request per action (wp_create_user_request), then every registered
// exporter and eraser page by page, each answer checked for the shape the
// handlers require and handed to WordPress's page processing:
// wp_privacy_process_personal_data_export_page accumulates the export and,
// after the last exporter, groups it and fires
// wp_privacy_personal_data_export_file (where wp-admin builds the zip
// file, and this script keeps the grouped data);
// wp_privacy_process_personal_data_erasure_page marks the request
// completed after the last eraser. It prints the grouped export, the
// email log eraser's answers and the erase request's status.
const privacyFlowPHP = `require_once ABSPATH . 'wp-admin/includes/privacy-tools.php';
$email   = %[1]s;
$grouped = null;
add_action( 'wp_privacy_personal_data_export_file', function ( $request_id ) use ( &$grouped ) {
	$grouped = get_post_meta( $request_id, '_export_data_grouped', true );
} );
$export_id = wp_create_user_request( $email, 'export_personal_data', array(), 'confirmed' );
$erase_id  = wp_create_user_request( $email, 'remove_personal_data', array(), 'confirmed' );
if ( is_wp_error( $export_id ) || is_wp_error( $erase_id ) ) {
	wpsite_fail( 'wp_create_user_request: ' . ( is_wp_error( $export_id ) ? $export_id->get_error_message() : $erase_id->get_error_message() ) );
}
$exporters = apply_filters( 'wp_privacy_personal_data_exporters', array() );
$index = 0;
foreach ( $exporters as $key => $exporter ) {
	++$index;
	for ( $page = 1; ; ++$page ) {
		$response = call_user_func( $exporter['callback'], $email, $page );
		if ( ! is_array( $response ) || ! array_key_exists( 'data', $response ) || ! is_array( $response['data'] ) || ! array_key_exists( 'done', $response ) ) {
			wpsite_fail( "exporter $key page $page answered " . wp_json_encode( $response ) );
		}
		$response = wp_privacy_process_personal_data_export_page( $response, $index, $email, $page, $export_id, false, $key );
		if ( $response['done'] ) {
			break;
		}
		if ( $page > 50 ) {
			wpsite_fail( "exporter $key never done" );
		}
	}
}
$erasers = apply_filters( 'wp_privacy_personal_data_erasers', array() );
$answers = array();
$index = 0;
foreach ( $erasers as $key => $eraser ) {
	++$index;
	for ( $page = 1; ; ++$page ) {
		$response = call_user_func( $eraser['callback'], $email, $page );
		foreach ( array( 'items_removed', 'items_retained', 'messages', 'done' ) as $k ) {
			if ( ! is_array( $response ) || ! array_key_exists( $k, $response ) ) {
				wpsite_fail( "eraser $key page $page answered " . wp_json_encode( $response ) );
			}
		}
		if ( ! is_array( $response['messages'] ) ) {
			wpsite_fail( "eraser $key messages are not an array" );
		}
		if ( 'mailsvc-email-log' === $key ) {
			$answers[] = $response;
		}
		$response = wp_privacy_process_personal_data_erasure_page( $response, $index, $email, $page, $erase_id );
		if ( $response['done'] ) {
			break;
		}
		if ( $page > 50 ) {
			wpsite_fail( "eraser $key never done" );
		}
	}
}
echo wp_json_encode( array(
	'export'         => $grouped,
	'erase'          => $answers,
	'erase_status'   => get_post_status( $erase_id ),
	'exporter_names' => array_keys( $exporters ),
) );`

// TestPersonalDataRequestsInWordPress: beside a real WordPress site,
// WordPress's own export and erase flow for a person reaches the mail the
// service logged for them through the bridge's exporter and eraser: the
// export holds their logs (the same items the service's GET
// /privacy/export gives), the provider event and the suppression entry
// naming them; after the erase no answer of the service names them and
// the dashboard totals are unchanged.
func TestPersonalDataRequestsInWordPress(t *testing.T) {
	site, dir := installTakeoverSite(t, "wpp_")
	sink := smtpsink.Start(t)
	svc, appPW := serveSite(t, site, dir, "privacy test")
	api := func(method, path, body string) (int, []byte) {
		t.Helper()
		return call(t, method, svc.Base+path, body, site.AdminLogin, appPW)
	}
	deliverToSink(t, svc.Base, site.AdminLogin, appPW, sink, "")
	site.CreateUser(t, "pat", "Pat@example.com", "subscriber", "pat-password-1234")

	out := site.PHP(t, `echo wp_json_encode( array(
	wp_mail( 'Pat Doe <pat@example.com>', 'Your order 1', 'Order details for Pat' ),
	wp_mail( 'pat@example.com', 'Your order 2', '<p>Second order for Pat</p>', array( 'Content-Type: text/html', 'Cc: other@example.com' ) ),
	wp_mail( 'desk@example.com', 'Contact form', 'Pat asks a question', array( 'Reply-To: Pat Doe <PAT@example.com>' ) ),
	wp_mail( 'other@example.com', 'Unrelated', 'for someone else' ),
) );`)
	if out != "[true,true,true,true]" {
		t.Fatalf("wp_mail() = %s", out)
	}
	if _, err := sink.WaitFor(4, 60*time.Second); err != nil {
		t.Fatalf("delivery: %v\n%s", err, svc.Stderr)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var st core.QueueStats
		_, b := api("GET", "/logs/queue/stats", "")
		if json.Unmarshal(b, &st) == nil && st.Delivered == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue stats %s, want 4 delivered", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	db, err := sql.Open("mysql", site.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var order1 int64
	if err := db.QueryRow("SELECT id FROM wpp_mailsvc_logs WHERE subject = 'Your order 1'").Scan(&order1); err != nil {
		t.Fatal(err)
	}
	// A provider event and a suppression entry, as the Pro webhooks write them.
	now := time.Now().UTC()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{"INSERT INTO wpp_mailsvc_log_events (log_id, provider, event, occurred_at, detail, created_at) VALUES (?, 'ses', 'delivered', ?, ?, ?)",
			[]any{order1, now, `{"recipient":"pat@example.com"}`, now}},
		{"INSERT INTO wpp_mailsvc_suppressions (email, reason, source_event, created_at) VALUES ('pat@example.com', 'complaint', 'ses:complaint', ?)", []any{now}},
	} {
		if _, err := db.Exec(q.sql, q.args...); err != nil {
			t.Fatal(err)
		}
	}

	_, statsBefore := api("GET", "/dashboard/stats", "")
	_, queueBefore := api("GET", "/logs/queue/stats", "")
	status, restExport := api("GET", "/privacy/export?email=pat@example.com", "")
	if status != 200 {
		t.Fatalf("GET /privacy/export: %d %s", status, restExport)
	}

	var flow struct {
		Export map[string]struct {
			Items map[string][]core.PersonalDatum `json:"items"`
		} `json:"export"`
		Erase       []map[string]any `json:"erase"`
		EraseStatus string           `json:"erase_status"`
		Exporters   []string         `json:"exporter_names"`
	}
	raw := site.PHP(t, fmt.Sprintf(privacyFlowPHP, wpsite.PHPString("PAT@example.com")))
	if err := json.Unmarshal([]byte(raw), &flow); err != nil {
		t.Fatalf("privacy flow output %q: %v", raw, err)
	}
	// The email log's items in WordPress's export, as the service exports them.
	fromWP := map[string][]core.PersonalDatum{}
	for group, g := range flow.Export {
		if strings.HasPrefix(group, "mailsvc-") {
			for id, data := range g.Items {
				fromWP[id] = data
			}
		}
	}
	var rest struct {
		Data []struct {
			ItemID string               `json:"item_id"`
			Data   []core.PersonalDatum `json:"data"`
		} `json:"data"`
		Done bool `json:"done"`
	}
	if err := json.Unmarshal(restExport, &rest); err != nil || !rest.Done {
		t.Fatalf("REST export %s (%v)", restExport, err)
	}
	fromREST := map[string][]core.PersonalDatum{}
	for _, it := range rest.Data {
		fromREST[it.ItemID] = it.Data
	}
	if len(fromWP) != 5 || !reflect.DeepEqual(fromWP, fromREST) {
		t.Fatalf("WordPress's export holds %d email log items:\n%+v\nthe service's:\n%+v\n(exporters %v)", len(fromWP), fromWP, fromREST, flow.Exporters)
	}
	exported, _ := json.Marshal(fromWP)
	for _, want := range []string{"Your order 1", "Order details for Pat", "<p>Second order for Pat</p>", "Contact form", "Reply-To", "mailsvc-log-event-", "complaint"} {
		quoted, _ := json.Marshal(want) // as the export's JSON writes it
		if !strings.Contains(string(exported), strings.Trim(string(quoted), `"`)) {
			t.Errorf("the export lacks %q: %s", want, exported)
		}
	}
	if strings.Contains(string(exported), "Unrelated") || strings.Contains(string(exported), "other@example.com") {
		t.Errorf("the export names someone else: %s", exported)
	}
	if len(flow.Erase) != 1 || flow.Erase[0]["items_removed"] != true || flow.Erase[0]["done"] != true || flow.EraseStatus != "request-completed" {
		t.Fatalf("erase answers %+v, request %s", flow.Erase, flow.EraseStatus)
	}

	// No answer of the service names the person any more.
	var list []struct{ ID int64 }
	_, b := api("GET", "/logs?per_page=100", "")
	if err := json.Unmarshal(b, &list); err != nil || len(list) != 4 {
		t.Fatalf("GET /logs: %s (%v)", b, err)
	}
	paths := []string{"/logs?per_page=100", "/logs?search=pat@example.com", "/logs?search=order", "/dashboard/activity",
		"/privacy/export?email=pat@example.com", "/tools/debug-logs", "/pro/suppressions", "/logs/queue/stats", "/dashboard/stats"}
	for _, l := range list {
		paths = append(paths, fmt.Sprintf("/logs/%d", l.ID))
	}
	for _, p := range paths {
		status, b := api("GET", p, "")
		if status != 200 && p != "/pro/suppressions" { // Pro answers without a licence too, with an error
			t.Errorf("GET %s = %d %s", p, status, b)
		}
		lower := strings.ToLower(string(b))
		if strings.Contains(lower, "pat@example.com") || strings.Contains(lower, "pat doe") || strings.Contains(lower, "for pat") {
			t.Errorf("GET %s = %d still names the person: %s", p, status, b)
		}
	}
	if _, after := api("GET", "/dashboard/stats", ""); string(after) != string(statsBefore) {
		t.Errorf("dashboard stats changed:\n%s\nwere\n%s", after, statsBefore)
	}
	if _, after := api("GET", "/logs/queue/stats", ""); string(after) != string(queueBefore) {
		t.Errorf("queue stats changed: %s, were %s", after, queueBefore)
	}
	var left int
	if err := db.QueryRow("SELECT COUNT(*) FROM wpp_mailsvc_suppressions").Scan(&left); err != nil || left != 0 {
		t.Errorf("%d suppression entries left (%v)", left, err)
	}
}
