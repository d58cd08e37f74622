package protest

import (
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
	"github.com/glebarez/sqlite"
	"gorm.io/gorm"

	"github.com/mailsvc/mailsvc/test/fakes/sesfake"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

// groupSite is a running mailsvc with its SMTP submission listener, for
// the sender group tests: messages go in over SMTP (one session carries
// hundreds), connections point at smtpsinks.
type groupSite struct {
	dir, password, smtpAddr string
	svc                     *servicetest.Service
}

// startGroupSite starts mailsvc in dir; password is the administrator's
// application password of an earlier start in dir ("" on the first).
func startGroupSite(t *testing.T, dir, password string, extra ...string) *groupSite {
	t.Helper()
	s := &groupSite{dir: dir, password: password, smtpAddr: servicetest.FreeAddr(t)}
	s.svc = servicetest.Start(t, dir, append([]string{"MAILSVC_SMTP_LISTEN=" + s.smtpAddr, servicetest.AllowCustomEndpoints}, extra...)...)
	if s.password == "" {
		if s.password = s.svc.AdminPassword(); s.password == "" {
			t.Fatalf("no first-run password:\n%s", s.svc.Stdout)
		}
	}
	return s
}

func (s *groupSite) call(t *testing.T, method, path, body string) servicetest.Response {
	t.Helper()
	return servicetest.Call(t, method, s.svc.Base+path, body, servicetest.Basic("admin", s.password))
}

// must calls and requires the status.
func (s *groupSite) must(t *testing.T, status int, method, path, body string) servicetest.Response {
	t.Helper()
	r := s.call(t, method, path, body)
	if r.Status != status {
		t.Fatalf("%s %s: %d %s, want %d", method, path, r.Status, r.Body, status)
	}
	return r
}

// smtpConnection creates an smtp connection to port sending as from.
func (s *groupSite) smtpConnection(t *testing.T, name string, port int, from string) int64 {
	t.Helper()
	var c struct{ ID int64 }
	s.must(t, 201, "POST", "/connections", fmt.Sprintf(
		`{"name":%q,"driver":"smtp","settings":{"host":"127.0.0.1","port":%d,"encryption":"none","auth":false,"from_email":%q}}`,
		name, port, from)).JSON(t, &c)
	return c.ID
}

// submit queues n messages from "from" over one authenticated SMTP
// session and returns their log ids.
func (s *groupSite) submit(t *testing.T, from string, n int, subject string) []int64 {
	t.Helper()
	c, err := smtp.Dial(s.smtpAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Auth(sasl.NewPlainClient("", "admin", s.password)); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i := range n {
		data := fmt.Sprintf("From: %s\r\nTo: buyer@example.net\r\nSubject: %s %d\r\n\r\nhello\r\n", from, subject, i+1)
		reply, err := smtpsink.Send(c, from, []string{"buyer@example.net"}, data)
		if err != nil {
			t.Fatalf("submit %d: %v", i+1, err)
		}
		var id int64
		if _, err := fmt.Sscanf(reply, "2.0.0 OK: queued as %d", &id); err != nil {
			t.Fatalf("submit %d: reply %q", i+1, reply)
		}
		ids = append(ids, id)
	}
	return ids
}

// groupMember is a member as GET /pro/sender-groups shows it.
type groupMember struct {
	ConnectionID int64  `json:"connection_id"`
	HealthStatus string `json:"health_status"`
	Weight       int    `json:"weight"`
	DailyCap     int64  `json:"daily_cap"`
	SentToday    int64  `json:"sent_today"`
}

// members returns the members of sender's group by connection id.
func (s *groupSite) members(t *testing.T, sender string) map[int64]groupMember {
	t.Helper()
	var groups []struct {
		Sender, Strategy string
		Members          []groupMember
	}
	s.must(t, 200, "GET", "/pro/sender-groups", "").JSON(t, &groups)
	for _, g := range groups {
		if g.Sender == sender {
			out := map[int64]groupMember{}
			for _, m := range g.Members {
				out[m.ConnectionID] = m
			}
			return out
		}
	}
	t.Fatalf("no group of %s in %+v", sender, groups)
	return nil
}

// attempts returns the connection ids of a log's attempts, and its status.
func (s *groupSite) attempts(t *testing.T, id int64) (string, []int64, []string) {
	t.Helper()
	var l struct {
		Status  string
		History []struct {
			ConnectionID int64  `json:"connection_id"`
			Outcome      string `json:"outcome"`
			Error        string `json:"error"`
		} `json:"attempts_history"`
	}
	s.must(t, 200, "GET", fmt.Sprintf("/logs/%d", id), "").JSON(t, &l)
	var conns []int64
	var errs []string
	for _, a := range l.History {
		conns = append(conns, a.ConnectionID)
		errs = append(errs, a.Error)
	}
	return l.Status, conns, errs
}

// waitFor polls cond every 50 ms until it holds or 30 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	servicetest.Poll(t, what, 30*time.Second, 50*time.Millisecond, cond)
}

// forward accepts connections on addr and relays each to target until
// the test ends: an SMTP server answering again at a connection's
// address.
func forward(t *testing.T, addr, target string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen again on %s: %v", addr, err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, in, out)
			mu.Unlock()
			wg.Go(func() { _, _ = io.Copy(out, in); out.Close() })
			wg.Go(func() { _, _ = io.Copy(in, out); in.Close() })
		}
	})
}

// TestSenderGroupFailoverThroughTheBinary: the first member's sink stops;
// the first message fails there at connect, which marks the member down
// and moves the message to the second member at once; the next message
// goes straight to the second member. When the first member's address
// answers again, the health check job brings it back up and it delivers
// again.
func TestSenderGroupFailoverThroughTheBinary(t *testing.T) {
	sinkA, sinkB := smtpsink.Start(t), smtpsink.Start(t)
	// A scheduler minute of one second: health_check_interval 1 runs the
	// check every second once it is switched on.
	site := startGroupSite(t, t.TempDir(), "", "MAILSVC_SCHEDULER_MINUTE=1")
	site.must(t, 200, "PUT", "/settings", `{"health_check_enabled":false}`)
	const sender = "shop@example.com"
	a := site.smtpConnection(t, "A", sinkA.Port(), sender)
	b := site.smtpConnection(t, "B", sinkB.Port(), sender)
	site.must(t, 200, "PUT", "/pro/sender-groups", fmt.Sprintf(
		`{"sender":%q,"strategy":"failover","members":[{"connection_id":%d},{"connection_id":%d}]}`, sender, a, b))

	addrA := sinkA.Addr()
	sinkA.Close()
	first := site.submit(t, sender, 1, "first")[0]
	if _, err := sinkB.WaitFor(1, 30*time.Second); err != nil {
		t.Fatalf("B: %v", err)
	}
	var status string
	var conns []int64
	var errs []string
	waitFor(t, "the first message delivered", func() bool {
		status, conns, errs = site.attempts(t, first)
		return status == "delivered"
	})
	if fmt.Sprint(conns) != fmt.Sprint([]int64{a, b}) || !strings.Contains(errs[0], "connection refused") {
		t.Fatalf("first message: attempts through %v (%q), want one refused on A then B", conns, errs)
	}
	if m := site.members(t, sender); m[a].HealthStatus != "down" || m[b].HealthStatus == "down" {
		t.Fatalf("members after the failure: %+v; want A down", m)
	}
	var connA struct {
		HealthStatus string `json:"health_status"`
		LastError    string `json:"last_error"`
	}
	site.must(t, 200, "GET", fmt.Sprintf("/connections/%d", a), "").JSON(t, &connA)
	if connA.HealthStatus != "down" || !strings.Contains(connA.LastError, "connection refused") {
		t.Fatalf("connection A: %+v", connA)
	}

	second := site.submit(t, sender, 1, "second")[0]
	waitFor(t, "the second message delivered", func() bool {
		status, conns, _ = site.attempts(t, second)
		return status == "delivered"
	})
	if fmt.Sprint(conns) != fmt.Sprint([]int64{b}) {
		t.Fatalf("second message: attempts through %v, want B alone (A is down)", conns)
	}

	// A answers again; the health check brings it back up.
	sinkA2 := smtpsink.Start(t)
	forward(t, addrA, sinkA2.Addr())
	site.must(t, 200, "PUT", "/settings", `{"health_check_enabled":true,"health_check_interval":1}`)
	waitFor(t, "A healthy again", func() bool { return site.members(t, sender)[a].HealthStatus == "healthy" })
	third := site.submit(t, sender, 1, "third")[0]
	if _, err := sinkA2.WaitFor(1, 30*time.Second); err != nil {
		t.Fatalf("A back up: %v", err)
	}
	waitFor(t, "the third message delivered", func() bool {
		status, conns, _ = site.attempts(t, third)
		return status == "delivered"
	})
	if fmt.Sprint(conns) != fmt.Sprint([]int64{a}) || len(sinkB.Messages()) != 2 {
		t.Fatalf("third message: attempts through %v, B holds %d; want A first again", conns, len(sinkB.Messages()))
	}
}

// TestSenderGroupBalanceThroughTheBinary: weights 3:1 over 400 messages
// split within ±5 % (of 400) at the sinks, and sent_today counts exactly
// what each sink received.
func TestSenderGroupBalanceThroughTheBinary(t *testing.T) {
	sinkA, sinkB := smtpsink.Start(t), smtpsink.Start(t)
	site := startGroupSite(t, t.TempDir(), "")
	const sender = "news@example.com"
	a := site.smtpConnection(t, "A", sinkA.Port(), sender)
	b := site.smtpConnection(t, "B", sinkB.Port(), sender)
	site.must(t, 200, "PUT", "/pro/sender-groups", fmt.Sprintf(
		`{"sender":%q,"strategy":"balance","members":[{"connection_id":%d,"weight":3},{"connection_id":%d,"weight":1}]}`, sender, a, b))
	const total = 400
	site.submit(t, sender, total, "balanced")
	waitFor(t, "400 messages at the sinks", func() bool { return len(sinkA.Messages())+len(sinkB.Messages()) >= total })
	gotA, gotB := len(sinkA.Messages()), len(sinkB.Messages())
	t.Logf("weights 3:1 over %d messages: A %d, B %d", total, gotA, gotB)
	if gotA+gotB != total || gotA < 300-total/20 || gotA > 300+total/20 {
		t.Fatalf("A %d, B %d; want 300:100 within ±%d", gotA, gotB, total/20)
	}
	m := site.members(t, sender)
	if m[a].SentToday != int64(gotA) || m[b].SentToday != int64(gotB) || m[a].Weight != 3 || m[b].Weight != 1 {
		t.Fatalf("members %+v; want sent_today %d and %d", m, gotA, gotB)
	}
}

// TestSenderGroupOverflowThroughTheBinary: with daily_cap 5 on the first
// member, messages 6 and 7 go to the second; on the next day the first
// takes messages again.
//
// The next day comes without waiting for midnight: a day of the caps is
// the site's local date (WordPress's timezone_string), so the test gives
// the standalone site an options table, runs the first day at UTC−12 and
// the second at UTC+14 — 26 hours apart, so always another date. The
// service reads the time zone at most once a minute, so the second day
// starts with a restart of the binary on the same database.
func TestSenderGroupOverflowThroughTheBinary(t *testing.T) {
	sinkA, sinkB := smtpsink.Start(t), smtpsink.Start(t)
	dir := t.TempDir()
	site := startGroupSite(t, dir, "")
	db, err := gorm.Open(sqlite.Open(filepath.Join(dir, "data", "mailsvc.db")+"?_pragma=busy_timeout(10000)"), &gorm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if sqlDB, err := db.DB(); err == nil {
		t.Cleanup(func() { sqlDB.Close() })
	}
	setZone := func(zone string) {
		t.Helper()
		err := db.Transaction(func(tx *gorm.DB) error {
			if err := tx.Exec(`DELETE FROM wp_options WHERE option_name = 'timezone_string'`).Error; err != nil {
				return err
			}
			return tx.Exec(`INSERT INTO wp_options (option_name, option_value) VALUES ('timezone_string', ?)`, zone).Error
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	day := func(zone string) string {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Fatal(err)
		}
		return time.Now().In(loc).Format(time.DateOnly)
	}
	const west, east = "Etc/GMT+12", "Pacific/Kiritimati" // UTC−12, UTC+14
	setZone(west)
	day1 := day(west)

	const sender = "orders@example.com"
	a := site.smtpConnection(t, "A", sinkA.Port(), sender)
	b := site.smtpConnection(t, "B", sinkB.Port(), sender)
	site.must(t, 200, "PUT", "/pro/sender-groups", fmt.Sprintf(
		`{"sender":%q,"strategy":"overflow","members":[{"connection_id":%d,"daily_cap":5},{"connection_id":%d}]}`, sender, a, b))
	site.submit(t, sender, 7, "day one")
	waitFor(t, "7 messages at the sinks", func() bool { return len(sinkA.Messages())+len(sinkB.Messages()) >= 7 })
	if day(west) != day1 {
		t.Skip("the site's day changed while the test ran")
	}
	if gotA, gotB := len(sinkA.Messages()), len(sinkB.Messages()); gotA != 5 || gotB != 2 {
		t.Fatalf("day one: A %d, B %d; want 5 (its cap) and 2", gotA, gotB)
	}
	if m := site.members(t, sender); m[a].SentToday != 5 || m[a].DailyCap != 5 || m[b].SentToday != 2 {
		t.Fatalf("day one members %+v", m)
	}

	// The next day: the same database, the site now at UTC+14.
	site.svc.Stop(t)
	setZone(east)
	day2 := day(east)
	site = startGroupSite(t, dir, site.password)
	if m := site.members(t, sender); m[a].SentToday != 0 || m[b].SentToday != 0 {
		t.Fatalf("day two before sending: %+v; want the counts reset", m)
	}
	site.submit(t, sender, 3, "day two")
	waitFor(t, "3 more messages at the sinks", func() bool { return len(sinkA.Messages())+len(sinkB.Messages()) >= 10 })
	if gotA, gotB := len(sinkA.Messages()), len(sinkB.Messages()); gotA != 8 || gotB != 2 {
		t.Fatalf("day two: A %d in all, B %d; want A to take the 3 new ones", gotA, gotB)
	}
	if m := site.members(t, sender); m[a].SentToday != 3 || m[b].SentToday != 0 {
		t.Fatalf("day two members %+v", m)
	}
	type count struct {
		ConnectionID int64
		Day          string
		Sent         int64
	}
	var rows []count
	if err := db.Raw(`SELECT connection_id, day, sent FROM wp_mailsvc_send_counts ORDER BY day, connection_id`).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	want := []count{{a, day1, 5}, {b, day1, 2}, {a, day2, 3}}
	if day1 > day2 {
		t.Fatalf("day one %s after day two %s", day1, day2)
	}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Fatalf("send counts %v, want %v", rows, want)
	}
}

// TestSenderGroupWithSESIdentityThroughTheBinary: an SES connection
// without from_email joins the group of an address at its verified domain,
// and a PUT with an address it does not cover is refused.
func TestSenderGroupWithSESIdentityThroughTheBinary(t *testing.T) {
	fake := sesfake.New(sesRegion, sesKeyID, sesSecret)
	defer fake.Close()
	fake.AddIdentity("verified.example", "SUCCESS")
	site := startGroupSite(t, t.TempDir(), "")
	relay := site.smtpConnection(t, "relay", 2525, "shop@verified.example")
	site.smtpConnection(t, "other", 2526, "shop@unverified.example")
	var ses struct{ ID int64 }
	site.must(t, 201, "POST", "/connections", fmt.Sprintf(
		`{"name":"ses","driver":"ses","settings":{"region":%q,"custom_endpoint":%q,"access_key":%q,"secret":%q}}`,
		sesRegion, fake.URL, sesKeyID, sesSecret)).JSON(t, &ses)

	m := site.members(t, "shop@verified.example")
	if len(m) != 2 || m[relay].ConnectionID != relay || m[ses.ID].ConnectionID != ses.ID {
		t.Fatalf("group of shop@verified.example: %+v; want the relay and the SES connection", m)
	}
	site.must(t, 200, "PUT", "/pro/sender-groups", fmt.Sprintf(
		`{"sender":"shop@verified.example","strategy":"failover","members":[{"connection_id":%d},{"connection_id":%d}]}`, ses.ID, relay))
	r := site.must(t, 422, "PUT", "/pro/sender-groups", fmt.Sprintf(
		`{"sender":"shop@unverified.example","strategy":"failover","members":[{"connection_id":%d}]}`, ses.ID))
	if !strings.Contains(string(r.Body), "does not send as shop@unverified.example") {
		t.Fatalf("refusal: %s", r.Body)
	}
}
