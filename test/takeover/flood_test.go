package takeover

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

// TestFloodGuardOnWordPress: on a real WordPress site with the bridge,
// WordPress's own mail past the flood threshold (a floor of 2 an hour
// set for the test) is held, yet wp_mail() returned true for every
// message, as WordPress's own does for mail it hands to a server; the
// held messages discarded fire wp_mail_failed, with the discard's error,
// once each.
func TestFloodGuardOnWordPress(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	dir := t.TempDir()
	h := newHookSite(t, dir, "wfl_")
	site := h.site
	sink := smtpsink.Start(t)
	svc, appPW := serveSite(t, site, dir, "flood test")
	api := func(method, path, body string, want int) servicetest.Response {
		t.Helper()
		r := servicetest.Call(t, method, svc.Base+path, body, func(r *http.Request) {
			r.SetBasicAuth(site.AdminLogin, appPW)
			r.Header.Set("X-Forwarded-Proto", "https")
		})
		if r.Status != want {
			t.Fatalf("%s %s: %d %s, want %d", method, path, r.Status, r.Body, want)
		}
		return r
	}
	var conn struct{ ID int64 }
	api("POST", "/connections", fmt.Sprintf(`{"name":"sink","driver":"smtp","settings":{"host":%q,"port":%d,"encryption":"none","auth":false}}`,
		sink.Host(), sink.Port()), 201).JSON(t, &conn)
	api("PUT", "/settings", fmt.Sprintf(`{"default_connection_id":%d,"flood_volume_floor":2}`, conn.ID), 200)

	out := site.PHP(t, `for ( $i = 1; $i <= 5; $i++ ) { echo wp_mail( "user$i@example.com", "Password reset $i", "Reset body $i" ) ? 'true ' : 'false '; }`)
	if strings.TrimSpace(out) != "true true true true true" {
		t.Fatalf("wp_mail() answered %q, want true for every message", out)
	}
	total := func(status string) int {
		t.Helper()
		r := api("GET", "/logs?per_page=1&status="+status, "", 200)
		n, _ := strconv.Atoi(r.Header.Get("X-WP-Total"))
		return n
	}
	deadline := time.Now().Add(60 * time.Second)
	for total("held") != 3 || total("delivered") != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("held %d, delivered %d; want 3 and 2", total("held"), total("delivered"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	var list []struct {
		Source string `json:"source"`
	}
	api("GET", "/logs?status=held", "", 200).JSON(t, &list)
	for _, l := range list {
		if l.Source != "wordpress" {
			t.Errorf("held a message from %q, want WordPress's own (wordpress)", l.Source)
		}
	}
	if got := h.of(t, "wp_mail_failed"); len(got) != 0 {
		t.Fatalf("wp_mail_failed fired for held mail:\n%s", h.dump(got))
	}
	var moved struct {
		Discarded int `json:"discarded"`
	}
	api("POST", "/logs/held/discard", `{"status":"held"}`, 200).JSON(t, &moved)
	if moved.Discarded != 3 {
		t.Fatalf("discarded %d, want 3", moved.Discarded)
	}
	h.runHooks(t)
	failed := h.await(t, "three wp_mail_failed", func(got []recordedHook) bool {
		n := 0
		for _, r := range got {
			if r.Hook == "wp_mail_failed" {
				n++
			}
		}
		return n >= 3
	})
	n := 0
	for _, r := range failed {
		if r.Hook != "wp_mail_failed" {
			continue
		}
		n++
		var e struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		}
		args(t, r, &e)
		if e.Code != "wp_mail_failed" || e.Message != "discarded by the site's administrator: held by the flood guard" {
			t.Errorf("wp_mail_failed %+v", e)
		}
	}
	if n != 3 {
		t.Errorf("wp_mail_failed fired %d times, want 3", n)
	}
	if got := len(sink.Messages()); got != 2 {
		t.Errorf("%d messages at the sink, want the 2 under the threshold", got)
	}
}
