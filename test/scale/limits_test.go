package scale

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/app/delivery"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/internal/testdb"
	"github.com/mailsvc/mailsvc/test/fakes/sendgridfake"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

// The tests in this file check a connection's limits through the built
// binary, measured where the messages arrive: at the SMTP sink and the
// SendGrid fake. Every bound asserted is one a broken limiter fails;
// none depends on how fast the machine is.

// limitsEnv is one `mailsvc serve` on a fresh MariaDB database, the
// store for the test's own writes and reads, and the administrator's
// credentials.
type limitsEnv struct {
	svc   *servicetest.Service
	db    *store.DB
	admin func(*http.Request)
	dsn   string
}

// newLimitsEnv starts the service with extra environment variables.
func newLimitsEnv(t *testing.T, extra ...string) *limitsEnv {
	t.Helper()
	dsn := testdb.MySQL(t)
	svc := startLimits(t, dsn, extra...)
	pw := svc.MustAdminPassword(t)
	db, err := store.Open(context.Background(), dsn, store.DefaultPrefix, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e := &limitsEnv{svc: svc, db: db, admin: servicetest.Basic("admin", pw), dsn: dsn}
	// These tests send one message to a hundred recipients and bursts of
	// thousands from their source: they measure limits and caps, not
	// floods, so the source is trusted (as a site trusts its newsletter
	// plugin) before any message is decided. The guard has read no
	// settings yet: the first message reads these.
	if r := servicetest.Call(t, "PUT", svc.Base+"/settings", `{"flood_sources":{"test":"trusted"}}`, e.admin); r.Status != http.StatusOK {
		t.Fatalf("PUT /settings: %d %s", r.Status, r.Body)
	}
	return e
}

// startLimits runs `mailsvc serve` on dsn in a new data directory.
func startLimits(t *testing.T, dsn string, extra ...string) *servicetest.Service {
	t.Helper()
	return servicetest.Start(t, t.TempDir(), append([]string{"MAILSVC_DB=" + dsn, "MAIL_SVC_ENCRYPTION_KEY=scale-test-key-0123456789abcdef",
		servicetest.AllowCustomEndpoints}, extra...)...)
}

// connection creates an active connection through the REST API (secrets
// encrypted as in production) and returns its id.
func (e *limitsEnv) connection(t *testing.T, name, driver string, settings map[string]any) int64 {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"name": name, "driver": driver, "is_active": true, "settings": settings})
	r := servicetest.Call(t, "POST", e.svc.Base+"/connections", string(body), e.admin)
	if r.Status != http.StatusCreated {
		t.Fatalf("create connection %s: %d %s", name, r.Status, r.Body)
	}
	var c struct{ ID int64 }
	r.JSON(t, &c)
	return c.ID
}

// sinkSettings points an smtp connection at sink, with extra settings.
func sinkSettings(sink *smtpsink.Sink, extra map[string]any) map[string]any {
	s := map[string]any{"host": sink.Host(), "port": sink.Port(), "encryption": "none", "auth": false, "timeout": 30}
	for k, v := range extra {
		s[k] = v
	}
	return s
}

// enqueueTo commits n one-kilobyte messages for connection connID in one
// transaction, subjects prefix-000000 on, and returns their log ids.
func (e *limitsEnv) enqueueTo(t *testing.T, connID int64, prefix string, n int) []int64 {
	t.Helper()
	logs := make([]*core.Log, n)
	for i := range logs {
		logs[i] = &core.Log{ConnectionID: &connID, Source: "test", Message: core.Message{
			From:    core.Address{Email: "shop@example.com"},
			To:      []core.Address{{Email: fmt.Sprintf("%s%d@example.com", prefix, i)}},
			Subject: fmt.Sprintf("%s-%06d", prefix, i),
			Text:    strings.Repeat("x", 900),
		}}
	}
	if err := e.db.Logs().EnqueueLogs(context.Background(), logs); err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, n)
	for i, l := range logs {
		ids[i] = l.ID
	}
	return ids
}

// waitStats waits until the queue's counts satisfy done.
func (e *limitsEnv) waitStats(t *testing.T, what string, done func(core.QueueStats) bool) core.QueueStats {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		st, err := e.db.Logs().QueueStats(context.Background())
		if err == nil && done(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: stats %+v (%v)\n%s", what, st, err, tailOf(e.svc.Stderr.String(), 3000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func tailOf(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// TestInFlightNeverPassesMaxConcurrency: with many messages queued and a
// sink that holds each one, the mail transactions open at the sink at
// once (the sends in flight) reach the connection's max_concurrency and
// never pass it. Each connection has its own sink; they run at once in
// one process.
func TestInFlightNeverPassesMaxConcurrency(t *testing.T) {
	e := newLimitsEnv(t)
	const latency = 150 * time.Millisecond
	type lane struct {
		limit int
		n     int
		sink  *smtpsink.Sink
	}
	lanes := []*lane{{limit: 1}, {limit: 3}, {limit: 12}}
	for _, l := range lanes {
		// Eight rounds of the limit: enough for the sends to pile up
		// against it, short enough to drain in about a second.
		l.n = 8 * l.limit
		l.sink = smtpsink.Start(t, smtpsink.WithLatency(latency))
		id := e.connection(t, fmt.Sprintf("limit %d", l.limit), "smtp", sinkSettings(l.sink, map[string]any{core.SettingMaxConcurrency: l.limit}))
		e.enqueueTo(t, id, fmt.Sprintf("c%d", l.limit), l.n)
	}
	for _, l := range lanes {
		t.Run(fmt.Sprint(l.limit), func(t *testing.T) {
			if _, err := l.sink.WaitFor(l.n, 60*time.Second); err != nil {
				t.Fatalf("%v\n%s", err, tailOf(e.svc.Stderr.String(), 3000))
			}
			if p := l.sink.PeakTransactions(); p != l.limit {
				t.Fatalf("peak transactions open at the sink %d, want exactly max_concurrency %d", p, l.limit)
			}
			t.Logf("max_concurrency %d: peak %d in flight over %d sessions", l.limit, l.sink.PeakTransactions(), l.sink.Connections())
		})
	}
}

// TestInFlightNeverPassesTheProcessCeiling: two connections to one sink,
// each allowed 3 sends at once, in a process whose ceiling
// (MAILSVC_MAX_IN_FLIGHT) is 4: the sink sees 4 at once at most, and
// reaches it.
func TestInFlightNeverPassesTheProcessCeiling(t *testing.T) {
	const ceiling, perConn = 4, 3
	e := newLimitsEnv(t, fmt.Sprintf("MAILSVC_MAX_IN_FLIGHT=%d", ceiling))
	sink := smtpsink.Start(t, smtpsink.WithLatency(150*time.Millisecond))
	for _, name := range []string{"a", "b"} {
		id := e.connection(t, name, "smtp", sinkSettings(sink, map[string]any{core.SettingMaxConcurrency: perConn}))
		e.enqueueTo(t, id, name, 8*perConn)
	}
	if _, err := sink.WaitFor(2*8*perConn, 60*time.Second); err != nil {
		t.Fatalf("%v\n%s", err, tailOf(e.svc.Stderr.String(), 3000))
	}
	if p := sink.PeakTransactions(); p != ceiling {
		t.Fatalf("peak transactions open at the sink %d, want exactly the process ceiling %d (each connection allows %d)", p, ceiling, perConn)
	}
}

// TestMaxPerSecondHoldsOverTenSeconds: a connection with max_per_second
// and a deep queue sends, as the sink sees it, no more than the limit in
// any second (plus the bucket's burst) and no more than ten times it in
// ten seconds, and no less than half of it (a limiter that starves the
// connection is broken too).
//
// The engine's bucket (app/delivery lane.go) holds max(1, rate/10)
// tokens and starts full, so in any window of W seconds it grants at
// most rate·W + burst sends: 22 in a second and 202 in ten for 20/s. The
// sink stamps each transaction when its MAIL arrives, a little after the
// engine's grant; tolerance allows a quarter of a second of such delay
// (rate/4 more sends in a window) without letting through a missing
// limiter (the whole queue at once), a bucket as deep as the rate (40 in
// the first second) or a rate that is not the one configured.
func TestMaxPerSecondHoldsOverTenSeconds(t *testing.T) {
	const (
		rate   = 20
		queued = 400 // twenty seconds' worth: the queue never runs dry in the window
		burst  = max(1, rate/10)
		window = 10 * time.Second
	)
	tolerance := rate / 4
	e := newLimitsEnv(t)
	sink := smtpsink.Start(t)
	id := e.connection(t, "limited", "smtp", sinkSettings(sink, map[string]any{core.SettingMaxPerSecond: rate}))
	e.enqueueTo(t, id, "r", queued)

	first, err := sink.WaitFor(1, 60*time.Second)
	if err != nil {
		t.Fatalf("%v\n%s", err, tailOf(e.svc.Stderr.String(), 3000))
	}
	t0 := first[0].Started
	// Wait for the first send past the window: everything inside it has
	// arrived by then.
	deadline := time.Now().Add(90 * time.Second)
	for {
		msgs := sink.Messages()
		if msgs[len(msgs)-1].Started.Sub(t0) >= window {
			break
		}
		if len(msgs) == queued || time.Now().After(deadline) {
			t.Fatalf("%d messages at the sink, none past the %v window", len(msgs), window)
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.svc.Stop(t) // the rest goes back to the queue

	// Concurrent sends may be accepted out of order: the window counts
	// from the earliest MAIL.
	all := sink.Messages()
	for _, m := range all {
		if m.Started.Before(t0) {
			t0 = m.Started
		}
	}
	var starts []time.Time
	for _, m := range all {
		if m.Started.Sub(t0) < window {
			starts = append(starts, m.Started)
		}
	}
	slices.SortFunc(starts, time.Time.Compare)
	// Sliding one-second windows, one starting at each send.
	peak, peakAt := 0, time.Duration(0)
	for i, s := range starts {
		n := 0
		for _, u := range starts[i:] {
			if u.Sub(s) < time.Second {
				n++
			}
		}
		if n > peak {
			peak, peakAt = n, s.Sub(t0)
		}
	}
	t.Logf("max_per_second %d: %d sends in the first %v, at most %d in one second (at +%v)", rate, len(starts), window, peak, peakAt.Round(time.Millisecond))
	if peak > rate+burst+tolerance {
		t.Errorf("%d sends in the second from +%v, want at most %d (max_per_second %d + burst %d, + %d tolerance)", peak, peakAt.Round(time.Millisecond), rate+burst+tolerance, rate, burst, tolerance)
	}
	if ceiling := rate*int(window/time.Second) + burst + tolerance; len(starts) > ceiling {
		t.Errorf("%d sends in %v, want at most %d", len(starts), window, ceiling)
	}
	if floor := rate * int(window/time.Second) / 2; len(starts) < floor {
		t.Errorf("%d sends in %v, want at least %d: the limiter starves the connection", len(starts), window, floor)
	}
}

// logView is the part of GET /logs/{id} this file reads.
type logView struct {
	Status   string `json:"status"`
	Attempts int    `json:"attempts"`
	History  []struct {
		Outcome string `json:"outcome"`
		Error   string `json:"error"`
	} `json:"attempts_history"`
}

// TestProvider429PausesOnlyItsConnection: SendGrid answers the first two
// requests 429 with Retry-After: 2. The SendGrid connection sends nothing
// for two seconds after each (its next request comes no sooner), while an
// SMTP connection in the same process keeps delivering through both
// pauses; afterwards every SendGrid message is delivered, each with one
// counted attempt, the two refused ones with a rate_limited entry in
// their history and no failed attempt.
func TestProvider429PausesOnlyItsConnection(t *testing.T) {
	const (
		apiKey     = "SG.limits-test"
		retryAfter = 2 * time.Second
		limited    = 2  // requests answered 429
		sgMessages = 6  // through SendGrid
		smtpMsgs   = 80 // through SMTP, one at a time, 100 ms each: longer than both pauses
	)
	e := newLimitsEnv(t)
	fake := sendgridfake.New(apiKey)
	t.Cleanup(fake.Close)
	sink := smtpsink.Start(t, smtpsink.WithLatency(100*time.Millisecond))
	// One send at a time on each: every request after a 429 starts after
	// the pause, so the gaps below are the engine's, not in-flight
	// requests overtaking it.
	sg := e.connection(t, "sendgrid", "sendgrid", map[string]any{"api_key": apiKey, "base_url": fake.URL, core.SettingMaxConcurrency: 1})
	smtpID := e.connection(t, "sink", "smtp", sinkSettings(sink, map[string]any{core.SettingMaxConcurrency: 1}))
	fake.RateLimitNext(limited, retryAfter)
	smtpIDs := e.enqueueTo(t, smtpID, "s", smtpMsgs)
	sgIDs := e.enqueueTo(t, sg, "g", sgMessages)

	e.waitStats(t, "every message delivered", func(st core.QueueStats) bool {
		return st.Delivered == sgMessages+smtpMsgs || st.Failed > 0
	})

	hits := fake.RateLimited()
	accepted := fake.Messages()
	if len(hits) != limited || len(accepted) != sgMessages {
		t.Fatalf("the fake answered %d requests 429 and accepted %d, want %d and %d", len(hits), len(accepted), limited, sgMessages)
	}
	firstAccepted := accepted[0].At
	for _, m := range accepted {
		if m.At.Before(firstAccepted) {
			firstAccepted = m.At
		}
	}
	// Each pause ends with the connection's next request (the next 429,
	// then the first accepted message): none comes sooner than
	// Retry-After, and the SMTP connection delivers during each.
	ends := append(slices.Clone(hits[1:]), firstAccepted)
	delivered := sink.Messages()
	for i, start := range hits {
		gap := ends[i].Sub(start)
		if gap < retryAfter {
			t.Errorf("pause %d: the SendGrid connection sent again %v after the 429, before its Retry-After of %v", i+1, gap.Round(time.Millisecond), retryAfter)
			continue
		}
		during := 0
		for _, m := range delivered {
			if m.At.After(start) && m.At.Before(ends[i]) {
				during++
			}
		}
		if during == 0 {
			t.Errorf("pause %d (%v): the SMTP connection delivered nothing while SendGrid's was paused", i+1, gap.Round(time.Millisecond))
		}
		t.Logf("pause %d: %v, SMTP delivered %d meanwhile", i+1, gap.Round(time.Millisecond), during)
	}
	if len(delivered) != smtpMsgs {
		t.Errorf("the sink has %d messages, want %d", len(delivered), smtpMsgs)
	}

	rateLimited := 0
	for _, id := range sgIDs {
		var l logView
		e.readLog(t, id, &l)
		var outcomes []string
		for _, a := range l.History {
			outcomes = append(outcomes, a.Outcome)
			switch a.Outcome {
			case core.OutcomeRateLimited:
				rateLimited++
				if !strings.Contains(a.Error, "429") {
					t.Errorf("log %d: rate_limited attempt without the provider's answer: %q", id, a.Error)
				}
			case core.OutcomeTemporary, core.OutcomePermanent:
				t.Errorf("log %d: a failed attempt was recorded: %s", id, a.Error)
			}
		}
		if l.Status != core.StatusDelivered || l.Attempts != 1 || len(outcomes) == 0 || outcomes[len(outcomes)-1] != core.OutcomeDelivered {
			t.Errorf("log %d: %s with %d attempts counted, history %v; want delivered with 1 attempt counted", id, l.Status, l.Attempts, outcomes)
		}
	}
	if rateLimited != limited {
		t.Errorf("%d rate_limited entries across the SendGrid logs, want %d (one per 429)", rateLimited, limited)
	}
	// The SMTP messages met no pause of their own.
	for _, id := range smtpIDs[:5] {
		var l logView
		e.readLog(t, id, &l)
		if l.Status != core.StatusDelivered || l.Attempts != 1 || len(l.History) != 1 {
			t.Errorf("SMTP log %d: %s, %d attempts, %d history entries; want delivered at the first attempt", id, l.Status, l.Attempts, len(l.History))
		}
	}
}

// TestSMTPSlowDownPausesOnlyItsConnection: an SMTP server answers the
// first message "421 4.7.0 … slow down". That connection pauses (no
// Retry-After in SMTP: DefaultRateLimitPause) while a second SMTP
// connection in the same process keeps delivering; afterwards every
// message of the first is delivered with one counted attempt, the
// refused one with a rate_limited entry naming the 421 and no failed
// attempt.
func TestSMTPSlowDownPausesOnlyItsConnection(t *testing.T) {
	const (
		slowMsgs  = 4
		otherMsgs = 60 // one at a time, 100 ms each: longer than the pause
	)
	e := newLimitsEnv(t)
	slow := smtpsink.Start(t)
	other := smtpsink.Start(t, smtpsink.WithLatency(100*time.Millisecond))
	slowID := e.connection(t, "slow", "smtp", sinkSettings(slow, map[string]any{core.SettingMaxConcurrency: 1}))
	otherID := e.connection(t, "other", "smtp", sinkSettings(other, map[string]any{core.SettingMaxConcurrency: 1}))
	slow.FailNext(1, 421, "4.7.0 Too many messages, slow down")
	queued := time.Now()
	slowIDs := e.enqueueTo(t, slowID, "s", slowMsgs)
	e.enqueueTo(t, otherID, "o", otherMsgs)

	e.waitStats(t, "every message delivered", func(st core.QueueStats) bool {
		return st.Delivered == slowMsgs+otherMsgs || st.Failed > 0
	})
	accepted := slow.Messages()
	if len(accepted) != slowMsgs {
		t.Fatalf("the slow sink accepted %d messages, want %d", len(accepted), slowMsgs)
	}
	first := accepted[0].At
	for _, m := range accepted {
		if m.At.Before(first) {
			first = m.At
		}
	}
	// The 421 came after the messages were queued; the connection sent
	// nothing more until the pause ended, and the other connection
	// delivered meanwhile.
	if gap := first.Sub(queued); gap < delivery.DefaultRateLimitPause {
		t.Errorf("the slow connection delivered %v after the messages were queued, before its pause of %v ended", gap.Round(time.Millisecond), delivery.DefaultRateLimitPause)
	}
	during := 0
	for _, m := range other.Messages() {
		if m.At.Before(first) {
			during++
		}
	}
	if during == 0 {
		t.Errorf("the other connection delivered nothing while the slow one was paused")
	}
	rateLimited := 0
	for _, id := range slowIDs {
		var l logView
		e.readLog(t, id, &l)
		for _, a := range l.History {
			switch a.Outcome {
			case core.OutcomeRateLimited:
				rateLimited++
				if !strings.Contains(a.Error, "421") {
					t.Errorf("log %d: rate_limited attempt without the server's answer: %q", id, a.Error)
				}
			case core.OutcomeTemporary, core.OutcomePermanent:
				t.Errorf("log %d: a failed attempt was recorded: %s", id, a.Error)
			}
		}
		if l.Status != core.StatusDelivered || l.Attempts != 1 {
			t.Errorf("log %d: %s with %d attempts counted; want delivered with 1", id, l.Status, l.Attempts)
		}
	}
	if rateLimited != 1 {
		t.Errorf("%d rate_limited entries across the slow connection's logs, want 1", rateLimited)
	}
}
