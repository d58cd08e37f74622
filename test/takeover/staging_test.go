package takeover

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// captureView is what GET /capture answers.
type captureView struct {
	Mode        string   `json:"mode"`
	Reason      string   `json:"reason"`
	Message     string   `json:"message"`
	Environment string   `json:"environment"`
	Differences []string `json:"differences"`
	Captured    int      `json:"captured"`
	AllowList   []string `json:"allow_list"`
	Live        *struct {
		SiteURL string `json:"siteurl"`
		DBName  string `json:"db_name"`
	} `json:"live"`
	Current struct {
		SiteURL string `json:"siteurl"`
	} `json:"current"`
	Messages []struct {
		ID      int64  `json:"id"`
		Status  string `json:"status"`
		Message struct {
			Subject string `json:"subject"`
		} `json:"message"`
	} `json:"messages"`
}

// stagingSite is a WordPress site with the bridge, the service started
// against it, and a connection to an SMTP sink as the default.
type stagingSite struct {
	t    *testing.T
	site *wpsite.Site
	sink *smtpsink.Sink
	svc  *servicetest.Service
	user string
	pass string
}

func newStagingSite(t *testing.T, opts wpsite.Options, env ...string) *stagingSite {
	t.Helper()
	site := installBridgeSite(t, opts)
	s := &stagingSite{t: t, site: site, sink: smtpsink.Start(t)}
	s.user, s.pass = site.AdminLogin, site.CreateApplicationPassword(t, site.AdminLogin, "staging test")
	s.start(env...)
	deliverToSink(t, s.svc.Base, s.user, s.pass, s.sink, "")
	return s
}

// start (re)starts the service with env added.
func (s *stagingSite) start(env ...string) {
	s.t.Helper()
	if s.svc != nil {
		s.svc.Stop(s.t)
	}
	dir := s.t.TempDir()
	s.svc = servicetest.StartEnv(s.t, dir, environ(dir, append([]string{"MAILSVC_WP_CONFIG=" + s.site.WPConfigPath, "MAILSVC_TRUSTED_PROXIES=127.0.0.1"}, env...)...))
}

func (s *stagingSite) api(method, path, body string, want int, v any) []byte {
	s.t.Helper()
	return callWant(s.t, method, s.svc.Base+path, body, s.user, s.pass, want, v)
}

// mail calls WordPress's wp_mail() in the site.
func (s *stagingSite) mail(to, subject string) {
	s.t.Helper()
	out := s.site.PHP(s.t, fmt.Sprintf(`echo wp_mail( %s, %s, 'body' ) ? 'sent' : 'refused';`, wpsite.PHPString(to), wpsite.PHPString(subject)))
	if strings.TrimSpace(out) != "sent" {
		s.t.Fatalf("wp_mail(%s): %s", to, out)
	}
}

// logStatus waits until the log of subject has one of want, and returns
// its id.
func (s *stagingSite) logStatus(subject string, want ...string) int64 {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last []byte
	for {
		var list []struct {
			ID     int64  `json:"id"`
			Status string `json:"status"`
		}
		last = s.api("GET", "/logs?search="+strings.ReplaceAll(subject, " ", "+"), "", 200, &list)
		for _, l := range list {
			for _, w := range want {
				if l.Status == w {
					return l.ID
				}
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the log of %q never became %v: %s", subject, want, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// state waits until GET /capture answers mode (and reason), and returns it.
func (s *stagingSite) state(mode, reason string) captureView {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var v captureView
		s.api("GET", "/capture", "", 200, &v)
		if v.Mode == mode && v.Reason == reason {
			return v
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("capture state %s/%s, want %s/%s: %+v", v.Mode, v.Reason, mode, reason, v)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sinkTo waits until the sink accepted at least n messages (a log says
// delivered once the sink answered, which may be before the sink lists
// the message), and returns the recipients of every message it holds
// then, sorted; it fails the test when n messages do not come in time.
func (s *stagingSite) sinkTo(n int) []string {
	s.t.Helper()
	got, err := s.sink.WaitFor(n, 30*time.Second)
	if err != nil {
		s.t.Fatal(err)
	}
	var out []string
	for _, m := range got {
		out = append(out, m.To...)
	}
	slices.Sort(out)
	return out
}

// TestStagingGuardOnWordPress: the live site sends; once its siteurl
// changes in the database (a copy on a staging host), the next wp_mail()
// is captured, not sent, while an allow-listed recipient still gets
// hers; adopting the copy as the live site releases nothing, and
// releasing the captured message (twice, and by two callers at once)
// delivers it exactly once.
func TestStagingGuardOnWordPress(t *testing.T) {
	s := newStagingSite(t, wpsite.Options{Prefix: "wsg_"})
	st := s.state("send", "")
	if st.Live == nil || !strings.EqualFold(st.Live.SiteURL, s.site.SiteURL) || st.Live.DBName != s.site.DBName {
		t.Fatalf("the live fingerprint recorded at the first start: %+v", st.Live)
	}
	s.mail("first@customer.example", "before the copy")
	s.logStatus("before the copy", "delivered")

	// A copy: the same database under another address.
	db, err := sql.Open("mysql", s.site.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const staging = "https://staging.example.test"
	if _, err := db.Exec("UPDATE wsg_options SET option_value = ? WHERE option_name IN ('siteurl', 'home')", staging); err != nil {
		t.Fatal(err)
	}
	st = s.state("capture", "copy")
	if want := "This looks like a copy of " + s.site.SiteURL + ". Mail is being held."; !strings.EqualFold(st.Message, want) {
		t.Errorf("banner %q, want %q", st.Message, want)
	}
	if st.Current.SiteURL != staging || strings.Join(st.Differences, ",") != "siteurl,home" {
		t.Errorf("current %+v, differences %v", st.Current, st.Differences)
	}
	s.api("PUT", "/settings", `{"capture_allow_list":["@qa-team.example"]}`, 200, nil)
	// A setting reaches the guard within a second; GET /capture reads it
	// afresh, and the messages after it meet it.
	if st = s.state("capture", "copy"); strings.Join(st.AllowList, ",") != "@qa-team.example" {
		t.Fatalf("allow list %v", st.AllowList)
	}
	s.mail("second@customer.example", "on the copy")
	captured := s.logStatus("on the copy", "captured", "delivered")
	s.mail("tester@qa-team.example", "allowed on the copy")
	s.logStatus("allowed on the copy", "delivered")
	var stored struct {
		Status  string `json:"status"`
		History []struct {
			Outcome  string `json:"outcome"`
			Response string `json:"response"`
		} `json:"attempts_history"`
	}
	s.api("GET", fmt.Sprintf("/logs/%d", captured), "", 200, &stored)
	if stored.Status != "captured" || len(stored.History) != 1 || stored.History[0].Outcome != "captured" || !strings.Contains(stored.History[0].Response, "copy of") {
		t.Fatalf("the message on the copy: %+v", stored)
	}
	if got := strings.Join(s.sinkTo(2), ","); got != "first@customer.example,tester@qa-team.example" {
		t.Fatalf("the sink got mail for %s", got)
	}
	st = s.state("capture", "copy")
	if st.Captured != 1 || len(st.Messages) != 1 || st.Messages[0].ID != captured {
		t.Fatalf("GET /capture lists %+v (captured %d)", st.Messages, st.Captured)
	}

	// "This is the live site now": the guard sends again, the captured
	// message stays captured.
	var adopted captureView
	s.api("POST", "/capture/adopt", "", 200, &adopted)
	if adopted.Mode != "send" || adopted.Live == nil || adopted.Live.SiteURL != staging || adopted.Captured != 1 {
		t.Fatalf("after adopt: %+v", adopted)
	}
	s.mail("third@customer.example", "after adopting")
	s.logStatus("after adopting", "delivered")
	s.logStatus("on the copy", "captured")

	// Two callers release the same message at once: one moves it.
	var wg sync.WaitGroup
	statuses := make([]int, 2)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i], _ = call(t, "POST", s.svc.Base+"/capture/release", fmt.Sprintf(`{"ids":[%d]}`, captured), s.user, s.pass)
		}()
	}
	wg.Wait()
	if !(statuses[0] == 200 && statuses[1] == 404 || statuses[0] == 404 && statuses[1] == 200) {
		t.Fatalf("two releases at once answered %v, want one 200 and one 404", statuses)
	}
	s.api("POST", "/capture/release", fmt.Sprintf(`{"ids":[%d]}`, captured), 404, nil)
	s.logStatus("on the copy", "delivered")
	s.api("POST", "/capture/release", `{"all":true}`, 200, nil)
	// The log is delivered: its message reached the sink, and only once.
	got := s.sinkTo(4)
	if n := strings.Count(strings.Join(got, ","), "second@customer.example"); n != 1 || len(got) != 4 {
		t.Fatalf("the released message reached the sink %d times: %v", n, got)
	}
}

// TestStagingGuardEnvironment: a site whose WP_ENVIRONMENT_TYPE is
// staging captures its mail; MAILSVC_ENVIRONMENT=production overrides it.
func TestStagingGuardEnvironment(t *testing.T) {
	s := newStagingSite(t, wpsite.Options{Prefix: "wse_", EnvironmentType: "staging"})
	st := s.state("capture", "environment")
	if st.Environment != "staging" || !strings.Contains(st.Message, "staging") {
		t.Fatalf("state on a staging site: %+v", st)
	}
	s.mail("a@customer.example", "on staging")
	s.logStatus("on staging", "captured")

	s.start("MAILSVC_ENVIRONMENT=production")
	st = s.state("send", "")
	if st.Environment != "production" {
		t.Fatalf("state with MAILSVC_ENVIRONMENT=production: %+v", st)
	}
	s.mail("b@customer.example", "production override")
	s.logStatus("production override", "delivered")
	s.logStatus("on staging", "captured")
	if got := strings.Join(s.sinkTo(1), ","); got != "b@customer.example" {
		t.Fatalf("the sink got mail for %s", got)
	}

	s.start("MAILSVC_ENVIRONMENT=development")
	s.state("capture", "environment")
}

// TestStagingGuardEnvironmentFromPHP: WordPress's environment type set
// only in PHP's environment (the WP_ENVIRONMENT_TYPE variable, which the
// service does not see) reaches the guard through the bridge.
func TestStagingGuardEnvironmentFromPHP(t *testing.T) {
	t.Setenv("WP_ENVIRONMENT_TYPE", "development") // for php only: the service's environment drops WP_ variables
	s := newStagingSite(t, wpsite.Options{Prefix: "wsp_"})
	st := s.state("capture", "environment")
	if st.Environment != "development" {
		t.Fatalf("state: %+v", st)
	}
	s.mail("a@customer.example", "from development")
	s.logStatus("from development", "captured")
	if n := len(s.sink.Messages()); n != 0 {
		t.Fatalf("the sink got %d messages", n)
	}
}

// TestStagingGuardUnknownAtStart: when the guard cannot work out its
// state at start (the live fingerprint unreadable), a message queued by
// wp_mail() is neither sent nor captured: it stays queued, untried, and
// comes back every few seconds, with one warning in the service's log;
// once the state can be read it is delivered.
func TestStagingGuardUnknownAtStart(t *testing.T) {
	s := newStagingSite(t, wpsite.Options{Prefix: "wsu_"})
	s.state("send", "")
	s.svc.Stop(t)
	const subject = "queued while the guard is blind"
	s.mail("queued@customer.example", subject)
	db, err := sql.Open("mysql", s.site.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var live string
	if err := db.QueryRow("SELECT setting_value FROM wsu_mailsvc_settings WHERE scope = 'capture'").Scan(&live); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("UPDATE wsu_mailsvc_settings SET setting_value = '{' WHERE scope = 'capture'"); err != nil {
		t.Fatal(err)
	}
	s.start()

	// The message is handed back twice (two due times), untried.
	type logView struct {
		Status        string `json:"status"`
		Attempts      int    `json:"attempts"`
		LastError     string `json:"last_error"`
		NextAttemptAt string `json:"next_attempt_at"`
	}
	var dues []string
	deadline := time.Now().Add(60 * time.Second)
	for len(dues) < 2 {
		var list []logView
		last := s.api("GET", "/logs?search="+strings.ReplaceAll(subject, " ", "+"), "", 200, &list)
		// Between its claim and its hand-back the log reads "sending";
		// it is never tried.
		if len(list) != 1 || (list[0].Status != "queued" && list[0].Status != "sending") || list[0].Attempts != 0 {
			t.Fatalf("while the guard knows no state: %s", last)
		}
		if l := list[0]; strings.HasPrefix(l.LastError, "Waiting for the staging guard") && !slices.Contains(dues, l.NextAttemptAt) {
			dues = append(dues, l.NextAttemptAt)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the message was not handed back twice: %s\nstderr:\n%s", last, s.svc.Stderr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := len(s.sink.Messages()); n != 0 {
		t.Fatalf("the sink got %d messages while the guard knew no state", n)
	}

	if _, err := db.Exec("UPDATE wsu_mailsvc_settings SET setting_value = ? WHERE scope = 'capture'", live); err != nil {
		t.Fatal(err)
	}
	s.logStatus(subject, "delivered")
	if got := strings.Join(s.sinkTo(1), ","); got != "queued@customer.example" {
		t.Fatalf("the sink got mail for %s", got)
	}
	logged := s.svc.Stderr.String()
	if n := strings.Count(logged, "none is known yet"); n != 1 {
		t.Errorf("%d warnings of the unknown state, want 1:\n%s", n, logged)
	}
	if !strings.Contains(logged, "the state can be read again") {
		t.Errorf("no line says the state can be read again:\n%s", logged)
	}
}
