package admin

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// mailsvcAbilities are the abilities the bridge registers.
var mailsvcAbilities = []string{
	"mailsvc/get-stats", "mailsvc/search-logs", "mailsvc/get-log", "mailsvc/list-connections",
	"mailsvc/check-installation", "mailsvc/send-test-email", "mailsvc/resend-log",
}

// TestAbilities runs the bridge's abilities on whichever WordPress the
// harness installs. Without the Abilities API (before 6.9) nothing is
// registered and nothing fails: WordPress has no wp-abilities route and
// the bridge added no hook. With it: the abilities are listed in the
// category mailsvc, readonly ones annotated so, for an administrator and
// not for a subscriber (whose run is refused); mailsvc/get-stats, run by
// an administrator logged in by cookie (so the call to the service
// carries no credential of its own, only the bridge's signed statement),
// answers the service's queue counts; mailsvc/send-test-email, run with an
// application password, sends a message that reaches the SMTP sink, and
// the service's errors come back as WordPress errors with the service's
// code. A forged statement sent straight to the service is refused.
func TestAbilities(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	s := startBridgeSite(t)
	hasAPI := strings.TrimSpace(s.site.PHP(t, `echo function_exists( 'wp_register_ability' ) ? 'yes' : 'no';`)) == "yes"
	adminAuth := s.admin

	if !hasAPI {
		t.Run("no Abilities API", func(t *testing.T) {
			out := s.site.PHP(t, `echo has_action( 'wp_abilities_api_init', 'mailsvc_bridge_register_abilities' ) ? 'hooked' : 'none';
echo ' ', function_exists( 'mailsvc_bridge_register_abilities' ) ? 'defined' : 'missing';`)
			if strings.TrimSpace(out) != "none defined" {
				t.Errorf("without the Abilities API: %q, want no hook (and the bridge loaded)", out)
			}
			r := servicetest.Call(t, "GET", s.restURL(true, "wp-abilities/v1/abilities", ""), "", adminAuth)
			if r.Status != 404 || r.Code() != "rest_no_route" {
				t.Errorf("wp-abilities/v1/abilities: %d %s, want WordPress's 404 rest_no_route", r.Status, r.Body)
			}
			r = servicetest.Call(t, "GET", s.restURL(true, "mailsvc/v1/settings", ""), "", adminAuth)
			if r.Status != 200 {
				t.Errorf("the REST API through the bridge: %d %s", r.Status, r.Body)
			}
		})
		return
	}

	s.site.CreateUser(t, "sub", "sub@example.com", "subscriber", "Sub-secret-1")
	subPW := s.site.CreateApplicationPassword(t, "sub", "abilities test")
	subAuth := servicetest.Basic("sub", subPW)
	cookie := s.site.LoginCookie(t, s.site.AdminLogin)
	nonce := s.site.RESTNonce(t, s.site.AdminLogin, cookie)
	cookieAuth := func(r *http.Request) {
		r.AddCookie(cookie)
		r.Header.Set("X-WP-Nonce", nonce)
	}

	list := func(t *testing.T, auth func(*http.Request)) map[string]abilityItem {
		t.Helper()
		r := servicetest.Call(t, "GET", s.restURL(true, "wp-abilities/v1/abilities", "per_page=100"), "", auth)
		var items []abilityItem
		if r.Status != 200 || json.Unmarshal(r.Body, &items) != nil {
			t.Fatalf("wp-abilities/v1/abilities: %d %s", r.Status, r.Body)
		}
		out := map[string]abilityItem{}
		for _, a := range items {
			out[a.Name] = a
		}
		return out
	}

	t.Run("listed for an administrator", func(t *testing.T) {
		for name, auth := range map[string]func(*http.Request){"application password": adminAuth, "cookie": cookieAuth} {
			got := list(t, auth)
			for _, want := range mailsvcAbilities {
				a, ok := got[want]
				if !ok {
					t.Errorf("%s: %s not listed (have %v)", name, want, abilityNames(got))
					continue
				}
				readonly := want != "mailsvc/send-test-email" && want != "mailsvc/resend-log"
				if a.Category != "mailsvc" || !a.Meta.ShowInREST || a.Meta.Annotations["readonly"] != readonly ||
					a.Meta.Annotations["destructive"] != false || a.Meta.Annotations["idempotent"] != readonly {
					t.Errorf("%s: %s = %+v, want category mailsvc, readonly %v", name, want, a, readonly)
				}
				if a.Output["type"] != "object" {
					t.Errorf("%s: %s has no output schema: %v", name, want, a.Output)
				}
			}
		}
		r := servicetest.Call(t, "GET", s.restURL(true, "wp-abilities/v1/categories/mailsvc", ""), "", adminAuth)
		if r.Status != 200 || !strings.Contains(string(r.Body), `"slug":"mailsvc"`) {
			t.Errorf("category mailsvc: %d %s", r.Status, r.Body)
		}
	})

	t.Run("not for a subscriber", func(t *testing.T) {
		got := list(t, subAuth)
		for name := range got {
			if strings.HasPrefix(name, "mailsvc/") {
				t.Errorf("a subscriber sees %s", name)
			}
		}
		r := servicetest.Call(t, "GET", s.restURL(true, "wp-abilities/v1/abilities/mailsvc/get-stats", ""), "", subAuth)
		if r.Status != 404 {
			t.Errorf("a subscriber's GET of mailsvc/get-stats: %d %s, want 404", r.Status, r.Body)
		}
		r = servicetest.Call(t, "GET", s.restURL(true, "wp-abilities/v1/abilities/mailsvc/get-stats/run", ""), "", subAuth)
		if r.Status != 403 {
			t.Errorf("a subscriber's run of mailsvc/get-stats: %d %s, want 403", r.Status, r.Body)
		}
		r = servicetest.Call(t, "POST", s.restURL(true, "wp-abilities/v1/abilities/mailsvc/send-test-email/run", ""), `{"input":{"to":"x@example.com","connection_id":1}}`, subAuth)
		if r.Status != 403 {
			t.Errorf("a subscriber's run of mailsvc/send-test-email: %d %s, want 403", r.Status, r.Body)
		}
	})

	// The site's environment type is local: the staging guard holds mail
	// (once it has read the site's state).
	s.site.PHP(t, `wp_mail( 'a@example.org', 'one', 'body' ); wp_mail( 'b@example.org', 'two', 'body' );`)

	t.Run("get-stats answers the queue counts", func(t *testing.T) {
		type counts struct{ Queued, Sending, Failed, Delivered, Captured int }
		queue := func() counts {
			var c counts
			r := servicetest.Call(t, "GET", s.restURL(true, "mailsvc/v1/logs/queue/stats", ""), "", adminAuth)
			r.JSON(t, &c)
			return c
		}
		stats := func() counts {
			var got struct {
				Totals counts `json:"totals"`
			}
			r := servicetest.Call(t, "GET", s.restURL(true, "wp-abilities/v1/abilities/mailsvc/get-stats/run", ""), "", cookieAuth)
			if r.Status != 200 {
				t.Fatalf("run mailsvc/get-stats by cookie: %d %s", r.Status, r.Body)
			}
			r.JSON(t, &got)
			return got.Totals
		}
		// The totals are read one after another, not as one snapshot: a
		// message the staging guard moves from sending to captured between
		// the two reads is counted twice for that moment. Await the two.
		for deadline := time.Now().Add(15 * time.Second); ; {
			got := stats()
			if got.Captured+got.Queued+got.Sending+got.Failed+got.Delivered == 2 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("get-stats after two wp_mail(): %+v, want the two counted", got)
			}
			time.Sleep(100 * time.Millisecond)
		}
		// Held ones are released into the queue (and fail: there is no
		// connection), until the counts stand still.
		for try := 0; ; try++ {
			before := queue()
			got := stats()
			after := queue()
			if got.Captured != 0 && try < 20 {
				if r := servicetest.Call(t, "POST", s.restURL(true, "mailsvc/v1/capture/release", ""), `{"all":true}`, adminAuth); r.Status != 200 && r.Status != 404 {
					t.Fatalf("release: %d %s", r.Status, r.Body)
				}
			}
			if (before != after || got.Captured != 0) && try < 20 {
				time.Sleep(250 * time.Millisecond)
				continue // the queue moved meanwhile
			}
			after.Captured = got.Captured
			if got != after || after.Queued+after.Sending+after.Failed+after.Delivered != 2 {
				t.Fatalf("get-stats totals %+v; the service's queue %+v", got, after)
			}
			break
		}
		r := servicetest.Call(t, "POST", s.restURL(true, "wp-abilities/v1/abilities/mailsvc/get-stats/run", ""), `{}`, adminAuth)
		if r.Status != 405 {
			t.Errorf("POST to a readonly ability: %d %s, want WordPress's 405", r.Status, r.Body)
		}
		q := url.Values{"input[search]": {"b@example.org"}, "input[per_page]": {"1"}}
		r = servicetest.Call(t, "GET", s.restURL(true, "wp-abilities/v1/abilities/mailsvc/search-logs/run", q.Encode()), "", adminAuth)
		var page struct {
			Logs  []map[string]any `json:"logs"`
			Total int              `json:"total"`
		}
		if r.Status != 200 || json.Unmarshal(r.Body, &page) != nil || page.Total != 1 || len(page.Logs) != 1 {
			t.Errorf("search-logs for b@example.org: %d %s", r.Status, r.Body)
		}
	})

	t.Run("send-test-email reaches the sink", func(t *testing.T) {
		sink := smtpsink.Start(t)
		r := servicetest.Call(t, "POST", s.restURL(true, "mailsvc/v1/connections", ""),
			fmt.Sprintf(`{"name":"sink","driver":"smtp","settings":{"host":%q,"port":%d,"encryption":"none","auth":false,"from_email":"site@example.com"}}`, sink.Host(), sink.Port()), adminAuth)
		var conn struct{ ID int64 }
		if r.Status != 201 || json.Unmarshal(r.Body, &conn) != nil || conn.ID == 0 {
			t.Fatalf("create connection: %d %s", r.Status, r.Body)
		}
		if r := servicetest.Call(t, "PUT", s.restURL(true, "mailsvc/v1/settings", ""), `{"capture_allow_list":["ability@example.net"]}`, adminAuth); r.Status != 200 {
			t.Fatalf("allow the test address past the staging guard: %d %s", r.Status, r.Body)
		}
		if r := servicetest.Call(t, "PUT", s.restURL(true, "mailsvc/v1/settings", ""), fmt.Sprintf(`{"default_connection_id":%d}`, conn.ID), adminAuth); r.Status != 200 {
			t.Fatalf("set the default connection: %d %s", r.Status, r.Body)
		}
		time.Sleep(1100 * time.Millisecond) // the guard reuses its state for a second (capture.DefaultTTL)
		r = servicetest.Call(t, "GET", s.restURL(true, "wp-abilities/v1/abilities/mailsvc/list-connections/run", ""), "", cookieAuth)
		if r.Status != 200 || !strings.Contains(string(r.Body), `"health_status"`) || !strings.Contains(string(r.Body), `"total":1`) {
			t.Errorf("list-connections: %d %s", r.Status, r.Body)
		}
		r = servicetest.Call(t, "POST", s.restURL(true, "wp-abilities/v1/abilities/mailsvc/send-test-email/run", ""),
			fmt.Sprintf(`{"input":{"to":"ability@example.net","connection_id":%d,"subject":"from an ability"}}`, conn.ID), adminAuth)
		var res struct {
			Success bool   `json:"success"`
			LogID   int64  `json:"log_id"`
			To      string `json:"to"`
		}
		if r.Status != 200 || json.Unmarshal(r.Body, &res) != nil || !res.Success || res.LogID == 0 || res.To != "ability@example.net" {
			t.Fatalf("run mailsvc/send-test-email: %d %s", r.Status, r.Body)
		}
		got, err := sink.WaitFor(1, 30*time.Second)
		if err != nil {
			t.Fatalf("the sink got no message: %v", err)
		}
		if len(got[0].To) != 1 || got[0].To[0] != "ability@example.net" || !strings.Contains(string(got[0].Data), "from an ability") {
			t.Errorf("the sink got %+v", got[0])
		}
		r = servicetest.Call(t, "GET", s.restURL(true, "wp-abilities/v1/abilities/mailsvc/get-log/run", fmt.Sprintf("input[id]=%d", res.LogID)), "", cookieAuth)
		if r.Status != 200 || !strings.Contains(string(r.Body), `"attempts_history"`) {
			t.Errorf("get-log of the test email: %d %s", r.Status, r.Body)
		}

		// The service's error, with its code and status.
		r = servicetest.Call(t, "POST", s.restURL(true, "wp-abilities/v1/abilities/mailsvc/send-test-email/run", ""),
			`{"input":{"to":"ability@example.net","connection_id":999999}}`, adminAuth)
		if r.Status != 422 || r.Code() != "validation_error" {
			t.Errorf("a missing connection: %d %s, want the service's 422 validation_error", r.Status, r.Body)
		}
		r = servicetest.Call(t, "POST", s.restURL(true, "wp-abilities/v1/abilities/mailsvc/resend-log/run", ""), `{"input":{"id":999999}}`, adminAuth)
		if r.Status != 404 || r.Code() != "not_found" {
			t.Errorf("resend a missing log: %d %s, want the service's 404 not_found", r.Status, r.Body)
		}
		// Without connection_id: the default connection.
		r = servicetest.Call(t, "POST", s.restURL(true, "wp-abilities/v1/abilities/mailsvc/send-test-email/run", ""),
			`{"input":{"to":"ability@example.net","subject":"through the default"}}`, cookieAuth)
		if r.Status != 200 || !strings.Contains(string(r.Body), `"success":true`) {
			t.Errorf("send-test-email without connection_id: %d %s", r.Status, r.Body)
		}
		if got, err := sink.WaitFor(2, 30*time.Second); err != nil || len(got) != 2 || !strings.Contains(string(got[1].Data), "through the default") {
			t.Errorf("the sink got %d messages (%v), want the second through the default connection", len(got), err)
		}

		// resend-log puts the first test email back in the queue.
		r = servicetest.Call(t, "POST", s.restURL(true, "wp-abilities/v1/abilities/mailsvc/resend-log/run", ""), fmt.Sprintf(`{"input":{"id":%d}}`, res.LogID), adminAuth)
		if r.Status != 200 || !strings.Contains(string(r.Body), `"resent":true`) {
			t.Fatalf("resend-log: %d %s", r.Status, r.Body)
		}
		if got, err := sink.WaitFor(3, 30*time.Second); err != nil || len(got) != 3 || !strings.Contains(string(got[2].Data), "from an ability") {
			t.Errorf("the sink got %d messages (%v), want the resent one third", len(got), err)
		}
	})

	t.Run("run from PHP", func(t *testing.T) {
		// No HTTP request at all (WP-CLI, an MCP adapter): the bridge's
		// statement stands for the current user.
		out := s.site.PHP(t, `define( 'MAILSVC_SERVICE_URL', `+wpsite.PHPString("http://"+s.svc.Addr)+` );
wp_set_current_user( 1 );
$r = wp_get_ability( 'mailsvc/check-installation' )->execute();
echo is_wp_error( $r ) ? 'error ' . $r->get_error_code() . ': ' . $r->get_error_message() : ( is_array( $r['checks'] ?? null ) ? 'checks' : wp_json_encode( $r ) );
wp_set_current_user( 0 );
$r = wp_get_ability( 'mailsvc/check-installation' )->execute();
echo ' ', is_wp_error( $r ) ? $r->get_error_code() : 'ran';`)
		if strings.TrimSpace(out) != "checks ability_invalid_permissions" {
			t.Errorf("from PHP: %q, want the doctor's checks for the administrator, refused for nobody", out)
		}
	})

	t.Run("a forged statement is refused", func(t *testing.T) {
		r := servicetest.Call(t, "GET", "http://"+s.svc.Addr+"/wp-json/mailsvc/v1/logs/queue/stats", "", func(r *http.Request) {
			r.Header.Set("X-Mailsvc-Wp-Session", fmt.Sprintf("1:%d:%s", time.Now().Unix(), strings.Repeat("ab", 32)))
		})
		if r.Status != 401 || r.Code() != "rest_not_logged_in" {
			t.Errorf("a statement not signed with the site's key: %d %s, want 401", r.Status, r.Body)
		}
	})
}

// abilityItem is an ability as WordPress's REST listing shows it.
type abilityItem struct {
	Name     string         `json:"name"`
	Category string         `json:"category"`
	Input    any            `json:"input_schema"`
	Output   map[string]any `json:"output_schema"`
	Meta     struct {
		Annotations map[string]any `json:"annotations"`
		ShowInREST  bool           `json:"show_in_rest"`
	} `json:"meta"`
}

func abilityNames(m map[string]abilityItem) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	return names
}
