package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/internal/testdb"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

// reportMail is a delivered summary report: its subject and its two parts.
type reportMail struct {
	to         []string
	subject    string
	text, html string
}

// parseReport reads a delivered message as a summary report: a
// multipart/alternative whose parts are text/plain and text/html.
func parseReport(t *testing.T, m smtpsink.Received) reportMail {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		t.Fatal(err)
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		t.Fatal(err)
	}
	out := reportMail{to: m.To, subject: subject}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/alternative" {
		t.Fatalf("Content-Type %q (%v), want multipart/alternative\n%s", msg.Header.Get("Content-Type"), err, m.Data)
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(p) // quoted-printable is decoded by the reader
		if err != nil {
			t.Fatal(err)
		}
		pt, pp, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		if cs := strings.ToLower(pp["charset"]); cs != "utf-8" {
			t.Errorf("part %s has charset %q, want utf-8", pt, cs)
		}
		switch pt {
		case "text/plain":
			out.text = string(body)
		case "text/html":
			out.html = string(body)
		default:
			t.Errorf("unexpected part %s", pt)
		}
	}
	if out.text == "" || out.html == "" {
		t.Fatalf("the report lacks a part: text %d bytes, html %d bytes", len(out.text), len(out.html))
	}
	return out
}

// checkReadable asserts what makes a report safe and readable in a mail
// client: no script, nothing fetched from elsewhere, text lines of
// reasonable length.
func checkReadable(t *testing.T, r reportMail) {
	t.Helper()
	low := strings.ToLower(r.html)
	for _, bad := range []string{"<script", "javascript:", " src=", "<img", "<link", "url(", "@import", "<iframe", "<object"} {
		if strings.Contains(low, bad) {
			t.Errorf("the HTML part holds %q", bad)
		}
	}
	if !strings.Contains(low, "<table") || !strings.Contains(low, `style="`) {
		t.Errorf("the HTML part has no tables with inline styles")
	}
	for _, line := range strings.Split(strings.ReplaceAll(r.text, "\r\n", "\n"), "\n") {
		if len([]rune(line)) > 120 {
			t.Errorf("text line of %d characters: %q", len([]rune(line)), line)
		}
		if strings.ContainsAny(line, "<>") && !strings.Contains(line, "<address>") {
			t.Errorf("markup in the text part: %q", line)
		}
	}
}

// seed imports final logs with their own times into the shared database:
// n of status through conn at t.
func seed(t *testing.T, db *store.DB, n int, conn int64, status, lastError string, at time.Time) {
	t.Helper()
	var logs []*core.Log
	for i := range n {
		id := conn
		logs = append(logs, &core.Log{Status: status, SentConnectionID: &id, CreatedAt: at, UpdatedAt: at, LastError: fmt.Sprintf(lastError, i),
			Message: core.Message{From: core.Address{Email: "shop@example.com"}, To: []core.Address{{Email: "c@example.org"}}, Subject: "Order"}})
	}
	if err := db.Logs().ImportLogs(context.Background(), logs); err != nil {
		t.Fatal(err)
	}
}

// TestSummaryReport runs three replicas on one MariaDB database with a
// daily report: the report of yesterday reaches the SMTP sink exactly
// once, whatever the number of replicas and runs, with the totals, the
// lines per connection and the change from the day before that the known
// logs make; preview and send-now answer through the API.
func TestSummaryReport(t *testing.T) {
	dsn := testdb.MySQL(t)
	sink := smtpsink.Start(t)
	// The replicas' report clock reads noon of today (UTC, the zone of a
	// site without WordPress) whatever the hour the test runs at: the day
	// cannot end while it runs, so yesterday stays the last whole period
	// (run at 23:59:55, a second report would otherwise become due).
	start := time.Now().UTC()
	today := start.Truncate(24 * time.Hour)
	offset := int64(today.Add(12*time.Hour).Sub(start) / time.Second)
	env := []string{"MAILSVC_DB=" + dsn, "MAIL_SVC_ENCRYPTION_KEY=replicas-share-this-key", "MAILSVC_SCHEDULER_MINUTE=1",
		fmt.Sprintf("MAILSVC_REPORT_CLOCK_OFFSET=%d", offset)}
	first := servicetest.Start(t, t.TempDir(), env...)
	admin := basic("admin", first.AdminPassword())
	mustCall := func(svc *servicetest.Service, method, path, body string) servicetest.Response {
		t.Helper()
		r := call(t, method, svc.Base+path, body, admin)
		if r.Status >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
		}
		return r
	}
	var ids [2]int64
	for i, name := range []string{"Main relay", "Backup relay"} {
		var c struct{ ID int64 }
		mustCall(first, "POST", "/connections", fmt.Sprintf(`{"name":%q,"driver":"smtp","settings":{"host":"127.0.0.1","port":%d,"encryption":"none","auth":false,"from_email":"site@example.com"}}`,
			name, sink.Port())).JSON(t, &c)
		ids[i] = c.ID
	}
	mustCall(first, "PUT", "/settings", fmt.Sprintf(`{"default_connection_id":%d,"oauth_refresh_enabled":false}`, ids[0]))

	// Known logs: yesterday, the day before, and today (in no report of
	// yesterday).
	db, err := store.OpenExisting(context.Background(), dsn, "wp_", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	yesterday, before := today.AddDate(0, 0, -1), today.AddDate(0, 0, -2)
	seed(t, db, 5, ids[0], core.StatusDelivered, "", yesterday.Add(9*time.Hour))
	seed(t, db, 2, ids[0], core.StatusFailed, "550 5.1.1 <gone%d@example.org>: Recipient address rejected", yesterday.Add(13*time.Hour))
	seed(t, db, 3, ids[1], core.StatusDelivered, "", yesterday.Add(23*time.Hour+50*time.Minute))
	seed(t, db, 2, ids[0], core.StatusDelivered, "", before.Add(12*time.Hour))
	seed(t, db, 4, ids[1], core.StatusDelivered, "", today)
	day := yesterday.Format("Mon 2 Jan 2006")

	// Preview: yesterday, as the scheduled report will show it.
	var pv struct{ Subject, HTML, Text string }
	mustCall(first, "POST", "/reports/summary/preview", fmt.Sprintf(`{"from":%q,"to":%q}`, yesterday.Format(time.DateOnly), yesterday.Format(time.DateOnly))).JSON(t, &pv)
	for _, want := range []string{"Sent                10   +8 (+400%)", "Failed               2   +2 (none before)", "Success rate       80%   -20 points",
		"Main relay", "7 sent, 2 failed, success 71.43% (before: 2 sent)", "Backup relay", "3 sent, 0 failed, success 100% (before: 0 sent)",
		"    2  550 5.1.1 <address>: Recipient address rejected"} {
		if !strings.Contains(pv.Text, want) {
			t.Errorf("the preview's text lacks %q:\n%s", want, pv.Text)
		}
	}
	if !strings.HasSuffix(pv.Subject, "Email summary: "+day) {
		t.Errorf("preview subject %q", pv.Subject)
	}
	for _, tc := range []struct {
		body  string
		code  int
		field string
	}{
		{`{"period":"hourly"}`, 422, "period"},
		{`{"from":"2026-13-01","to":"2026-01-02"}`, 422, "from"},
		{`{"from":"2026-01-05","to":"2026-01-02"}`, 422, "to"},
		{`{"period":`, 400, ""},
	} {
		r := call(t, "POST", first.Base+"/reports/summary/preview", tc.body, admin)
		if r.Status != tc.code || (tc.field != "" && !strings.Contains(string(r.Body), `"`+tc.field+`"`)) {
			t.Errorf("preview %s: %d %s, want %d naming %s", tc.body, r.Status, r.Body, tc.code, tc.field)
		}
	}
	if r := call(t, "POST", first.Base+"/reports/summary/preview", "", nil); r.Status != 401 {
		t.Errorf("preview without credentials: %d", r.Status)
	}
	if r := call(t, "POST", first.Base+"/reports/summary/send", `{"recipients":["ops@example.com","nope"]}`, admin); r.Status != 422 || !strings.Contains(string(r.Body), "recipients") {
		t.Errorf("send to a bad recipient: %d %s", r.Status, r.Body)
	}
	// No recipient anywhere (no WordPress, so no admin email): 422.
	if r := call(t, "POST", first.Base+"/reports/summary/send", `{}`, admin); r.Status != 422 {
		t.Errorf("send with no recipient: %d %s", r.Status, r.Body)
	}

	// The daily report to ops@, and two more replicas.
	mustCall(first, "PUT", "/settings", `{"summary_report":{"frequency":"daily","recipients":["ops@example.com"]}}`)
	servicetest.Start(t, t.TempDir(), env...)
	servicetest.Start(t, t.TempDir(), env...)
	// The job first ran at the start of the first replica: reports go out
	// for the periods that end after that. Date that first run back three
	// days, as on a site installed earlier, so that yesterday's is due.
	ctx := context.Background()
	var armed bool
	waitUntil(t, "the summary report job's first run", func() bool {
		runs, err := db.Jobs().FindJobRuns(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			armed = armed || r.Name == "summary_report:armed"
		}
		return armed
	})
	if err := db.Gorm().Exec("UPDATE wp_mailsvc_jobs SET last_run_at = ? WHERE name = 'summary_report:armed'", today.AddDate(0, 0, -3)).Error; err != nil {
		t.Fatal(err)
	}
	isReport := func(m smtpsink.Received) bool { return bytes.Contains(m.Data, []byte("Email summary")) }
	var reports []smtpsink.Received
	waitUntil(t, "the daily report at the SMTP sink", func() bool {
		reports = nil
		for _, m := range sink.Messages() {
			if isReport(m) {
				reports = append(reports, m)
			}
		}
		return len(reports) > 0
	})
	sentAt := time.Now().UTC()
	// The job keeps running every second on the three replicas: wait until
	// it has run five more times, each trying the same period.
	waitUntil(t, "five more runs of the report job", func() bool {
		runs, err := db.Jobs().FindJobRuns(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			if r.Name == "summary_report" && r.LastRunAt.After(sentAt.Add(5*time.Second)) {
				return true
			}
		}
		return false
	})
	reports = reports[:0]
	for _, m := range sink.Messages() {
		if isReport(m) {
			reports = append(reports, m)
		}
	}
	if len(reports) != 1 {
		t.Fatalf("%d reports reached the sink, want exactly 1", len(reports))
	}
	got := parseReport(t, reports[0])
	checkReadable(t, got)
	if len(got.to) != 1 || got.to[0] != "ops@example.com" || !strings.HasSuffix(got.subject, "Email summary: "+day) {
		t.Errorf("the report went to %v as %q", got.to, got.subject)
	}
	for _, want := range []string{"Daily email summary", day + " (UTC)", "Sent                10   +8 (+400%)", "Main relay",
		"7 sent, 2 failed, success 71.43% (before: 2 sent)", "3 sent, 0 failed, success 100% (before: 0 sent)",
		"    2  550 5.1.1 <address>: Recipient address rejected"} {
		if !strings.Contains(got.text, want) {
			t.Errorf("the delivered text lacks %q:\n%s", want, got.text)
		}
	}
	for _, want := range []string{"Main relay", "71.43%", "400%", "550 5.1.1 &lt;address&gt;: Recipient address rejected"} {
		if !strings.Contains(got.html, want) {
			t.Errorf("the delivered HTML lacks %q", want)
		}
	}
	var runs int
	jobs, err := db.Jobs().FindJobRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range jobs {
		if strings.HasPrefix(r.Name, "summary_report:daily:") {
			runs++
			if r.Name != "summary_report:daily:"+yesterday.Format(time.DateOnly) || r.FinishedAt == nil || r.LastError != "" {
				t.Errorf("period record %+v", r)
			}
		}
	}
	if runs != 1 {
		t.Errorf("%d period records, want 1", runs)
	}

	// Send now, to other recipients: one more report, logged as source report.
	var sent struct {
		LogID      int64    `json:"log_id"`
		Recipients []string `json:"recipients"`
	}
	mustCall(first, "POST", "/reports/summary/send", `{"period":"weekly","recipients":"a@example.com, b@example.com"}`).JSON(t, &sent)
	if sent.LogID == 0 || len(sent.Recipients) != 2 {
		t.Fatalf("send now answered %+v", sent)
	}
	waitUntil(t, "the report sent now", func() bool {
		for _, m := range sink.Messages() {
			if isReport(m) && len(m.To) == 2 && m.To[1] == "b@example.com" {
				r := parseReport(t, m)
				checkReadable(t, r)
				return strings.Contains(r.text, "Weekly email summary")
			}
		}
		return false
	})
	var lg struct {
		Source string `json:"source"`
		Status string `json:"status"`
	}
	mustCall(first, "GET", fmt.Sprintf("/logs/%d", sent.LogID), "").JSON(t, &lg)
	if lg.Source != "report" {
		t.Errorf("the report's log has source %q, want report", lg.Source)
	}
}

// waitUntil polls cond every 100 ms for up to 60 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	servicetest.Poll(t, what, 60*time.Second, 100*time.Millisecond, cond)
}
