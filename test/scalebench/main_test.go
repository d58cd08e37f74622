// Package scalebench runs the delivery-at-scale checks through the built
// mailsvc binary on MariaDB: the Prometheus metrics against the log table,
// the readiness probe when the database goes away, and (make bench) the
// throughput and memory figures of the scale targets, each printed beside
// the ceiling of the sink it delivers to. Timings are printed, never
// asserted.
package scalebench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

// encryptionKey is the MAIL_SVC_ENCRYPTION_KEY of every service started here.
const encryptionKey = "scalebench-test-key-0123456789abcdef"

// start runs `mailsvc serve` on dsn with a private data directory.
func start(tb testing.TB, dsn string, extra ...string) *servicetest.Service {
	tb.Helper()
	return startIn(tb, tb.TempDir(), dsn, extra...)
}

// startIn is start in a given data directory (replicas share nothing but
// the database; the first start prints the admin's password).
func startIn(tb testing.TB, dir, dsn string, extra ...string) *servicetest.Service {
	tb.Helper()
	return servicetest.Start(tb, dir, append([]string{"MAILSVC_DB=" + dsn, "MAIL_SVC_ENCRYPTION_KEY=" + encryptionKey,
		servicetest.AllowCustomEndpoints}, extra...)...)
}

// openStore opens dsn for the test's own reads and writes.
func openStore(tb testing.TB, dsn string) *store.DB {
	tb.Helper()
	db, err := store.Open(context.Background(), dsn, store.DefaultPrefix, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// adminAuth returns Basic credentials of the administrator that the
// service's first start created.
func adminAuth(tb testing.TB, s *servicetest.Service) func(*http.Request) {
	tb.Helper()
	pw := s.AdminPassword()
	if pw == "" {
		tb.Fatalf("no first-run password:\n%s", s.Stdout)
	}
	return servicetest.Basic("admin", pw)
}

// createConnection creates a connection through the REST API (so that its
// secrets are encrypted as in production) and returns its id. settings
// given in extra are dropped, one by one, if the build refuses them (an
// engine without max_concurrency or max_per_second yet).
func createConnection(tb testing.TB, s *servicetest.Service, admin func(*http.Request), name, driver string, settings, extra map[string]any) int64 {
	tb.Helper()
	all := map[string]any{}
	for k, v := range settings {
		all[k] = v
	}
	for k, v := range extra {
		all[k] = v
	}
	for {
		body, _ := json.Marshal(map[string]any{"name": name, "driver": driver, "is_active": true, "settings": all})
		r := servicetest.Call(tb, "POST", s.Base+"/connections", string(body), admin)
		if r.Status == http.StatusCreated {
			var c struct{ ID int64 }
			r.JSON(tb, &c)
			return c.ID
		}
		dropped := false
		for k := range extra {
			if _, ok := all[k]; ok && strings.Contains(string(r.Body), k) {
				tb.Logf("this build refuses connection setting %s (%s); running without it", k, r.Body)
				delete(all, k)
				dropped = true
			}
		}
		if !dropped {
			tb.Fatalf("create connection %s: %d %s", name, r.Status, r.Body)
		}
	}
}

// useDefault makes connection id the default, with a default From.
func useDefault(tb testing.TB, s *servicetest.Service, admin func(*http.Request), id int64) {
	tb.Helper()
	r := servicetest.Call(tb, "PUT", s.Base+"/settings", fmt.Sprintf(`{"default_connection_id":%d,"from_email":"shop@example.com"}`, id), admin)
	if r.Status != http.StatusOK {
		tb.Fatalf("PUT /settings: %d %s", r.Status, r.Body)
	}
}

// message is the i-th one-kilobyte test message.
func message(i int) core.Message {
	return core.Message{
		From:    core.Address{Email: "shop@example.com"},
		To:      []core.Address{{Email: fmt.Sprintf("buyer%d@example.com", i)}},
		Subject: fmt.Sprintf("msg-%06d", i),
		Text:    strings.Repeat("x", 900),
	}
}

// enqueue commits n messages from index first through the store, from 8
// callers; msg builds each one.
func enqueue(tb testing.TB, db *store.DB, first, n int, msg func(int) core.Message) {
	tb.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				if err := db.Logs().EnqueueLog(context.Background(), &core.Log{Message: msg(i), Source: "scalebench"}); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
				}
			}
		})
	}
	for i := first; i < first+n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		tb.Fatal(firstErr)
	}
}

// waitFinal waits until want logs are delivered or failed, and returns
// the counts.
func waitFinal(tb testing.TB, db *store.DB, want int, timeout time.Duration, svcs ...*servicetest.Service) core.QueueStats {
	tb.Helper()
	return servicetest.AwaitQueue(tb, db.Logs(), timeout, 50*time.Millisecond, fmt.Sprintf("%d delivered or failed", want),
		func(st core.QueueStats) bool { return st.Delivered+st.Failed >= want }, svcs...)
}

// scrape fetches s's /metrics with the given Authorization header ("" for
// none) and returns its status and, on 200, the parsed families.
func scrape(tb testing.TB, s *servicetest.Service, authorization string) (int, map[string]*dto.MetricFamily) {
	tb.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+s.Addr+"/metrics", nil)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		tb.Fatalf("/metrics is not Prometheus text: %v", err)
	}
	return resp.StatusCode, fams
}

// sum adds the samples of family name whose labels include match.
func sum(fams map[string]*dto.MetricFamily, name string, match map[string]string) float64 {
	total := 0.0
	fam, ok := fams[name]
	if !ok {
		return 0
	}
	for _, m := range fam.Metric {
		labels := map[string]string{}
		for _, l := range m.Label {
			labels[l.GetName()] = l.GetValue()
		}
		ok := true
		for k, v := range match {
			ok = ok && labels[k] == v
		}
		if !ok {
			continue
		}
		switch {
		case m.Counter != nil:
			total += m.Counter.GetValue()
		case m.Gauge != nil:
			total += m.Gauge.GetValue()
		case m.Histogram != nil:
			total += float64(m.Histogram.GetSampleCount())
		}
	}
	return total
}
