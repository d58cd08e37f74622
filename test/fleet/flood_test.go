package fleet

import (
	"bytes"
	"fmt"
	"net/mail"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/webhooksink"
	"github.com/mailsvc/mailsvc/test/servicetest"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// The flood of TestFleetFloodAtOneSite: site A's WordPress core mail
// (source `wordpress`, held by default) over the guard's default floor
// of 50 messages an hour, while site B sends a little.
const (
	floodSent     = 300
	floodFloor    = 50 // flood_volume_floor's default
	floodHeld     = floodSent - floodFloor
	quietSent     = 20
	quietDeadline = 10 * time.Second // B's mail, from its wp_mail() calls to its sink
)

// wpMailLoop is PHP that calls wp_mail() n times from WordPress's own
// code path (no plugin or theme: the source `wordpress`), subjects
// prefix-0 on, and echoes how many calls returned true.
func wpMailLoop(prefix string, n int) string {
	return fmt.Sprintf(`$ok = 0;
for ( $i = 0; $i < %[2]d; $i++ ) {
	$ok += wp_mail( "%[1]s{$i}@example.com", "%[1]s-{$i}", "message {$i}" ) ? 1 : 0;
}
echo $ok;`, prefix, n)
}

// TestFleetFloodAtOneSite: two real WordPress sites with their own
// databases and one `mailsvc serve` for both. Site A's WordPress calls
// wp_mail() 300 times in one request (one source, `wordpress`, within a
// minute) while site B's WordPress sends 20. With the flood guard's
// defaults A's first 50 are delivered and its 250 over the floor held;
// one flood_held alert reaches A's channel and the operator, none B's;
// B's mail is delivered within 10 s; the operator's view shows A's held
// mail; releasing it delivers each held message exactly once.
func TestFleetFloodAtOneSite(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	operator := webhooksink.New()
	t.Cleanup(operator.Close)
	f := startWordPressFleet(t, "MAILSVC_FLEET_ALERT_WEBHOOK="+operator.URL+"/operator", "MAILSVC_ALLOW_PRIVATE_WEBHOOKS=true")
	t.Setenv("MAILSVC_SERVICE_URL", "http://"+f.svc.Addr)
	// Each site's own channel for flood_held alerts (a Slack webhook).
	channels := map[*wpsite.Site]*webhooksink.Sink{f.A: webhooksink.New(), f.B: webhooksink.New()}
	for s, sink := range channels {
		t.Cleanup(sink.Close)
		if r := f.call(t, s, "POST", "/notifications", fmt.Sprintf(`{"name":"ops","type":"slack","events":["flood_held"],"settings":{"webhook_url":%q}}`,
			sink.URL+"/services/T0/B0/flood")); r.Status != 201 {
			t.Fatalf("POST /notifications on %s: %d %s", s.SiteURL, r.Status, r.Body)
		}
	}
	// total is X-WP-Total of site s's GET /logs?query.
	total := func(t *testing.T, s *wpsite.Site, query string) int {
		t.Helper()
		r := f.call(t, s, "GET", "/logs?per_page=1&"+query, "")
		n, err := strconv.Atoi(r.Header.Get("X-WP-Total"))
		if r.Status != 200 || err != nil {
			t.Fatalf("GET /logs?%s on %s: %d %s", query, s.SiteURL, r.Status, r.Body)
		}
		return n
	}
	await := func(t *testing.T, what func() string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("gave up waiting: %s\n%s", what(), servicetest.Tail(f.svc.Stderr.String(), 40))
			}
			time.Sleep(20 * time.Millisecond) // polling a condition
		}
	}

	t.Run("A floods while B's mail flows", func(t *testing.T) {
		// Both run at once: A's request of 300 wp_mail() calls, and B's
		// 20 once A's guard holds.
		t.Run("A", func(t *testing.T) {
			t.Parallel()
			if out := f.A.PHP(t, wpMailLoop("flood", floodSent)); out != strconv.Itoa(floodSent) {
				t.Errorf("wp_mail() returned true %s times of %d", out, floodSent)
			}
		})
		t.Run("B", func(t *testing.T) {
			t.Parallel()
			await(t, func() string { return "nothing of A's held" }, func() bool { return total(t, f.A, "status=held") > 0 })
			start := time.Now()
			if out := f.B.PHP(t, wpMailLoop("quiet", quietSent)); out != strconv.Itoa(quietSent) {
				t.Fatalf("wp_mail() on B returned true %s times of %d", out, quietSent)
			}
			if _, err := f.sinkB.WaitFor(quietSent, quietDeadline-time.Since(start)); err != nil {
				t.Fatalf("B's mail during A's flood: %v\n%s", err, servicetest.Tail(f.svc.Stderr.String(), 40))
			}
			t.Logf("B's %d messages delivered %s after its first wp_mail(); A had %d held then",
				quietSent, time.Since(start).Round(time.Millisecond), total(t, f.A, "status=held"))
		})
	})

	t.Run("A's excess is held, B's mail is not", func(t *testing.T) {
		await(t, func() string {
			return fmt.Sprintf("A: held %d, delivered %d", total(t, f.A, "status=held"), total(t, f.A, "status=delivered"))
		}, func() bool {
			return total(t, f.A, "status=held") == floodHeld && total(t, f.A, "status=delivered") == floodFloor
		})
		for _, tc := range []struct {
			site  *wpsite.Site
			query string
			want  int
		}{
			{f.A, "status=failed", 0},
			{f.A, "status=queued", 0},
			{f.B, "status=held", 0},
			{f.B, "status=delivered", quietSent},
			{f.B, "status=failed", 0},
		} {
			if n := total(t, tc.site, tc.query); n != tc.want {
				t.Errorf("%s: %s %d, want %d", tc.site.SiteURL, tc.query, n, tc.want)
			}
		}
		if n := len(f.sinkA.Messages()); n != floodFloor {
			t.Errorf("A's sink has %d messages, want the %d under the floor", n, floodFloor)
		}
	})

	t.Run("one alert, A's", func(t *testing.T) {
		reqs, err := channels[f.A].Await(1, 30*time.Second)
		if err != nil {
			t.Fatalf("A's flood_held alert: %v", err)
		}
		if body := string(reqs[0].Body); !strings.Contains(body, "wordpress") || !strings.Contains(body, fmt.Sprintf("%d messages within an hour", floodFloor+1)) {
			t.Errorf("A's alert does not name the source and the volume: %s", body)
		}
		got, err := operator.Await(1, 30*time.Second)
		if err != nil {
			t.Fatalf("the operator's flood_held alert: %v", err)
		}
		if body := string(got[0].Body); !strings.Contains(body, `"event":"flood_held"`) || !strings.Contains(body, `"site":"`+f.A.SiteURL+`"`) {
			t.Errorf("the operator's alert: %s", body)
		}
	})

	// heldInView returns each site's held count in the operator's view
	// (GET /fleet/sites) and in `mailsvc fleet`'s HELD column.
	heldInView := func(t *testing.T) (route, cli [2]string) {
		t.Helper()
		var views []struct{ Held int }
		r := servicetest.Call(t, "GET", f.api+"/fleet/sites", "", bearer(fleetToken, ""))
		if r.JSON(t, &views); r.Status != 200 || len(views) != 2 {
			t.Fatalf("GET /fleet/sites: %d %s", r.Status, r.Body)
		}
		out := servicetest.Run(f.dir, servicetest.Environ(f.dir), "", "fleet", "--site", f.A.WPConfigPath, "--site", f.B.WPConfigPath)
		lines := strings.Split(strings.TrimSpace(out.Stdout), "\n")
		if out.Code != 0 || len(lines) < 3 || strings.Fields(lines[0])[10] != "HELD" {
			t.Fatalf("mailsvc fleet: exit %d\n%s%s", out.Code, out.Stdout, out.Stderr)
		}
		for i, s := range []*wpsite.Site{f.A, f.B} {
			route[i] = strconv.Itoa(views[i].Held)
			// SITE STATUS QUEUED RETRYING FAILED 24H DELIVERED 24H CONNECTIONS FAILING HELD WP-CONFIG
			fields := strings.Fields(lines[i+1])
			if len(fields) != 10 || fields[0] != wpHost(t, s) {
				t.Fatalf("mailsvc fleet line %d: %q\n%s", i+1, fields, out.Stdout)
			}
			cli[i] = fields[8]
		}
		return route, cli
	}

	t.Run("the operator's view shows A's held mail", func(t *testing.T) {
		want := [2]string{strconv.Itoa(floodHeld), "0"}
		if route, cli := heldInView(t); route != want || cli != want {
			t.Errorf("held: GET /fleet/sites %v, mailsvc fleet %v, want %v", route, cli, want)
		}
	})

	t.Run("releasing A's held mail delivers each message once", func(t *testing.T) {
		var moved struct {
			Released int `json:"released"`
		}
		r := f.call(t, f.A, "POST", "/logs/held/release", `{}`)
		if r.JSON(t, &moved); r.Status != 200 || moved.Released != floodHeld {
			t.Fatalf("POST /logs/held/release on A: %d %s, want %d released", r.Status, r.Body, floodHeld)
		}
		if r := f.call(t, f.B, "POST", "/logs/held/release", `{}`); r.Status != 200 || !strings.Contains(string(r.Body), `"released":0`) {
			t.Errorf("POST /logs/held/release on B: %d %s, want none released", r.Status, r.Body)
		}
		want := [2]string{"0", "0"}
		if route, cli := heldInView(t); route != want || cli != want {
			t.Errorf("held after the release: GET /fleet/sites %v, mailsvc fleet %v, want %v", route, cli, want)
		}
		await(t, func() string {
			return fmt.Sprintf("A: delivered %d, queued %d, sending %d", total(t, f.A, "status=delivered"), total(t, f.A, "status=queued"),
				total(t, f.A, "status=sending"))
		}, func() bool {
			return total(t, f.A, "status=delivered") == floodSent && total(t, f.A, "status=queued")+total(t, f.A, "status=sending") == 0
		})
		if r := f.call(t, f.A, "POST", "/logs/held/release", `{}`); r.Status != 200 || !strings.Contains(string(r.Body), `"released":0`) {
			t.Errorf("a second release on A: %d %s, want none released", r.Status, r.Body)
		}
		subjects, ids := servicetest.SubjectsAtSink(t, f.sinkA), map[string]int{}
		for _, m := range f.sinkA.Messages() {
			msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
			if err != nil {
				t.Fatal(err)
			}
			ids[msg.Header.Get("Message-Id")]++
		}
		for i := range floodSent {
			if n := subjects[fmt.Sprintf("flood-%d", i)]; n != 1 {
				t.Errorf("flood-%d reached A's sink %d times", i, n)
			}
		}
		if len(f.sinkA.Messages()) != floodSent || len(ids) != floodSent {
			t.Errorf("A's sink has %d messages with %d Message-IDs, want %d of each", len(f.sinkA.Messages()), len(ids), floodSent)
		}
		for i := range quietSent {
			if n := servicetest.SubjectsAtSink(t, f.sinkB)[fmt.Sprintf("quiet-%d", i)]; n != 1 {
				t.Errorf("quiet-%d reached B's sink %d times", i, n)
			}
		}
	})

	t.Run("still one alert, and none of B's", func(t *testing.T) {
		if n := len(channels[f.A].Requests()); n != 1 {
			t.Errorf("%d flood_held alerts on A's channel, want one for the episode", n)
		}
		if n := len(channels[f.B].Requests()); n != 0 {
			t.Errorf("%d flood_held alerts on B's channel, want none", n)
		}
		var flood int
		for _, r := range operator.Requests() {
			if strings.Contains(string(r.Body), `"event":"flood_held"`) {
				flood++
				if !strings.Contains(string(r.Body), `"site":"`+f.A.SiteURL+`"`) {
					t.Errorf("a flood_held alert to the operator not about A: %s", r.Body)
				}
			}
		}
		if flood != 1 {
			t.Errorf("%d flood_held alerts to the operator, want one", flood)
		}
	})
}
