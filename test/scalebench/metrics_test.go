package scalebench

import (
	"database/sql"
	"net/http"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/internal/testdb"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
)

// TestMetricsMatchTheLog delivers messages through the built binary into
// a sink that refuses some of them; /metrics then parses as Prometheus
// text and its delivery counters and queue gauges match the log table.
func TestMetricsMatchTheLog(t *testing.T) {
	const total, refused = 120, 7
	dsn := testdb.MySQL(t)
	sink := smtpsink.Start(t)
	db := openStore(t, dsn)
	svc := start(t, dsn)
	admin := adminAuth(t, svc)

	// Before any delivery: the families exist, nothing is counted.
	code, fams := scrape(t, svc, "")
	if code != http.StatusOK {
		t.Fatalf("/metrics from loopback = %d, want 200", code)
	}
	if _, ok := fams["mailsvc_queue_oldest_age_seconds"]; !ok {
		t.Fatal("no mailsvc_queue_oldest_age_seconds")
	}
	if n := sum(fams, "mailsvc_deliveries_total", nil); n != 0 {
		t.Fatalf("deliveries before any message = %v", n)
	}

	sink.FailNext(refused, 550, "5.1.1 No such user")
	connID := createConnection(t, svc, admin, "sink", "smtp", map[string]any{
		"host": sink.Host(), "port": sink.Port(), "encryption": "none", "auth": false,
	}, nil)
	useDefault(t, svc, admin, connID)
	enqueue(t, db, 0, total, message)
	st := waitFinal(t, db, total, 60*time.Second, svc)
	if st.Failed != refused || st.Delivered != total-refused {
		t.Fatalf("log table: %+v, want %d delivered and %d failed", st, total-refused, refused)
	}

	_, fams = scrape(t, svc, "")
	conn := map[string]string{"connection": itoa(connID), "driver": "smtp"}
	tests := []struct {
		name   string
		family string
		labels map[string]string
		want   float64
	}{
		{"delivered sends", "mailsvc_deliveries_total", with(conn, "outcome", core.OutcomeDelivered), float64(st.Delivered)},
		{"refused sends", "mailsvc_deliveries_total", with(conn, "outcome", core.OutcomePermanent), float64(st.Failed)},
		{"send latencies observed", "mailsvc_send_duration_seconds", map[string]string{"driver": "smtp"}, float64(total)},
		{"provider errors", "mailsvc_provider_errors_total", map[string]string{"driver": "smtp", "class": "smtp_5xx"}, float64(refused)},
		{"nothing in flight", "mailsvc_sends_in_flight", conn, 0},
		{"queue gauge: delivered", "mailsvc_queue_messages", map[string]string{"status": core.StatusDelivered}, float64(st.Delivered)},
		{"queue gauge: failed", "mailsvc_queue_messages", map[string]string{"status": core.StatusFailed}, float64(st.Failed)},
		{"queue gauge: queued", "mailsvc_queue_messages", map[string]string{"status": core.StatusQueued}, 0},
		{"oldest queued age of an empty queue", "mailsvc_queue_oldest_age_seconds", nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := sum(fams, tc.family, tc.labels); got != tc.want {
				t.Fatalf("%s%v = %v, want %v", tc.family, tc.labels, got, tc.want)
			}
		})
	}
}

// TestMetricsToken: with MAILSVC_METRICS_TOKEN set, /metrics needs the
// bearer token even from loopback, and the probes need nothing.
func TestMetricsToken(t *testing.T) {
	const token = "scrape-me-0123456789"
	svc := start(t, testdb.SQLite(t), "MAILSVC_METRICS_TOKEN="+token)
	tests := []struct {
		authorization string
		want          int
	}{
		{"", http.StatusUnauthorized},
		{"Bearer wrong", http.StatusUnauthorized},
		{"Bearer " + token, http.StatusOK},
	}
	for _, tc := range tests {
		if code, _ := scrape(t, svc, tc.authorization); code != tc.want {
			t.Errorf("/metrics with %q = %d, want %d", tc.authorization, code, tc.want)
		}
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		if code := get(t, "http://"+svc.Addr+p); code != http.StatusOK {
			t.Errorf("%s = %d, want 200", p, code)
		}
	}
	if stderr := svc.Stderr.String(); contains(stderr, token) {
		t.Fatal("the metrics token appears in the service's log")
	}
}

// TestReadyWhenTheDatabaseIsGone drops the MariaDB database under a
// running service: /readyz answers 503 (with the reason, to this loopback
// client), /healthz still 200.
func TestReadyWhenTheDatabaseIsGone(t *testing.T) {
	dsn := testdb.MySQL(t)
	svc := start(t, dsn)
	base := "http://" + svc.Addr
	if code := get(t, base+"/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz on a migrated database = %d, want 200", code)
	}
	admin, err := sql.Open("mysql", testdb.DriverDSN(dsn))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var name string
	if err := admin.QueryRow("SELECT DATABASE()").Scan(&name); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec("DROP DATABASE `" + name + "`"); err != nil {
		t.Fatal(err)
	}
	code, body := getBody(t, base+"/readyz")
	if code != http.StatusServiceUnavailable || !contains(body, "not ready") {
		t.Fatalf("/readyz with the database dropped = %d %q, want 503 with the reason", code, body)
	}
	if code := get(t, base+"/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz with the database dropped = %d, want 200", code)
	}
}
