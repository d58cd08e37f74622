package takeover

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/wordpress"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/fakes/snsfake"
	"github.com/mailsvc/mailsvc/test/servicetest"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// topic is the SNS topic the SES connection trusts.
const topic = "arn:aws:sns:us-east-1:123456789012:ses-events"

// hookRecorder is a must-use plugin that hooks every action the service
// fires in WordPress and appends what each callback received to a file,
// one JSON line per call (a WP_Error as its code, message and data). A
// test email to throw@example.com makes its callback throw after
// recording, so the test sees that a throwing hook runs once.
const hookRecorder = `<?php
foreach ( array( 'mail_svc_test_email_sent', 'mail_svc_pro_webhook_received', 'mail_svc_pro_webhook_ses', 'mail_svc_api_debug', 'mail_svc_delivered', 'wp_mail_failed' ) as $hook ) {
	add_action(
		$hook,
		function ( ...$args ) use ( $hook ) {
			foreach ( $args as $i => $arg ) {
				if ( $arg instanceof WP_Error ) {
					$args[ $i ] = array( 'code' => $arg->get_error_code(), 'message' => $arg->get_error_message(), 'data' => $arg->get_error_data() );
				}
			}
			file_put_contents( %s, wp_json_encode( array( 'hook' => $hook, 'args' => $args ) ) . "\n", FILE_APPEND | LOCK_EX );
			if ( 'mail_svc_test_email_sent' === $hook && 'throw@example.com' === $args[1] ) {
				throw new RuntimeException( 'recorder refuses throw@example.com' );
			}
		},
		10,
		10
	);
}
`

// recordedHook is one callback call the recorder wrote.
type recordedHook struct {
	Hook string            `json:"hook"`
	Args []json.RawMessage `json:"args"`
}

// hookSite is a WordPress site with the bridge and the recorder, and the
// service beside it.
type hookSite struct {
	site   *wpsite.Site
	record string
	db     *sql.DB
}

// recorded returns every call recorded so far.
func (h *hookSite) recorded(t *testing.T) []recordedHook {
	t.Helper()
	b, err := os.ReadFile(h.record)
	if os.IsNotExist(err) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	var out []recordedHook
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var r recordedHook
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("recorder line %q: %v", sc.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

// of returns the recorded calls of hook.
func (h *hookSite) of(t *testing.T, hook string) []recordedHook {
	t.Helper()
	var out []recordedHook
	for _, r := range h.recorded(t) {
		if r.Hook == hook {
			out = append(out, r)
		}
	}
	return out
}

// await waits until cond holds for the recorded calls.
func (h *hookSite) await(t *testing.T, what string, cond func([]recordedHook) bool) []recordedHook {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := h.recorded(t)
		if cond(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not recorded; recorded so far:\n%s", what, h.dump(got))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (h *hookSite) dump(got []recordedHook) string {
	var b strings.Builder
	for _, r := range got {
		js, _ := json.Marshal(r.Args)
		fmt.Fprintf(&b, "  %s %s\n", r.Hook, js)
	}
	return b.String()
}

// outbox counts the outbox rows: all, not done yet, done with an error.
func (h *hookSite) outbox(t *testing.T) (all, pending, failed int) {
	t.Helper()
	err := h.db.QueryRow("SELECT COUNT(*), COALESCE(SUM(done_at IS NULL), 0), COALESCE(SUM(last_error IS NOT NULL), 0) FROM "+h.site.Prefix+"mailsvc_hook_events").Scan(&all, &pending, &failed)
	if err != nil {
		t.Fatal(err)
	}
	return all, pending, failed
}

// runCron runs wp-cron.php once, as a site's cron request does.
func (h *hookSite) runCron(t *testing.T) {
	t.Helper()
	h.site.PHP(t, `require ABSPATH . 'wp-cron.php';`)
}

// runHooks runs the bridge's hook runner once in a PHP process of its own
// (what the runner route and the cron event do), whatever the cron
// schedule says.
func (h *hookSite) runHooks(t *testing.T) {
	t.Helper()
	h.site.PHP(t, `mailsvc_bridge_run_hooks( 10 );`)
}

// newHookSite installs a site with the bridge and the recorder, and
// loads a page so the bridge publishes its listeners.
func newHookSite(t *testing.T, dir, prefix string) *hookSite {
	t.Helper()
	site := wpsite.Install(t, wpsite.Options{Prefix: prefix})
	if out, err := run(t, dir, environ(dir), "wp", "install", "--wp-path", site.Dir); err != nil {
		t.Fatalf("wp install: %v\n%s", err, out)
	}
	h := &hookSite{site: site, record: filepath.Join(site.Dir, "hooks.jsonl")}
	if err := os.WriteFile(filepath.Join(site.ContentDir, "mu-plugins", "hook-recorder.php"), []byte(fmt.Sprintf(hookRecorder, wpsite.PHPString(h.record))), 0o644); err != nil {
		t.Fatal(err)
	}
	site.PHP(t, `echo "a page load publishes the listeners";`)
	db, err := sql.Open("mysql", site.DSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h.db = db
	return h
}

// args decodes a recorded call's arguments into dst, one pointer each.
func args(t *testing.T, r recordedHook, dst ...any) {
	t.Helper()
	if len(r.Args) != len(dst) {
		t.Fatalf("%s got %d arguments, want %d: %s", r.Hook, len(r.Args), len(dst), r.Args)
	}
	for i, d := range dst {
		if err := json.Unmarshal(r.Args[i], d); err != nil {
			t.Fatalf("%s argument %d %s: %v", r.Hook, i, r.Args[i], err)
		}
	}
}

// TestHostHooksRunInWordPress: beside a real WordPress site with the
// bridge, a mu-plugin hooking every action the service fires receives
// each event exactly once with the documented arguments — a connection
// test, a message wp_mail() queued and delivered, one the SMTP server
// refuses with 550 (WordPress's own wp_mail_failed with the wp_mail()
// arguments, embeds included), a signed SES webhook (both webhook hooks)
// and the debug mailer's payloads. While PHP does not answer, the events wait and one
// WP-cron run delivers them; once it answers, the service's signed
// request runs them without cron. A callback that throws runs once and
// its error is recorded.
func TestHostHooksRunInWordPress(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	dir := t.TempDir()
	h := newHookSite(t, dir, "wph_")
	site := h.site
	sink := smtpsink.Start(t, smtpsink.WithAuth("ses-user", "ses-pass"), smtpsink.WithRefusedRecipients("refuse@example.com"))
	sns := snsfake.Start(t, "us-east-1")
	env := environ(dir, "MAILSVC_WP_CONFIG="+site.WPConfigPath, "MAILSVC_TRUSTED_PROXIES=127.0.0.1",
		"MAIL_SVC_DEBUG_MAILER=true", "MAIL_SVC_DEBUG_LOG_DIR="+dir, "MAILSVC_WORKERS=1",
		"MAILSVC_SNS_CA_FILE="+sns.WriteCA(t, dir), "MAILSVC_SNS_DIAL_ADDR="+sns.Addr())
	appPW := site.CreateApplicationPassword(t, site.AdminLogin, "host hooks test")
	svc := servicetest.StartEnv(t, dir, env)
	api := func(method, path, body string) servicetest.Response {
		t.Helper()
		return servicetest.Call(t, method, svc.Base+path, body, func(r *http.Request) {
			r.SetBasicAuth(site.AdminLogin, appPW)
			r.Header.Set("X-Forwarded-Proto", "https")
		})
	}
	r := api("POST", "/connections", fmt.Sprintf(`{"name":"ses-smtp","driver":"ses","settings":{"delivery_mode":"smtp","smtp_host":%q,"smtp_port":%d,"smtp_encryption":"none","smtp_username":"ses-user","smtp_password":"ses-pass","from_email":"site@example.com","webhook_topic_arns":%q}}`,
		sink.Host(), sink.Port(), topic))
	var conn struct{ ID int64 }
	r.JSON(t, &conn)
	if r.Status != 201 {
		t.Fatalf("create connection: %d %s", r.Status, r.Body)
	}
	if r := api("PUT", "/settings", fmt.Sprintf(`{"default_connection_id":%d}`, conn.ID)); r.Status != 200 {
		t.Fatalf("settings: %d %s", r.Status, r.Body)
	}
	type testResult struct {
		LogID             int64  `json:"log_id"`
		Status            string `json:"status"`
		ProviderMessageID string `json:"provider_message_id"`
	}
	testEmail := func(to string) testResult {
		t.Helper()
		r := api("POST", fmt.Sprintf("/connections/%d/test", conn.ID), fmt.Sprintf(`{"to":%q}`, to))
		var res testResult
		r.JSON(t, &res)
		if r.Status != 200 || res.Status != "delivered" {
			t.Fatalf("test email to %s: %d %s", to, r.Status, r.Body)
		}
		return res
	}

	// 1. PHP does not answer (no web server): the events wait in the
	// outbox until a WP-cron run.
	first := testEmail("gone@example.com")
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(svc.Stderr.String(), "the site did not run its hooks") {
		if time.Now().After(deadline) {
			t.Fatalf("the service did not try the site:\n%s", svc.Stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := h.recorded(t); len(got) != 0 {
		t.Fatalf("hooks ran without PHP:\n%s", h.dump(got))
	}
	if all, pending, _ := h.outbox(t); all != 2 || pending != 2 {
		t.Fatalf("outbox: %d rows, %d pending; want the test email and its debug payload waiting", all, pending)
	}
	h.runCron(t)
	got := h.recorded(t)
	if len(got) != 2 {
		t.Fatalf("one cron run recorded:\n%s", h.dump(got))
	}
	sent := h.of(t, "mail_svc_test_email_sent")
	if len(sent) != 1 {
		t.Fatalf("test email hook after cron:\n%s", h.dump(got))
	}
	var (
		connID, logID int64
		to, subject   string
		success       bool
		errText       string
	)
	args(t, sent[0], &connID, &to, &subject, &logID, &success, &errText)
	if connID != conn.ID || to != "gone@example.com" || subject != "mailsvc test email" || logID != first.LogID || !success || errText != "" {
		t.Fatalf("mail_svc_test_email_sent(%d, %q, %q, %d, %v, %q), want (%d, gone@example.com, mailsvc test email, %d, true, \"\")",
			connID, to, subject, logID, success, errText, conn.ID, first.LogID)
	}
	if all, pending, failed := h.outbox(t); all != 2 || pending != 0 || failed != 0 {
		t.Fatalf("outbox after cron: %d rows, %d pending, %d failed", all, pending, failed)
	}

	// 2. The site answers: the service's signed request runs the hooks.
	site.StartPHPServer(t)
	runner := site.SiteURL + "/wp-json/mailsvc-bridge/v1/hooks"
	for _, tc := range []struct {
		name string
		ts   int64
		key  string
	}{
		{"unsigned", 0, ""},
		{"wrong key", time.Now().Unix(), wordpress.HookRunKey("not the salt")},
		{"replayed later", time.Now().Add(-10 * time.Minute).Unix(), ""},
	} {
		req, _ := http.NewRequest("POST", runner, nil)
		if tc.ts != 0 {
			sig := "0"
			if tc.key != "" {
				sig = wordpress.SignHookRun(tc.key, tc.ts)
			}
			req.Header.Set(wordpress.HookRunTimestampHeader, strconv.FormatInt(tc.ts, 10))
			req.Header.Set(wordpress.HookRunSignatureHeader, sig)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Fatalf("%s runner request: HTTP %d, want 401", tc.name, resp.StatusCode)
		}
	}

	site.PHP(t, `if ( ! wp_mail( 'ok@example.com', 'Order 1', 'Delivered body' ) ) { wpsite_fail( 'wp_mail failed' ); }`)
	if _, err := sink.WaitFor(2, 30*time.Second); err != nil {
		t.Fatalf("the wp_mail() message did not arrive: %v", err)
	}
	attachment := filepath.Join(site.Dir, "invoice.txt")
	if err := os.WriteFile(attachment, []byte("invoice"), 0o644); err != nil {
		t.Fatal(err)
	}
	site.PHP(t, fmt.Sprintf(`if ( ! wp_mail( array( 'refuse@example.com' ), 'Order 2', 'Refused body', array( 'X-Order: 2' ), array( %s ), array( 'logo' => %[1]s ) ) ) { wpsite_fail( 'wp_mail failed' ); }`, wpsite.PHPString(attachment)))
	bounce := sns.Notification(topic, snsfake.SESBounce(first.ProviderMessageID, "gone@example.com", true), time.Now(), "2")
	if r := servicetest.Call(t, "POST", svc.Base+"/pro/webhooks/ses", string(bounce), nil); r.Status != 200 || !strings.Contains(string(r.Body), `"matched":1`) {
		t.Fatalf("ses webhook: %d %s", r.Status, r.Body)
	}
	thrown := testEmail("throw@example.com")

	want := map[string]int{
		"mail_svc_test_email_sent":      2,
		"mail_svc_delivered":            1,
		"wp_mail_failed":                1,
		"mail_svc_pro_webhook_received": 1,
		"mail_svc_pro_webhook_ses":      1,
		"mail_svc_api_debug":            4, // one per attempt: the first test email, the two wp_mail() messages, the throwing test email
	}
	got = h.await(t, "every event", func(got []recordedHook) bool {
		n := map[string]int{}
		for _, r := range got {
			n[r.Hook]++
		}
		for hook, c := range want {
			if n[hook] < c {
				return false
			}
		}
		return true
	})
	if all, pending, failed := h.outbox(t); all != 10 || pending != 0 || failed != 1 {
		t.Fatalf("outbox: %d rows, %d pending, %d failed; want 10 done, 1 with the thrown error\n%s", all, pending, failed, h.dump(got))
	}
	// Nothing runs twice: the rows are done, and another run finds none.
	h.runHooks(t)
	n := map[string]int{}
	for _, r := range h.recorded(t) {
		n[r.Hook]++
	}
	for hook, c := range want {
		if n[hook] != c {
			t.Errorf("%s ran %d times, want %d\n%s", hook, n[hook], c, h.dump(h.recorded(t)))
		}
	}
	var lastError string
	if err := h.db.QueryRow("SELECT last_error FROM " + site.Prefix + "mailsvc_hook_events WHERE last_error IS NOT NULL").Scan(&lastError); err != nil || !strings.Contains(lastError, "recorder refuses throw@example.com") {
		t.Errorf("the thrown error is not recorded: %q %v", lastError, err)
	}

	// The arguments.
	logByRecipient := func(rcpt string) (id int64, pmid, lastErr string) {
		t.Helper()
		err := h.db.QueryRow("SELECT id, provider_message_id, last_error FROM "+site.Prefix+"mailsvc_logs WHERE recipients = ?", rcpt).Scan(&id, &pmid, &lastErr)
		if err != nil {
			t.Fatalf("log of %s: %v", rcpt, err)
		}
		return id, pmid, lastErr
	}
	okID, okPMID, _ := logByRecipient("ok@example.com")
	var dLog, dConn int64
	var dPMID string
	args(t, h.of(t, "mail_svc_delivered")[0], &dLog, &dConn, &dPMID)
	if dLog != okID || dConn != conn.ID || dPMID != okPMID || dPMID == "" {
		t.Errorf("mail_svc_delivered(%d, %d, %q), want (%d, %d, %q)", dLog, dConn, dPMID, okID, conn.ID, okPMID)
	}

	refusedID, _, refusedErr := logByRecipient("refuse@example.com")
	var failure struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Data    struct {
			To           []string          `json:"to"`
			Subject      string            `json:"subject"`
			Message      string            `json:"message"`
			Headers      map[string]string `json:"headers"`
			Attachments  []string          `json:"attachments"`
			Embeds       map[string]string `json:"embeds"`
			MailsvcLogID int64             `json:"mailsvc_log_id"`
		} `json:"data"`
	}
	args(t, h.of(t, "wp_mail_failed")[0], &failure)
	if failure.Code != "wp_mail_failed" || failure.Message != refusedErr || !strings.Contains(failure.Message, "550") ||
		len(failure.Data.To) != 1 || failure.Data.To[0] != "refuse@example.com" || failure.Data.Subject != "Order 2" ||
		failure.Data.Message != "Refused body" || failure.Data.Headers["X-Order"] != "2" ||
		len(failure.Data.Attachments) != 1 || failure.Data.Attachments[0] != attachment ||
		len(failure.Data.Embeds) != 1 || failure.Data.Embeds["logo"] != attachment || failure.Data.MailsvcLogID != refusedID {
		t.Errorf("wp_mail_failed WP_Error = %+v, want the wp_mail() arguments, log %d and the error %q", failure, refusedID, refusedErr)
	}

	var (
		provider, event, pmid, rcpt string
		whLog                       int64
		raw                         map[string]any
	)
	args(t, h.of(t, "mail_svc_pro_webhook_received")[0], &provider, &event, &whLog, &pmid, &rcpt, &raw)
	if provider != "ses" || event != "bounced" || whLog != first.LogID || pmid != first.ProviderMessageID || rcpt != "gone@example.com" || raw["notificationType"] != "Bounce" {
		t.Errorf("mail_svc_pro_webhook_received(%q, %q, %d, %q, %q, %v)", provider, event, whLog, pmid, rcpt, raw)
	}
	var (
		notification map[string]any
		topicARN     string
		envelope     map[string]any
	)
	args(t, h.of(t, "mail_svc_pro_webhook_ses")[0], &notification, &topicARN, &envelope)
	if notification["notificationType"] != "Bounce" || topicARN != topic || envelope["Type"] != "Notification" || envelope["TopicArn"] != topic {
		t.Errorf("mail_svc_pro_webhook_ses(%v, %q, %v)", notification, topicARN, envelope)
	}

	thrownSeen := false
	for _, c := range h.of(t, "mail_svc_test_email_sent") {
		args(t, c, &connID, &to, &subject, &logID, &success, &errText)
		thrownSeen = thrownSeen || (to == "throw@example.com" && logID == thrown.LogID)
	}
	if !thrownSeen {
		t.Errorf("no mail_svc_test_email_sent for log %d", thrown.LogID)
	}

	debugged := map[string]bool{}
	for _, c := range h.of(t, "mail_svc_api_debug") {
		var driver string
		var request, response map[string]any
		args(t, c, &driver, &request, &response)
		rcpts, _ := request["recipients"].([]any)
		if driver != "ses" || len(rcpts) != 1 || response["outcome"] == nil {
			t.Errorf("mail_svc_api_debug(%q, %v, %v)", driver, request, response)
			continue
		}
		debugged[rcpts[0].(string)] = true
	}
	for _, rcpt := range []string{"gone@example.com", "ok@example.com", "refuse@example.com", "throw@example.com"} {
		if !debugged[rcpt] {
			t.Errorf("no mail_svc_api_debug for the message to %s", rcpt)
		}
	}
}

// TestHostHooksExactlyOnceAcrossReplicas: three services on one site
// send test emails at once while two kinds of PHP consumers (the site's
// web server, answering every replica's request with several workers, and
// runner processes started as cron would) drain the outbox: each event
// runs exactly once.
func TestHostHooksExactlyOnceAcrossReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	dir := t.TempDir()
	h := newHookSite(t, dir, "wpx_")
	site := h.site
	site.StartPHPServer(t)
	sink := smtpsink.Start(t)
	appPW := site.CreateApplicationPassword(t, site.AdminLogin, "replicas test")
	var svcs []*servicetest.Service
	for i := range 3 {
		d := filepath.Join(dir, fmt.Sprint("replica", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		svcs = append(svcs, servicetest.StartEnv(t, d, environ(d, "MAILSVC_WP_CONFIG="+site.WPConfigPath, "MAILSVC_TRUSTED_PROXIES=127.0.0.1")))
	}
	_, body := call(t, "POST", svcs[0].Base+"/connections", fmt.Sprintf(
		`{"name":"sink","driver":"smtp","settings":{"host":%q,"port":%d,"encryption":"none","auth":false,"from_email":"site@example.com"}}`, sink.Host(), sink.Port()), site.AdminLogin, appPW)
	var conn struct{ ID int64 }
	if err := json.Unmarshal(body, &conn); err != nil || conn.ID == 0 {
		t.Fatalf("create connection: %s", body)
	}

	const perReplica = 4
	stop := make(chan struct{})
	var consumers sync.WaitGroup
	consumers.Add(1)
	go func() {
		defer consumers.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			h.runHooks(t)
		}
	}()
	var senders sync.WaitGroup
	logIDs := make(chan int64, 3*perReplica)
	for _, svc := range svcs {
		for i := range perReplica {
			senders.Add(1)
			go func() {
				defer senders.Done()
				status, body := call(t, "POST", fmt.Sprintf("%s/connections/%d/test", svc.Base, conn.ID), fmt.Sprintf(`{"to":"r%d@example.com"}`, i), site.AdminLogin, appPW)
				var res struct {
					LogID int64 `json:"log_id"`
				}
				if err := json.Unmarshal(body, &res); err != nil || status != 200 || res.LogID == 0 {
					t.Errorf("test email: %d %s", status, body)
					return
				}
				logIDs <- res.LogID
			}()
		}
	}
	senders.Wait()
	close(logIDs)
	want := map[int64]bool{}
	for id := range logIDs {
		want[id] = true
	}
	if len(want) != 3*perReplica {
		t.Fatalf("%d distinct test emails, want %d", len(want), 3*perReplica)
	}
	h.await(t, "every test email", func(got []recordedHook) bool { return len(got) >= len(want) })
	close(stop)
	consumers.Wait()
	h.runHooks(t)
	seen := map[int64]int{}
	for _, c := range h.of(t, "mail_svc_test_email_sent") {
		var connID, logID int64
		var to, subject, errText string
		var success bool
		args(t, c, &connID, &to, &subject, &logID, &success, &errText)
		seen[logID]++
	}
	for id := range want {
		if seen[id] != 1 {
			t.Errorf("log %d: mail_svc_test_email_sent ran %d times, want once", id, seen[id])
		}
	}
	if len(h.recorded(t)) != len(want) {
		t.Errorf("%d calls recorded for %d events:\n%s", len(h.recorded(t)), len(want), h.dump(h.recorded(t)))
	}
	if all, pending, failed := h.outbox(t); all != len(want) || pending != 0 || failed != 0 {
		t.Errorf("outbox: %d rows, %d pending, %d failed", all, pending, failed)
	}

	// Claims: 150 events drained by three PHP runners at once run once
	// each; an event held by a request that died is claimed again once
	// its claim has expired, not before; one whose requests kept dying is
	// given up by the cron event, with the reason recorded.
	if _, err := h.db.Exec("DELETE FROM " + site.Prefix + "mailsvc_hook_events"); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(h.record); err != nil {
		t.Fatal(err)
	}
	table := site.Prefix + "mailsvc_hook_events"
	var values []string
	for i := range 150 {
		values = append(values, fmt.Sprintf("('mail_svc_delivered', '[%d, %d, \"pm-%d\"]', UTC_TIMESTAMP(6))", 1000+i, conn.ID, i))
	}
	if _, err := h.db.Exec("INSERT INTO " + table + " (hook, args, created_at) VALUES " + strings.Join(values, ", ")); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		// died 301 s ago: claimed again
		"INSERT INTO " + table + " (hook, args, created_at, claimed_by, claimed_at, attempts) VALUES ('mail_svc_delivered', '[2000, 1, \"died\"]', UTC_TIMESTAMP(6), 'dead', UTC_TIMESTAMP(6) - INTERVAL 301 SECOND, 1)",
		// held by a live request: left alone
		"INSERT INTO " + table + " (hook, args, created_at, claimed_by, claimed_at, attempts) VALUES ('mail_svc_delivered', '[2001, 1, \"held\"]', UTC_TIMESTAMP(6), 'alive', UTC_TIMESTAMP(6), 1)",
		// died three times: given up
		"INSERT INTO " + table + " (hook, args, created_at, claimed_by, claimed_at, attempts) VALUES ('mail_svc_delivered', '[2002, 1, \"dying\"]', UTC_TIMESTAMP(6), 'dead', UTC_TIMESTAMP(6) - INTERVAL 301 SECOND, 3)",
		// older than seven days: pruned
		"INSERT INTO " + table + " (hook, args, created_at) VALUES ('mail_svc_delivered', '[2003, 1, \"old\"]', UTC_TIMESTAMP(6) - INTERVAL 8 DAY)",
	} {
		if _, err := h.db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	var runners sync.WaitGroup
	for range 3 {
		runners.Add(1)
		go func() { defer runners.Done(); h.runHooks(t) }()
	}
	runners.Wait()
	h.runHooks(t)
	ran := map[int64]int{}
	for _, c := range h.of(t, "mail_svc_delivered") {
		var logID, connID int64
		var pmid string
		args(t, c, &logID, &connID, &pmid)
		ran[logID]++
	}
	for i := range 150 {
		if ran[int64(1000+i)] != 1 {
			t.Errorf("event %d ran %d times, want once", i, ran[int64(1000+i)])
		}
	}
	if ran[2000] != 1 || ran[2001] != 0 || ran[2002] != 0 {
		t.Errorf("expired claim ran %d times (want 1), live claim %d (want 0), given-up event %d (want 0)", ran[2000], ran[2001], ran[2002])
	}
	// The cron event: WP-cron's schedule is due again in a minute, so its
	// callback is run directly here.
	site.PHP(t, `mailsvc_bridge_cron_run_hooks();`)
	var givenUp string
	if err := h.db.QueryRow("SELECT COALESCE(last_error, '') FROM " + table + " WHERE args LIKE '[2002,%' AND done_at IS NOT NULL").Scan(&givenUp); err != nil || !strings.Contains(givenUp, "died 3 times") {
		t.Errorf("the event whose requests kept dying: %q %v", givenUp, err)
	}
	var old int
	if err := h.db.QueryRow("SELECT COUNT(*) FROM " + table + " WHERE args LIKE '[2003,%'").Scan(&old); err != nil || old != 0 {
		t.Errorf("an event older than seven days is still there (%d, %v)", old, err)
	}
}
