package takeover

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// moderatePHP makes WordPress send one comment moderation email (to the
// admin, the post's author) and then a plain wp_mail() with subject, which
// marks how far delivery has come.
const moderatePHP = `$post = wp_insert_post( array( 'post_title' => 'Hello', 'post_status' => 'publish', 'post_author' => 1 ) );
$comment = wp_insert_comment( array( 'comment_post_ID' => $post, 'comment_content' => 'Buy now', 'comment_author' => 'Vi', 'comment_author_email' => 'vi@example.com', 'comment_approved' => 0 ) );
wp_notify_moderator( $comment );
wp_mail( 'marker@example.com', %s, 'marker' );`

// TestEmailControlsThroughTheBinary: beside a real WordPress site, the
// built binary switches comment moderation emails off over REST; WordPress's
// wp_notify_moderator() then delivers nothing while a plain wp_mail() is
// delivered, the count shows on GET /settings/email-controls and on the
// dashboard's stats; switched on again, the moderation email is delivered.
func TestEmailControlsThroughTheBinary(t *testing.T) {
	site, dir := installTakeoverSite(t, "wpc_")
	sink := smtpsink.Start(t)
	svc, appPW := serveSite(t, site, dir, "email controls test")
	api := func(method, path, body string, want int) []byte {
		t.Helper()
		return callWant(t, method, svc.Base+path, body, site.AdminLogin, appPW, want, nil)
	}
	deliverToSink(t, svc.Base, site.AdminLogin, appPW, sink, "")
	api("PUT", "/settings/email-controls", `{"comment_moderation":false,"newsletter":false}`, 422)
	api("PUT", "/settings/email-controls", `{"comment_moderation":false}`, 200)

	subjects := func(n int) []string {
		t.Helper()
		got, err := sink.WaitFor(n, 60*time.Second)
		if err != nil {
			t.Fatalf("delivery: %v\n%s", err, svc.Stderr)
		}
		var out []string
		for _, m := range got {
			out = append(out, parse(t, m.Data).Header.Get("Subject"))
		}
		return out
	}
	site.PHP(t, fmt.Sprintf(moderatePHP, wpsite.PHPString("marker one")))
	if got := subjects(1); len(got) != 1 || got[0] != "marker one" {
		t.Fatalf("delivered %q while moderation emails are off, want the marker alone", got)
	}
	// The logs table is the queue: the marker's log is its only row.
	var logs []struct{ Subject string }
	if err := json.Unmarshal(api("GET", "/logs", "", 200), &logs); err != nil || len(logs) != 1 {
		t.Fatalf("logs %+v (%v), want the marker's alone", logs, err)
	}
	var controls struct {
		Controls []struct {
			Kind    string
			Enabled bool
			Count   int64
		}
		Suppressed int64
	}
	if err := json.Unmarshal(api("GET", "/settings/email-controls", "", 200), &controls); err != nil {
		t.Fatal(err)
	}
	for _, c := range controls.Controls {
		if want := c.Kind == "comment_moderation"; (c.Count == 1) != want || c.Enabled == want {
			t.Errorf("%s: enabled %v, count %d", c.Kind, c.Enabled, c.Count)
		}
	}
	var stats struct {
		EmailControls struct {
			Suppressed int64            `json:"suppressed"`
			ByKind     map[string]int64 `json:"by_kind"`
		} `json:"email_controls"`
	}
	if err := json.Unmarshal(api("GET", "/dashboard/stats?range=today", "", 200), &stats); err != nil {
		t.Fatal(err)
	}
	if stats.EmailControls.Suppressed != 1 || stats.EmailControls.ByKind["comment_moderation"] != 1 {
		t.Fatalf("dashboard email controls %+v, want the one moderation email", stats.EmailControls)
	}

	api("PUT", "/settings/email-controls", `{"comment_moderation":true}`, 200)
	site.PHP(t, fmt.Sprintf(moderatePHP, wpsite.PHPString("marker two")))
	got := subjects(3)
	if len(got) != 3 || !slices.ContainsFunc(got[1:], func(s string) bool { return strings.Contains(s, "Please moderate") }) || !slices.Contains(got[1:], "marker two") {
		t.Fatalf("delivered %q with moderation emails on, want the moderation email and the second marker", got)
	}
}
