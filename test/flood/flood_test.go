package flood

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/fakes/webhooksink"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

// floodSite is a single-site service with the SMTP submission listener,
// an SMTP sink as its default connection and a Slack channel (a webhook
// sink) for the flood_held alerts.
type floodSite struct {
	t      *testing.T
	conn   int64
	svc    *servicetest.Service
	sink   *smtpsink.Sink
	alerts *webhooksink.Sink
	smtp   string
	pass   string
	admin  func(*http.Request)
}

func newFloodSite(t *testing.T) *floodSite {
	t.Helper()
	s := &floodSite{t: t, sink: smtpsink.Start(t), alerts: webhooksink.New(), smtp: servicetest.FreeAddr(t)}
	t.Cleanup(s.alerts.Close)
	s.svc = servicetest.Start(t, t.TempDir(), "MAILSVC_SMTP_LISTEN="+s.smtp, "MAILSVC_ALLOW_PRIVATE_WEBHOOKS=true")
	s.pass = s.svc.AdminPassword()
	s.admin = servicetest.Basic("admin", s.pass)
	var c struct{ ID int64 }
	s.api("POST", "/connections", fmt.Sprintf(`{"name":"sink","driver":"smtp","settings":{"host":%q,"port":%d,"encryption":"none","auth":false}}`,
		s.sink.Host(), s.sink.Port()), 201, &c)
	s.api("PUT", "/settings", fmt.Sprintf(`{"default_connection_id":%d,"from_email":"site@example.org"}`, c.ID), 200, nil)
	s.conn = c.ID
	s.api("POST", "/notifications", fmt.Sprintf(`{"name":"ops","type":"slack","events":["flood_held"],"settings":{"webhook_url":%q}}`,
		s.alerts.URL+"/services/T0/B0/flood"), 201, nil)
	return s
}

// api calls the REST API as the administrator and checks the status.
func (s *floodSite) api(method, path, body string, want int, v any) servicetest.Response {
	s.t.Helper()
	r := servicetest.Call(s.t, method, s.svc.Base+path, body, s.admin)
	if r.Status != want {
		s.t.Fatalf("%s %s: %d %s, want %d", method, path, r.Status, r.Body, want)
	}
	if v != nil {
		r.JSON(s.t, v)
	}
	return r
}

// total returns X-WP-Total of GET /logs with query.
func (s *floodSite) total(query string) int {
	s.t.Helper()
	r := s.api("GET", "/logs?per_page=1&"+query, "", 200, nil)
	n, err := strconv.Atoi(r.Header.Get("X-WP-Total"))
	if err != nil {
		s.t.Fatalf("GET /logs?%s: X-WP-Total %q", query, r.Header.Get("X-WP-Total"))
	}
	return n
}

// await waits until cond holds, failing with what() after 60 seconds.
func (s *floodSite) await(what func() string, cond func() bool) {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			s.t.Fatalf("gave up waiting: %s", what())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// submit sends messages over one authenticated SMTP session, one
// recipient each, with the subject subject(i) and a body of its own.
func (s *floodSite) submit(from, n int, subject func(i int) string) {
	s.t.Helper()
	c, err := smtp.Dial(s.smtp)
	if err != nil {
		s.t.Fatal(err)
	}
	defer c.Close()
	if err := c.Auth(sasl.NewPlainClient("", "admin", s.pass)); err != nil {
		s.t.Fatal(err)
	}
	for i := from; i < from+n; i++ {
		to := fmt.Sprintf("r%d@example.org", i)
		msg := fmt.Sprintf("From: site@example.org\r\nTo: %s\r\nSubject: %s\r\n\r\nmessage %d\r\n", to, subject(i), i)
		if _, err := smtpsink.Send(c, "site@example.org", []string{to}, msg); err != nil {
			s.t.Fatalf("submit %d: %v", i, err)
		}
	}
}

// delivered counts the messages the sink received by subject.
func (s *floodSite) delivered() map[string]int {
	return servicetest.SubjectsAtSink(s.t, s.sink)
}

// TestFloodHeldOnASingleSite: one source (the SMTP listener's mail, held
// by the site's policy, with a floor of 30 an hour) sends 120 messages
// in a burst: 30 are delivered, the 90 over the threshold are held (not
// sent, not failed), one flood_held alert names the source, the volume
// and a subject, and the site's other mail (a test email) is delivered
// meanwhile. The held mail is discarded and released by the list's
// filters: the discarded fail with the discard's error, the released
// are each delivered exactly once, a second release moves nothing.
func TestFloodHeldOnASingleSite(t *testing.T) {
	s := newFloodSite(t)
	s.api("PUT", "/settings", `{"flood_volume_floor":30,"flood_sources":{"smtp":"hold"}}`, 200, nil)
	subject := func(i int) string {
		if i < 60 {
			return fmt.Sprintf("flood alpha %d", i)
		}
		return fmt.Sprintf("flood beta %d", i)
	}
	s.submit(0, 120, subject)

	// While the flood is held, the site's other mail flows.
	var te struct {
		Success bool   `json:"success"`
		Status  string `json:"status"`
	}
	s.api("POST", "/test-email", fmt.Sprintf(`{"to":"owner@example.org","subject":"still flowing","connection_id":%d}`, s.conn), 200, &te)
	if !te.Success {
		t.Fatalf("the test email during the flood: %+v", te)
	}
	s.await(func() string {
		return fmt.Sprintf("held %d, delivered %d", s.total("status=held"), s.total("status=delivered"))
	}, func() bool {
		return s.total("status=held") == 90 && s.total("status=delivered") == 31
	})
	if n := s.total("status=failed"); n != 0 {
		t.Fatalf("%d failed during the flood, want none", n)
	}
	if got := s.delivered(); got["still flowing"] != 1 {
		t.Fatalf("the test email reached the sink %d times", got["still flowing"])
	}
	reqs, err := s.alerts.Await(1, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	body := string(reqs[0].Body)
	for _, want := range []string{"smtp", "31 messages within an hour", "flood "} {
		if !strings.Contains(body, want) {
			t.Errorf("the alert does not say %q: %s", want, body)
		}
	}
	var att struct {
		Held      int `json:"held"`
		FloodHeld int `json:"flood_held"`
		Count     int `json:"count"`
	}
	s.api("GET", "/dashboard/attention", "", 200, &att)
	if att.Held != 90 || att.FloodHeld != 90 || att.Count < 90 {
		t.Errorf("attention %+v, want 90 held", att)
	}

	// Bad filters are refused; nothing moves.
	s.api("POST", "/logs/held/release", `{"status":"delivered"}`, 422, nil)
	s.api("POST", "/logs/held/discard", `{"date_from":"yesterday"}`, 422, nil)
	s.api("POST", "/logs/held/release", `{"status":`, 400, nil)

	// Discard the held beta messages, then release the rest.
	beta := s.total("status=held&search=" + url.QueryEscape("beta"))
	var moved struct {
		Discarded int `json:"discarded"`
		Released  int `json:"released"`
	}
	s.api("POST", "/logs/held/discard", `{"search":"beta"}`, 200, &moved)
	if beta < 60 || moved.Discarded != beta {
		t.Fatalf("discarded %d, want the %d held beta messages", moved.Discarded, beta)
	}
	s.api("POST", "/logs/held/release", `{}`, 200, &moved)
	if moved.Released != 90-beta {
		t.Fatalf("released %d, want %d", moved.Released, 90-beta)
	}
	s.api("POST", "/logs/held/release", `{}`, 200, &moved)
	if moved.Released != 0 {
		t.Fatalf("a second release moved %d", moved.Released)
	}
	s.await(func() string {
		return fmt.Sprintf("delivered %d, failed %d", s.total("status=delivered"), s.total("status=failed"))
	}, func() bool {
		return s.total("status=delivered") == 121-beta && s.total("status=failed") == beta
	})
	var failed []struct {
		LastError string `json:"last_error"`
		Message   struct {
			Subject string `json:"subject"`
		} `json:"message"`
	}
	s.api("GET", "/logs?status=failed&per_page=100", "", 200, &failed)
	for _, l := range failed {
		if !strings.HasPrefix(l.Message.Subject, "flood beta") || l.LastError != "discarded by the site's administrator: held by the flood guard" {
			t.Errorf("failed log %q: %q", l.Message.Subject, l.LastError)
		}
	}
	s.await(func() string { return fmt.Sprintf("%d at the sink", len(s.sink.Messages())) }, func() bool { return len(s.sink.Messages()) >= 121-beta })
	got := s.delivered()
	for i := range 120 {
		n := got[subject(i)]
		if strings.Contains(subject(i), "alpha") && n != 1 || n > 1 {
			t.Errorf("%q delivered %d times", subject(i), n)
		}
	}
	if len(s.sink.Messages()) != 121-beta {
		t.Errorf("%d messages at the sink, want %d", len(s.sink.Messages()), 121-beta)
	}
	if n := len(s.alerts.Requests()); n != 1 {
		t.Errorf("%d flood alerts, want one for the episode", n)
	}
}
