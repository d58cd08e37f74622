// Package watch tests, through the built binary, that the service watches
// itself: the scheduler's health check marks a connection down when its
// SMTP server stops and up again when it returns, a signed webhook hears
// exactly one alert each way, and three replicas on one MariaDB database
// run each job once per interval in total.
//
// The services run with MAILSVC_SCHEDULER_MINUTE=1, so an interval of
// "1 minute" lasts one second.
package watch

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/notify/webhook"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/internal/testdb"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/fakes/webhooksink"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

// relay forwards TCP connections on a fixed address to a target while it
// is up, and refuses them (accepts and closes at once) while it is down:
// an SMTP server that stops and comes back on the same address.
type relay struct {
	ln       net.Listener
	target   string
	up       atomic.Bool
	accepted atomic.Int64
	wg       sync.WaitGroup
}

func startRelay(t *testing.T, target string) *relay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{ln: ln, target: target}
	r.up.Store(true)
	r.wg.Add(1)
	go r.serve()
	t.Cleanup(func() { ln.Close(); r.wg.Wait() })
	return r
}

func (r *relay) port() int { return r.ln.Addr().(*net.TCPAddr).Port }

func (r *relay) serve() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		r.accepted.Add(1)
		if !r.up.Load() {
			c.Close()
			continue
		}
		go func() {
			defer c.Close()
			up, err := net.Dial("tcp", r.target)
			if err != nil {
				return
			}
			defer up.Close()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			_, _ = io.Copy(c, up)
		}()
	}
}

func call(t *testing.T, svc *servicetest.Service, admin func(*http.Request), method, path, body string) []byte {
	t.Helper()
	r := servicetest.Call(t, method, svc.Base+path, body, admin)
	if r.Status >= 300 {
		t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
	}
	return r.Body
}

func health(t *testing.T, svc *servicetest.Service, admin func(*http.Request), id int64) (status, lastError string) {
	t.Helper()
	var c struct {
		HealthStatus  string     `json:"health_status"`
		LastCheckedAt *time.Time `json:"last_checked_at"`
		LastError     string     `json:"last_error"`
	}
	if err := json.Unmarshal(call(t, svc, admin, "GET", fmt.Sprintf("/connections/%d", id), ""), &c); err != nil {
		t.Fatal(err)
	}
	if c.HealthStatus != core.HealthUnknown && c.LastCheckedAt == nil {
		t.Fatalf("health %q without last_checked_at", c.HealthStatus)
	}
	return c.HealthStatus, c.LastError
}

// alertsOf decodes the alerts a sink received, checking each signature.
func alertsOf(t *testing.T, reqs []webhooksink.Request, secret string) []core.Alert {
	t.Helper()
	var out []core.Alert
	for _, r := range reqs {
		if !webhook.Verify(secret, r.Header.Get("X-Mailsvc-Timestamp"), string(r.Body), r.Header.Get("X-Mailsvc-Signature")) {
			t.Fatalf("alert signature does not verify: %s", r.Body)
		}
		var a core.Alert
		if err := json.Unmarshal(r.Body, &a); err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

// waitFor polls cond every 100 ms until it holds, failing after timeout.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	servicetest.Poll(t, what, timeout, 100*time.Millisecond, cond)
}

func TestHealthCheckAlertsOnceEachWay(t *testing.T) {
	sink := smtpsink.Start(t, smtpsink.WithAuth("mailer", "s3cret-pass"))
	smtp := startRelay(t, sink.Addr())
	hooks := webhooksink.New()
	defer hooks.Close()

	svc := servicetest.Start(t, t.TempDir(), "MAILSVC_SCHEDULER_MINUTE=1", "MAILSVC_ALLOW_PRIVATE_WEBHOOKS=true")
	admin := servicetest.Basic("admin", svc.AdminPassword())
	var conn struct{ ID int64 }
	if err := json.Unmarshal(call(t, svc, admin, "POST", "/connections", fmt.Sprintf(
		`{"name":"relay","driver":"smtp","settings":{"host":"127.0.0.1","port":%d,"encryption":"none","auth":true,"username":"mailer","password":"s3cret-pass"}}`,
		smtp.port())), &conn); err != nil {
		t.Fatal(err)
	}
	call(t, svc, admin, "POST", "/notifications", fmt.Sprintf(
		`{"name":"ops","type":"webhook","events":["connection_down","connection_recovered"],"settings":{"url":%q,"secret":"whsec-health"}}`, hooks.URL))
	call(t, svc, admin, "PUT", "/settings", `{"health_check_interval":1}`)

	waitFor(t, "a first healthy check", 20*time.Second, func() bool {
		s, _ := health(t, svc, admin, conn.ID)
		return s == core.HealthHealthy
	})
	if n := len(hooks.Requests()); n != 0 {
		t.Fatalf("%d alerts while healthy", n)
	}

	smtp.up.Store(false)
	waitFor(t, "the connection marked down", 20*time.Second, func() bool {
		s, _ := health(t, svc, admin, conn.ID)
		return s == core.HealthDown
	})
	if _, lastErr := health(t, svc, admin, conn.ID); lastErr == "" || strings.Contains(lastErr, "s3cret") {
		t.Fatalf("last_error %q: want the reason, without the password", lastErr)
	}
	if _, err := hooks.Await(1, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	// Several more failed checks (one a second) raise nothing more.
	checked := smtp.accepted.Load()
	waitFor(t, "three more checks", 20*time.Second, func() bool { return smtp.accepted.Load() >= checked+3 })
	got := alertsOf(t, hooks.Requests(), "whsec-health")
	if len(got) != 1 || got[0].Event != core.EventConnectionDown || got[0].ConnectionID != conn.ID {
		t.Fatalf("alerts while down: %+v", got)
	}

	smtp.up.Store(true)
	waitFor(t, "the connection healthy again", 20*time.Second, func() bool {
		s, _ := health(t, svc, admin, conn.ID)
		return s == core.HealthHealthy
	})
	if _, err := hooks.Await(2, 15*time.Second); err != nil {
		t.Fatal(err)
	}
	checked = smtp.accepted.Load()
	waitFor(t, "three more checks", 20*time.Second, func() bool { return smtp.accepted.Load() >= checked+3 })
	got = alertsOf(t, hooks.Requests(), "whsec-health")
	if len(got) != 2 || got[1].Event != core.EventConnectionRecovered || got[1].ConnectionID != conn.ID {
		t.Fatalf("alerts after recovery: %+v", got)
	}
}

// TestReplicasRunEachJobOncePerInterval starts three services on one
// MariaDB database and counts the health checks that reach the SMTP
// server: three uncoordinated replicas would make three per interval.
func TestReplicasRunEachJobOncePerInterval(t *testing.T) {
	dsn := testdb.MySQL(t)
	sink := smtpsink.Start(t)
	smtp := startRelay(t, sink.Addr())
	env := []string{"MAILSVC_DB=" + dsn, "MAIL_SVC_ENCRYPTION_KEY=replicas-share-this-key", "MAILSVC_SCHEDULER_MINUTE=1"}

	first := servicetest.Start(t, t.TempDir(), env...)
	admin := servicetest.Basic("admin", first.AdminPassword())
	call(t, first, admin, "POST", "/connections", fmt.Sprintf(
		`{"name":"relay","driver":"smtp","settings":{"host":"127.0.0.1","port":%d,"encryption":"none","auth":false}}`, smtp.port()))
	// Health checks every 2 "minutes" (2 s); the job is otherwise off the
	// clock of this test.
	call(t, first, admin, "PUT", "/settings", `{"health_check_interval":2,"oauth_refresh_enabled":false}`)
	servicetest.Start(t, t.TempDir(), env...)
	servicetest.Start(t, t.TempDir(), env...)

	// Let the three run side by side, then count the checks in a window.
	time.Sleep(3 * time.Second)
	before := smtp.accepted.Load()
	const window = 12 * time.Second
	time.Sleep(window)
	checks := smtp.accepted.Load() - before
	t.Logf("%d health checks in %s across 3 replicas", checks, window)
	// Once per 2 s in total: 6 in the window (7 with a run at each edge);
	// three replicas each running it would make about 18.
	if checks < 4 || checks > 7 {
		t.Fatalf("%d health checks in %s with a 2 s interval across 3 replicas, want 6±1 (about 18 means every replica ran the job)", checks, window)
	}
}
