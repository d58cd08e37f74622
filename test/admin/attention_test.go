package admin

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// attentionAnswer is what the test reads of GET /dashboard/attention.
type attentionAnswer struct {
	FailingConnections []struct {
		Name      string `json:"name"`
		LastError string `json:"last_error"`
	} `json:"failing_connections"`
	Retrying     int    `json:"retrying"`
	Failed24h    int    `json:"failed_24h"`
	LastFailedID *int64 `json:"last_failed_id"`
	Count        int    `json:"count"`
}

// awaitAttention asks the service for its attention object until ok
// says it is the one awaited, for up to a minute.
func awaitAttention(t *testing.T, s *bridgeSite, what string, ok func(attentionAnswer) bool) attentionAnswer {
	t.Helper()
	var a attentionAnswer
	var r servicetest.Response
	awaitMinute(t, func() bool {
		a = attentionAnswer{}
		r = servicetest.Call(t, "GET", s.svc.Base+"/dashboard/attention", "", s.admin)
		if r.Status != 200 {
			return false
		}
		r.JSON(t, &a)
		return ok(a)
	}, func() string {
		logs := servicetest.Call(t, "GET", s.svc.Base+"/logs", "", s.admin)
		return fmt.Sprintf("%s: the service says %d %s\nthe logs: %s\n%s", what, r.Status, r.Body, logs.Body, s.svc.Stdout)
	})
	return a
}

// TestTroubleWhereOwnersLook: a connection delivers, then its SMTP
// server refuses: a message fails for good and three password resets
// retry. The Mail dashboard shows the connection failing, with the error,
// and the retrying resets in Recent activity with their next attempt; the
// WordPress Dashboard shows the notice, the Mail widget with the
// connection failing, and the count on the Mail menu. Dismissed, the
// notice stays hidden until a new message fails. With the service
// stopped, the WordPress Dashboard says so.
func TestTroubleWhereOwnersLook(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	b := newBrowser(t)
	sink := smtpsink.Start(t)
	// A local site (application passwords over plain HTTP) that is the
	// live one: its mail is sent, not held by the staging guard.
	s := startBridgeSiteWith(t, wpsite.Options{Prefix: "wpt_", EnvironmentType: "local", ExtraConfig: "define( 'MAILSVC_ENVIRONMENT', 'production' );"}, "attention test")
	s.deliverTo(t, sink)
	s.site.PHP(t, `wp_mail( 'ann@customer.example', 'Welcome', 'Hello' );`)
	if _, err := sink.WaitFor(1, time.Minute); err != nil {
		r := servicetest.Call(t, "GET", s.svc.Base+"/logs", "", s.admin)
		t.Fatalf("%v; the logs: %s\n%s", err, r.Body, s.svc.Stdout)
	}

	// The server refuses: one message for good, then everything for now.
	sink.FailNext(1, 550, "5.7.1 Relaying denied")
	s.site.PHP(t, `wp_mail( 'bob@customer.example', 'Your order', 'Thanks' );`)
	awaitAttention(t, s, "the order failed", func(a attentionAnswer) bool { return a.Failed24h == 1 })
	sink.FailNext(100, 451, "4.3.0 Mail server temporarily unavailable")
	s.site.PHP(t, `foreach ( array( 'cy', 'di', 'ed' ) as $who ) { wp_mail( "$who@customer.example", 'Password reset', 'Someone asked to reset your password.' ); }`)
	first := awaitAttention(t, s, "the connection failing with three resets retrying", func(a attentionAnswer) bool {
		return len(a.FailingConnections) == 1 && a.Retrying == 3
	})
	if !strings.Contains(first.FailingConnections[0].LastError, "temporarily unavailable") || first.Count != 1 {
		t.Fatalf("attention %+v: want the refusal as the last error and the failed order counted", first)
	}

	// The Mail dashboard inside wp-admin, for an owner who has closed
	// WordPress's welcome panel.
	s.site.PHP(t, fmt.Sprintf(`update_user_meta( get_user_by( 'login', %s )->ID, 'show_welcome_panel', 0 );`, wpsite.PHPString(s.site.AdminLogin)))
	browserLogin(t, b, s.site, s.site.AdminLogin)
	b.run("open wp-admin's Mail page",
		chromedp.Navigate(s.site.SiteURL+"/wp-admin/admin.php?page=mailsvc"),
		chromedp.WaitVisible("iframe#mailsvc-screens", chromedp.ByQuery))
	var frames []*cdp.Node
	b.run("find the frame", chromedp.Nodes("iframe#mailsvc-screens", &frames, chromedp.ByQuery))
	in := chromedp.FromNode(frames[0])
	b.run("the dashboard says what needs attention",
		chromedp.WaitVisible("#dash-attention", chromedp.ByQuery, in),
		chromedp.WaitVisible(".conn-health", chromedp.ByQuery, in))
	var attention, health, activity, retrying string
	b.run("read the dashboard",
		chromedp.Text("#dash-attention", &attention, chromedp.ByQuery, in),
		chromedp.Text(".conn-health", &health, chromedp.ByQuery, in),
		chromedp.Text(`section[aria-labelledby="act-h"]`, &activity, chromedp.ByQuery, in),
		chromedp.Text("#dash-retrying", &retrying, chromedp.ByQuery, in))
	for _, want := range []string{"Office relay is failing since", "temporarily unavailable", "3 messages are waiting to be retried. Next attempt:", "1 message failed in the last 24 hours."} {
		if !strings.Contains(attention, want) {
			t.Errorf("the attention card lacks %q:\n%s", want, attention)
		}
	}
	if !strings.Contains(strings.ToLower(health), "failing") || !strings.Contains(health, "temporarily unavailable") {
		t.Errorf("the connection's health says %q, want failing with the error", health)
	}
	if !strings.Contains(activity, "retrying") || !strings.Contains(activity, "Password reset") || !strings.Contains(activity, "Next attempt:") {
		t.Errorf("recent activity does not list the retrying resets with their next attempt:\n%s", activity)
	}
	if retrying != "3" {
		t.Errorf("retrying %q, want 3", retrying)
	}
	b.labelled("wp-admin's Mail page")
	b.shots("wp-admin-mail-attention")

	// The WordPress Dashboard: the notice, the widget, the menu's count.
	openDashboard := func(what string) {
		b.run(what, chromedp.Navigate(s.site.SiteURL+"/wp-admin/index.php"), chromedp.WaitVisible("#adminmenu", chromedp.ByQuery))
	}
	openDashboard("open the WordPress Dashboard")
	if !b.has("#mailsvc-attention-failing") {
		t.Fatalf("no failing notice on the WordPress Dashboard:\n%s", b.text())
	}
	if txt := b.textOf("#mailsvc-attention-failing"); !strings.Contains(txt, "Mail is failing.") || !strings.Contains(txt, "The connection Office relay has been failing since") ||
		!strings.Contains(txt, "3 messages are waiting to be retried") || !strings.Contains(txt, "1 message failed in the last 24 hours.") {
		t.Errorf("the notice says:\n%s", txt)
	}
	if txt := b.textOf("#mailsvc-widget"); !strings.Contains(txt, "Office relay") || !strings.Contains(txt, "Failing") || !strings.Contains(txt, "Retrying: 3") {
		t.Errorf("the Mail widget says:\n%s", txt)
	}
	if txt := b.textOf("#mailsvc-menu-count .pending-count"); txt != "1" {
		t.Errorf("the Mail menu's count is %q, want 1 (the failed order)", txt)
	}
	b.shots("wp-dashboard-attention")
	b.shots("wp-dashboard-widget", chromedp.Evaluate(`document.getElementById("mailsvc_dashboard_widget").scrollIntoView()`, nil))
	// On a phone the menu opens from the admin bar, with the count.
	b.resize(phoneWidth)
	b.run("open the menu on a phone", chromedp.Evaluate(`scrollTo(0, 0)`, nil), click("#wp-admin-bar-menu-toggle .ab-item"),
		chromedp.Poll(`document.getElementById("wpwrap").classList.contains("wp-responsive-open")`, nil, pollFast),
		chromedp.WaitVisible("#mailsvc-menu-count", chromedp.ByQuery))
	b.shot("wp-admin-menu-count", phoneWidth)
	b.resize(desktopWidth)

	// Dismissed, it stays hidden on the next page...
	b.run("dismiss the notice", click("#mailsvc-attention-failing .notice-dismiss"),
		chromedp.Poll(`document.body.dataset.mailsvcDismissed === "failing"`, nil, pollFast))
	openDashboard("the Dashboard after the dismissal")
	if b.has("#mailsvc-attention-failing") {
		t.Errorf("the dismissed notice shows again")
	}
	// ...until a new message fails (seen once the kept answer expires).
	sink.Reset()
	sink.FailNext(100, 550, "5.7.1 Relaying denied")
	s.site.PHP(t, `wp_mail( 'fay@customer.example', 'Your invoice', 'Attached' );`)
	awaitAttention(t, s, "a new failure", func(a attentionAnswer) bool { return a.Failed24h > first.Failed24h })
	s.site.PHP(t, `delete_transient( 'mailsvc_attention' );`)
	openDashboard("the Dashboard after a new failure")
	if !b.has("#mailsvc-attention-failing") {
		t.Errorf("a new failure does not show the dismissed notice again")
	}

	// The service stopped: the WordPress Dashboard says so.
	s.svc.Stop(t)
	s.site.PHP(t, `delete_transient( 'mailsvc_attention' );`)
	openDashboard("the Dashboard with the service stopped")
	if txt := b.textOf("#mailsvc-unavailable"); !strings.Contains(txt, "The mail service is not running.") || !strings.Contains(txt, "systemctl start mailsvc") {
		t.Errorf("the Dashboard with the service stopped says %q", txt)
	}
	if txt := b.textOf("#mailsvc-widget"); !strings.Contains(txt, "The mail service is not running.") {
		t.Errorf("the Mail widget with the service stopped says %q", txt)
	}
	b.shots("wp-dashboard-service-stopped")
}
