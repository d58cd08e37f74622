// Package dashboard drives the Dashboard routes through the built binary:
// messages delivered to and refused by a real SMTP server, then the
// statistics, chart and activity they produce, and the onboarding wizard
// from the first screen to a test email in the server's mailbox.
package dashboard

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

var call = servicetest.Call

// decode decodes r's body into v and returns r.
func decode(t *testing.T, r servicetest.Response, v any) servicetest.Response {
	t.Helper()
	r.JSON(t, v)
	return r
}

type stats struct {
	TimeZone string `json:"timezone"`
	Totals   struct {
		Queued, Sending, Delivered, Failed int64
		SuccessRate                        *float64 `json:"success_rate"`
	}
	Today       struct{ Delivered, Failed, Total int64 }
	Last7Days   struct{ Delivered, Failed int64 } `json:"last_7_days"`
	Last30Days  struct{ Delivered, Failed int64 } `json:"last_30_days"`
	Connections []struct {
		ID                int64
		Name, Driver      string
		Delivered, Failed int64
		SuccessRate       *float64 `json:"success_rate"`
	}
}

func TestDashboardThroughTheBinary(t *testing.T) {
	sink := smtpsink.Start(t)
	svc := servicetest.Start(t, t.TempDir())
	pw := svc.MustAdminPassword(t)
	auth := servicetest.Basic("admin", pw)
	get := func(path string) servicetest.Response { return call(t, "GET", svc.Base+path, "", auth) }
	post := func(path, body string) servicetest.Response { return call(t, "POST", svc.Base+path, body, auth) }
	smtpSettings := fmt.Sprintf(`{"host":%q,"port":%d,"encryption":"none","auth":false,"from_email":"site@example.com"}`, sink.Host(), sink.Port())

	r := post("/connections", `{"name":"sink","driver":"smtp","settings":`+smtpSettings+`}`)
	var conn struct{ ID int64 }
	if r.JSON(t, &conn); r.Status != 201 {
		t.Fatalf("create connection: %d %s", r.Status, r.Body)
	}

	// Before any message: zeros, and a null success rate.
	var st stats
	r = get("/dashboard/stats")
	if r.JSON(t, &st); r.Status != 200 || st.TimeZone != "UTC" || st.Totals.Delivered != 0 || st.Totals.SuccessRate != nil {
		t.Fatalf("empty stats: %d %s", r.Status, r.Body)
	}

	// Three test emails accepted, two refused by the server (550).
	send := func(to string, want bool) {
		t.Helper()
		r := post("/test-email", fmt.Sprintf(`{"to":%q,"connection_id":%d,"subject":"dashboard %s"}`, to, conn.ID, to))
		var res struct{ Success bool }
		if r.JSON(t, &res); r.Status != 200 || res.Success != want {
			t.Fatalf("test email to %s: %d %s", to, r.Status, r.Body)
		}
	}
	for _, to := range []string{"a@example.com", "b@example.com", "c@example.com"} {
		send(to, true)
	}
	sink.FailNext(2, 550, "mailbox unavailable")
	send("d@example.com", false)
	send("e@example.com", false)

	// One message through the queue: sendmail queues it, a worker
	// delivers it through the default connection.
	if r := call(t, "PUT", svc.Base+"/settings", fmt.Sprintf(`{"default_connection_id":%d}`, conn.ID), auth); r.Status != 200 {
		t.Fatalf("set default: %d %s", r.Status, r.Body)
	}
	if res := svc.Run("From: site@example.com\nTo: f@example.com\nSubject: dashboard queued\n\nhello\n", "sendmail", "-t"); res.Code != 0 {
		t.Fatalf("sendmail: %d %s", res.Code, res.Stderr)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		r = get("/dashboard/stats")
		st = stats{}
		r.JSON(t, &st)
		if st.Totals.Delivered == 4 && st.Totals.Queued == 0 && st.Totals.Sending == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the queued message was not counted: %s", r.Body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if st.Totals.Failed != 2 || st.Totals.SuccessRate == nil || *st.Totals.SuccessRate != 66.67 ||
		st.Today.Delivered != 4 || st.Today.Failed != 2 || st.Today.Total != 6 ||
		st.Last7Days.Delivered != 4 || st.Last30Days.Failed != 2 {
		t.Fatalf("stats: %s", r.Body)
	}
	if len(st.Connections) != 1 || st.Connections[0].ID != conn.ID || st.Connections[0].Name != "sink" || st.Connections[0].Driver != "smtp" ||
		st.Connections[0].Delivered != 4 || st.Connections[0].Failed != 2 {
		t.Fatalf("per connection: %s", r.Body)
	}

	var chart struct {
		Bucket string
		Points []struct {
			Label                    string
			Delivered, Failed, Total int64
		}
		Totals struct{ Delivered, Failed int64 }
	}
	r = get("/dashboard/chart?bucket=hour&days=1")
	if r.JSON(t, &chart); r.Status != 200 || chart.Bucket != "hour" || len(chart.Points) != 24 || chart.Totals.Delivered != 4 || chart.Totals.Failed != 2 {
		t.Fatalf("hourly chart: %d %s", r.Status, r.Body)
	}
	nonEmpty := 0
	for _, p := range chart.Points {
		if p.Total > 0 {
			nonEmpty++
		}
	}
	if nonEmpty < 1 || nonEmpty > 2 { // the sends may straddle an hour
		t.Fatalf("%d hours with messages: %s", nonEmpty, r.Body)
	}
	r = get("/dashboard/chart")
	chart.Points = nil
	if r.JSON(t, &chart); r.Status != 200 || chart.Bucket != "day" || len(chart.Points) != 30 || chart.Points[29].Delivered+chart.Points[28].Delivered != 4 {
		t.Fatalf("daily chart: %d %s", r.Status, r.Body)
	}

	var act struct {
		Items []struct {
			ID         int64
			Status     string
			Subject    string
			Recipients []string
			Connection *struct{ ID int64 }
			LastError  string `json:"last_error"`
		}
	}
	r = get("/dashboard/activity?limit=3")
	if r.JSON(t, &act); r.Status != 200 || len(act.Items) != 3 {
		t.Fatalf("activity: %d %s", r.Status, r.Body)
	}
	if it := act.Items[0]; it.Status != "delivered" || it.Subject != "dashboard queued" || it.Recipients[0] != "f@example.com" || it.Connection == nil || it.Connection.ID != conn.ID {
		t.Fatalf("newest activity: %s", r.Body)
	}
	if it := act.Items[1]; it.Status != "failed" || it.Recipients[0] != "e@example.com" || !strings.Contains(it.LastError, "550") {
		t.Fatalf("second activity: %s", r.Body)
	}
	act.Items = nil
	if r = decode(t, get("/dashboard/activity?status=failed"), &act); len(act.Items) != 2 {
		t.Fatalf("failed activity: %s", r.Body)
	}

	for _, bad := range []struct{ path, field string }{
		{"/dashboard/chart?bucket=week", "bucket"},
		{"/dashboard/chart?from=2024-06-10&to=2024-06-01", "to"},
		{"/dashboard/chart?bucket=hour&days=90", "bucket"},
		{"/dashboard/chart?days=0", "days"},
		{"/dashboard/stats?range=forever", "range"},
		{"/dashboard/stats?from=yesterday", "from"},
		{"/dashboard/activity?limit=100", "limit"},
	} {
		r := get(bad.path)
		var e struct {
			Code string
			Data struct{ Errors map[string]string }
		}
		if r.JSON(t, &e); r.Status != 422 || e.Code != "validation_error" || e.Data.Errors[bad.field] == "" {
			t.Errorf("%s: %d %s", bad.path, r.Status, r.Body)
		}
	}
}

func TestOnboardingWizardThroughTheBinary(t *testing.T) {
	sink := smtpsink.Start(t, smtpsink.WithAuth("wizard", "wizard-pass-123"))
	svc := servicetest.Start(t, t.TempDir())
	pw := svc.MustAdminPassword(t)
	auth := servicetest.Basic("admin", pw)
	get := func(path string) servicetest.Response { return call(t, "GET", svc.Base+path, "", auth) }
	post := func(path, body string) servicetest.Response { return call(t, "POST", svc.Base+path, body, auth) }
	type state struct {
		Step         int64
		Driver       string
		Dismissed    bool
		Completed    bool
		ConnectionID *int64 `json:"connection_id"`
	}
	var st state
	if r := decode(t, get("/dashboard/onboarding"), &st); r.Status != 200 || st != (state{}) {
		t.Fatalf("initial state: %d %s", r.Status, r.Body)
	}
	if r := decode(t, post("/dashboard/onboarding", `{"step":1,"driver":"smtp"}`), &st); r.Status != 200 || st.Step != 1 || st.Driver != "smtp" {
		t.Fatalf("choose driver: %d %s", r.Status, r.Body)
	}
	for _, bad := range []struct {
		path, body string
		status     int
	}{
		{"/dashboard/onboarding", `{"step":42}`, 422},
		{"/dashboard/onboarding", `{"driver":"carrier-pigeon"}`, 422},
		{"/dashboard/onboarding", `{"step":`, 400},
		{"/dashboard/onboarding/apply", `{"driver":"smtp","settings":{"port":25},"test_email":"owner@example.com"}`, 422},
		{"/dashboard/onboarding/apply", `{"driver":"smtp","settings":{"host":"h","port":25},"test_email":"not an address"}`, 422},
		{"/dashboard/onboarding/apply", `not json`, 400},
	} {
		if r := post(bad.path, bad.body); r.Status != bad.status {
			t.Errorf("%s %s: %d %s", bad.path, bad.body, r.Status, r.Body)
		}
	}
	var list []json.RawMessage
	if r := decode(t, get("/connections"), &list); len(list) != 0 {
		t.Fatalf("bad applies wrote connections: %s", r.Body)
	}

	body := fmt.Sprintf(`{"name":"Office SMTP","driver":"smtp","settings":{"host":%q,"port":%d,"encryption":"none","auth":true,"username":"wizard","password":"wizard-pass-123","from_email":"site@example.com"},"test_email":"owner@example.com"}`,
		sink.Host(), sink.Port())
	r := post("/dashboard/onboarding/apply", body)
	var res struct {
		Connection struct {
			ID       int64
			Name     string
			Driver   string
			Settings map[string]any
		}
		Test struct {
			Success bool
			Message string
			LogID   int64 `json:"log_id"`
		}
		Onboarding state
	}
	if r.JSON(t, &res); r.Status != 200 || !res.Test.Success || res.Test.LogID == 0 || res.Connection.Name != "Office SMTP" || res.Connection.Driver != "smtp" {
		t.Fatalf("apply: %d %s", r.Status, r.Body)
	}
	if strings.Contains(string(r.Body), "wizard-pass-123") || res.Connection.Settings["password"] != "********" {
		t.Fatalf("secret not masked: %s", r.Body)
	}
	id := res.Connection.ID
	if !res.Onboarding.Completed || res.Onboarding.ConnectionID == nil || *res.Onboarding.ConnectionID != id || res.Onboarding.Step != 1 {
		t.Fatalf("onboarding after apply: %s", r.Body)
	}
	msgs, err := sink.WaitFor(1, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs[0].To) != 1 || msgs[0].To[0] != "owner@example.com" {
		t.Fatalf("the sink got %+v", msgs[0])
	}
	var settings map[string]any
	if r := decode(t, get("/settings"), &settings); settings["default_connection_id"] != float64(id) {
		t.Fatalf("default connection: %s", r.Body)
	}
	if r := decode(t, get("/dashboard/onboarding"), &st); !st.Completed || st.ConnectionID == nil || *st.ConnectionID != id {
		t.Fatalf("stored state: %s", r.Body)
	}

	// Apply again on the same connection with no test_email: the test goes
	// to the from_email setting; no second connection appears.
	if r := call(t, "PUT", svc.Base+"/settings", `{"from_email":"general@example.com"}`, auth); r.Status != 200 {
		t.Fatalf("set from_email: %d %s", r.Status, r.Body)
	}
	r = post("/dashboard/onboarding/apply", fmt.Sprintf(`{"connection_id":%d,"settings":{"password":"********"}}`, id))
	if r.JSON(t, &res); r.Status != 200 || !res.Test.Success || res.Connection.ID != id {
		t.Fatalf("re-apply: %d %s", r.Status, r.Body)
	}
	msgs, err = sink.WaitFor(2, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if msgs[1].To[0] != "general@example.com" || msgs[1].Username != "wizard" {
		t.Fatalf("second test email %+v", msgs[1])
	}
	if r := decode(t, get("/connections"), &list); len(list) != 1 {
		t.Fatalf("connections after re-apply: %s", r.Body)
	}
}
