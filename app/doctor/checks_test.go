package doctor_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/doctor"
	"github.com/mailsvc/mailsvc/core"
)

var now = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func clock() time.Time { return now }

type schema struct {
	v   int
	err error
}

func (s schema) SchemaVersion(context.Context) (int, error) { return s.v, s.err }

// prober answers each URL with a fixed status and code; a URL not listed
// cannot be reached.
type prober map[string]struct {
	status int
	code   string
}

func (p prober) Get(_ context.Context, u string) (int, string, error) {
	a, ok := p[u]
	if !ok {
		return 0, "", errors.New("connection refused")
	}
	return a.status, a.code, nil
}

type dbClock time.Time

func (c dbClock) DatabaseNow(context.Context) (time.Time, error) { return time.Time(c), nil }

type cron struct {
	next time.Time
	ok   bool
}

func (c cron) NextCronEvent(context.Context) (time.Time, bool, error) { return c.next, c.ok, nil }

type queue struct{ oldest *time.Time }

func (q queue) OldestQueuedAt(context.Context) (*time.Time, error) { return q.oldest, nil }

type conns []*core.Connection

func (c conns) FindConnections(context.Context, core.ConnectionFilter) ([]*core.Connection, int, error) {
	return c, len(c), nil
}

func ago(d time.Duration) *time.Time { t := now.Add(-d); return &t }

const notLoggedIn = "rest_not_logged_in"

func TestChecks(t *testing.T) {
	service := prober{"http://127.0.0.1:8025/wp-json/mailsvc/v1/settings": {401, notLoggedIn}, "http://127.0.0.1:8025/admin/": {200, ""}}
	bothForms := prober{"https://example.org/wp-json/mailsvc/v1/settings": {401, notLoggedIn}, "https://example.org/?rest_route=/mailsvc/v1/settings": {401, notLoggedIn}}
	prettyOnly := prober{"https://example.org/wp-json/mailsvc/v1/settings": {401, notLoggedIn}, "https://example.org/?rest_route=/mailsvc/v1/settings": {404, "rest_no_route"}}
	bridge := func(b doctor.BridgeInfo, err error) func(context.Context) (doctor.BridgeInfo, error) {
		return func(context.Context) (doctor.BridgeInfo, error) { return b, err }
	}
	tests := []struct {
		name    string
		check   doctor.Check
		verdict doctor.Verdict
		want    string // in the message
	}{
		{"database current", doctor.Database(schema{v: 27}, 27), doctor.OK, "version 27"},
		{"database not installed", doctor.Database(schema{}, 27), doctor.Error, "not installed"},
		{"database behind", doctor.Database(schema{v: 20}, 27), doctor.Error, "needs 27"},
		{"database ahead", doctor.Database(schema{v: 30}, 27), doctor.Warning, "newer"},
		{"database unreachable", doctor.Database(schema{err: errors.New("dial tcp: refused")}, 27), doctor.Error, "refused"},
		{"database not opened", doctor.Database(nil, 27), doctor.Error, "could not be opened"},
		{"bridge current", doctor.Bridge(bridge(doctor.BridgeInfo{Path: "/mu/b.php", Found: true, Version: "1.0.0", Want: "1.0.0", Current: true}, nil)), doctor.OK, "1.0.0"},
		{"bridge missing", doctor.Bridge(bridge(doctor.BridgeInfo{Path: "/mu/b.php", Want: "1.0.0"}, nil)), doctor.Error, "No bridge"},
		{"bridge other version", doctor.Bridge(bridge(doctor.BridgeInfo{Path: "/mu/b.php", Found: true, Version: "0.9.0", Want: "1.0.0"}, nil)), doctor.Error, "0.9.0"},
		{"bridge edited", doctor.Bridge(bridge(doctor.BridgeInfo{Path: "/mu/b.php", Found: true, Version: "1.0.0", Want: "1.0.0"}, nil)), doctor.Warning, "differs"},
		{"bridge unreadable", doctor.Bridge(bridge(doctor.BridgeInfo{}, errors.New("permission denied"))), doctor.Error, "permission denied"},
		{"wp-config read", doctor.WPConfig("/s/wp-config.php", "wpd_", nil), doctor.OK, "wpd_"},
		{"wp-config partly read", doctor.WPConfig("/s/wp-config.php", "wpd_", []string{"line 9: not a literal"}), doctor.Warning, "line 9"},
		{"service answers", doctor.Service(service, "http://127.0.0.1:8025"), doctor.OK, "Answering"},
		{"service down", doctor.Service(prober{}, "http://127.0.0.1:8025"), doctor.Error, "connection refused"},
		{"service is something else", doctor.Service(prober{"http://127.0.0.1:8025/wp-json/mailsvc/v1/settings": {404, ""}}, "http://127.0.0.1:8025"), doctor.Error, "HTTP 404"},
		{"rest both forms", doctor.RESTThroughSite(bothForms, "https://example.org/"), doctor.OK, "Both"},
		{"rest plain form missing", doctor.RESTThroughSite(prettyOnly, "https://example.org"), doctor.Error, "rest_no_route"},
		{"rest no home", doctor.RESTThroughSite(bothForms, ""), doctor.Error, "unknown"},
		{"screens served", doctor.Screens(service, "http://127.0.0.1:8025"), doctor.OK, "/admin/"},
		{"screens down", doctor.Screens(prober{}, "http://127.0.0.1:8025"), doctor.Error, "connection refused"},
		{"https", doctor.HTTPS("https://example.org", ""), doctor.OK, "HTTPS"},
		{"http local", doctor.HTTPS("http://localhost:8080", "local"), doctor.OK, "local"},
		{"http production", doctor.HTTPS("http://example.org", "production"), doctor.Warning, "not HTTPS"},
		{"clock agrees", doctor.Clock(dbClock(now.Add(time.Second)), clock), doctor.OK, "agrees"},
		{"clock off", doctor.Clock(dbClock(now.Add(-time.Minute)), clock), doctor.Warning, "-1m0s off"},
		{"cron on time", doctor.Cron(cron{now.Add(-time.Minute), true}, false, clock), doctor.OK, "on time"},
		{"cron nothing scheduled", doctor.Cron(cron{}, false, clock), doctor.OK, "Nothing"},
		{"cron late", doctor.Cron(cron{now.Add(-3 * time.Hour), true}, false, clock), doctor.Warning, "3h0m0s overdue"},
		{"cron disabled, system cron runs", doctor.Cron(cron{now.Add(-time.Minute), true}, true, clock), doctor.OK, "system cron"},
		{"cron disabled, nothing runs", doctor.Cron(cron{now.Add(-2 * time.Hour), true}, true, clock), doctor.Warning, "no system cron"},
		{"queue empty", doctor.Queue(queue{}, clock), doctor.OK, "Empty"},
		{"queue fresh", doctor.Queue(queue{ago(time.Minute)}, clock), doctor.OK, "1m0s"},
		{"queue stuck", doctor.Queue(queue{ago(2 * time.Hour)}, clock), doctor.Warning, "2h0m0s"},
		{"connections healthy", doctor.Connections(conns{{ID: 1, Name: "SES", HealthStatus: core.HealthHealthy}}), doctor.OK, "SES (#1): healthy"},
		{"connection down", doctor.Connections(conns{{ID: 1, Name: "SES", HealthStatus: core.HealthHealthy}, {ID: 2, Name: "SMTP", HealthStatus: core.HealthDown, LastError: "535 auth failed"}}), doctor.Warning, "SMTP (#2): down — 535 auth failed"},
		{"no connection", doctor.Connections(conns{}), doctor.Warning, "No connection"},
		{"urls unset", doctor.SiteURLs("", "", "https://example.org", "https://example.org"), doctor.OK, "Not set"},
		{"urls agree", doctor.SiteURLs("https://Example.org/", "https://example.org/wp-admin/admin.php?page=mailsvc", "https://example.org", "https://example.org"), doctor.OK, "site's host"},
		{"public url elsewhere", doctor.SiteURLs("https://old.example.org", "", "https://example.org", "https://example.org"), doctor.Warning, "MAILSVC_PUBLIC_URL"},
		{"admin url elsewhere", doctor.SiteURLs("", "http://localhost:8080/wp-admin/", "https://example.org", "https://example.org"), doctor.Warning, "MAILSVC_ADMIN_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := (&doctor.Doctor{Checks: []doctor.Check{tt.check}}).Diagnose(context.Background())
			got := r.Checks[0]
			if got.Verdict != tt.verdict || !strings.Contains(got.Message, tt.want) {
				t.Errorf("%s: %s %q; want %s with %q", got.Name, got.Verdict, got.Message, tt.verdict, tt.want)
			}
			if got.Verdict != doctor.OK && got.Fix == "" {
				t.Errorf("%s: %s without a fix", got.Name, got.Verdict)
			}
			if want := !(tt.check.Critical && tt.verdict == doctor.Error); r.Healthy != want {
				t.Errorf("healthy = %v, want %v", r.Healthy, want)
			}
		})
	}
}

func TestNonCriticalErrorIsAWarning(t *testing.T) {
	fail := func(context.Context) doctor.Finding {
		return doctor.Finding{Verdict: doctor.Error, Message: "m", Fix: "f"}
	}
	r := (&doctor.Doctor{Checks: []doctor.Check{{Name: "a", Run: fail}, {Name: "b", Critical: true, Run: func(context.Context) doctor.Finding { return doctor.Finding{} }}}}).Diagnose(context.Background())
	if !r.Healthy || r.Checks[0].Verdict != doctor.Warning || r.Checks[1].Verdict != doctor.OK || r.Checks[1].Name != "b" {
		t.Errorf("report %+v", r)
	}
}

func TestCaptureCheck(t *testing.T) {
	live := &core.Fingerprint{SiteURL: "https://live.example", Home: "https://live.example"}
	cases := []struct {
		name    string
		state   core.CaptureState
		err     error
		verdict doctor.Verdict
		message string
	}{
		{"sending", core.CaptureState{Mode: core.CaptureModeSend, Live: live, Environment: "production"}, nil, doctor.OK, "this is the live site https://live.example"},
		{"nothing recorded", core.CaptureState{Mode: core.CaptureModeSend}, nil, doctor.OK, "No live site is recorded yet"},
		{"adopted with messages still held", core.CaptureState{Mode: core.CaptureModeSend, Live: live, Environment: "production", Captured: 2}, nil, doctor.OK, "2 messages captured earlier are still held: release them"},
		{"a copy", core.CaptureState{Mode: core.CaptureModeCapture, Reason: core.CaptureReasonCopy, Message: "This looks like a copy of https://live.example. Mail is being held.", Captured: 3}, nil, doctor.Warning, "Mail is being held. 3 messages are held."},
		{"unreadable", core.CaptureState{}, errors.New("database down"), doctor.Warning, "database down"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := doctor.Capture(func(context.Context) (core.CaptureState, error) { return c.state, c.err }).Run(context.Background())
			if f.Verdict != c.verdict || !strings.Contains(f.Message, c.message) || (c.verdict != doctor.OK && f.Fix == "") {
				t.Fatalf("%+v, want %s with %q", f, c.verdict, c.message)
			}
		})
	}
}

func TestNotChecked(t *testing.T) {
	ran := false
	c := doctor.Check{Name: "queue", Title: "Queue", Critical: true, Run: func(context.Context) doctor.Finding { ran = true; return doctor.Finding{Verdict: doctor.Error} }}
	r := (&doctor.Doctor{Checks: []doctor.Check{doctor.NotChecked(c, "the database does not answer")}}).Diagnose(context.Background())
	if ran || !r.Healthy || len(r.Checks) != 1 {
		t.Fatalf("report %+v, ran %v", r, ran)
	}
	if got := r.Checks[0]; got.Name != "queue" || got.Verdict != doctor.Warning || got.Message != "Not checked: the database does not answer." || got.Fix != "" {
		t.Errorf("result %+v", got)
	}
}

// TestNeedsReportsOneCauseOnce checks that a check whose needed check
// failed reports that it was not checked when it fails too, and its own
// result otherwise.
func TestNeedsReportsOneCauseOnce(t *testing.T) {
	run := func(v doctor.Verdict) func(context.Context) doctor.Finding {
		return func(context.Context) doctor.Finding {
			return doctor.Finding{Verdict: v, Message: string(v), Fix: "fix"}
		}
	}
	for _, tc := range []struct {
		service, screens, want doctor.Verdict
	}{
		{doctor.Error, doctor.Error, doctor.Warning},
		{doctor.Error, doctor.OK, doctor.OK},
		{doctor.OK, doctor.Error, doctor.Error},
	} {
		r := (&doctor.Doctor{Checks: []doctor.Check{
			{Name: "service", Title: "Service running", Critical: true, Run: run(tc.service)},
			{Name: "screens", Title: "Admin screens reachable", Critical: true, Needs: "service", Run: run(tc.screens)},
		}}).Diagnose(context.Background())
		got := r.Checks[1]
		if got.Verdict != tc.want {
			t.Errorf("service %s, screens %s: screens reported %+v, want %s", tc.service, tc.screens, got, tc.want)
		}
		if tc.want == doctor.Warning && (got.Message != "Not checked: “Service running” failed (above)." || got.Fix != "") {
			t.Errorf("not checked: %+v", got)
		}
	}
}
