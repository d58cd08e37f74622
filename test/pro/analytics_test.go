package protest

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/fakes/snsfake"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

// TestAnalyticsThroughTheBinary sends mail from two sources through an
// SES connection in SMTP mode backed by a real SMTP sink: a test email
// (source "test") that SES then reports bounced through a signed SNS
// notification, and three messages through `mailsvc sendmail` (source
// "sendmail"), the first refused by the sink (550, a failure). The
// overview, the deliverability and the CSV export then tell exactly that.
func TestAnalyticsThroughTheBinary(t *testing.T) {
	sink := smtpsink.Start(t, smtpsink.WithAuth("ses-user", "ses-pass"))
	sns := snsfake.Start(t, "us-east-1")
	dir := t.TempDir()
	svc, call := start(t, dir, "MAILSVC_SNS_CA_FILE="+sns.WriteCA(t, dir), "MAILSVC_SNS_DIAL_ADDR="+sns.Addr(), "MAILSVC_WORKERS=1")
	id := createConnection(t, call, fmt.Sprintf(`{"name":"SES relay","driver":"ses","settings":{"delivery_mode":"smtp","smtp_host":%q,"smtp_port":%d,"smtp_encryption":"none","smtp_username":"ses-user","smtp_password":"ses-pass","from_email":"site@example.com","webhook_topic_arns":%q}}`,
		sink.Host(), sink.Port(), topic))
	if r := call("PUT", "/settings", fmt.Sprintf(`{"default_connection_id":%d}`, id)); r.Status != 200 {
		t.Fatalf("settings: %d %s", r.Status, r.Body)
	}

	// Before any mail: empty figures, null rates.
	if r := call("GET", "/pro/analytics/overview", ""); r.Status != 200 || !strings.Contains(string(r.Body), `"sent":0`) ||
		!strings.Contains(string(r.Body), `"delivery_rate":null`) {
		t.Fatalf("empty overview: %d %s", r.Status, r.Body)
	}

	sent := sendTestEmail(t, call, "gone@example.com", id)
	sink.FailNext(1, 550, "5.1.1 no such user")
	for i, to := range []string{"nobody@example.com", "ann@example.com", "bob@example.com"} {
		msg := fmt.Sprintf("From: site@example.com\nTo: %s\nSubject: =HYPERLINK(\"http://evil\") %d\n\nhello\n", to, i)
		if res := svc.Run(msg, "sendmail", "-t"); res.Code != 0 {
			t.Fatalf("sendmail: %+v", res)
		}
	}
	if _, err := sink.WaitFor(3, 30*time.Second); err != nil {
		t.Fatalf("sink: %v", err)
	}
	// Wait until every log has its final outcome.
	deadline := time.Now().Add(30 * time.Second)
	for {
		d, f := call("GET", "/logs?status=delivered", ""), call("GET", "/logs?status=failed", "")
		if d.Header.Get("X-WP-Total") == "3" && f.Header.Get("X-WP-Total") == "1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("logs not final: delivered %s, failed %s", d.Body, f.Body)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// SES reports the test email bounced.
	hook := func(body []byte) servicetest.Response {
		return servicetest.Call(t, "POST", svc.Base+"/pro/webhooks/ses", string(body), func(r *http.Request) {
			r.Header.Set("X-Amz-Sns-Message-Type", "Notification")
		})
	}
	if r := hook(sns.Notification(topic, snsfake.SESBounce(sent.ProviderMessageID, "gone@example.com", true), time.Now(), "2")); r.Status != 200 ||
		!strings.Contains(string(r.Body), `"matched":1`) {
		t.Fatalf("bounce: %d %s", r.Status, r.Body)
	}

	var o struct {
		Totals struct {
			Current struct {
				Sent, Delivered, Failed, Bounced int64
				BounceRate                       *float64 `json:"bounce_rate"`
			}
			Previous struct{ Sent int64 }
		}
		Connections []struct {
			ID      int64
			Name    string
			Current struct{ Sent, Failed int64 }
		}
		Sources []struct {
			Source  string
			Current struct{ Sent, Delivered, Failed, Bounced int64 }
		}
	}
	r := call("GET", "/pro/analytics/overview?days=1", "")
	r.JSON(t, &o)
	c := o.Totals.Current
	if r.Status != 200 || c.Sent != 4 || c.Delivered != 3 || c.Failed != 1 || c.Bounced != 1 || c.BounceRate == nil || *c.BounceRate != 25 || o.Totals.Previous.Sent != 0 {
		t.Fatalf("overview totals: %d %s", r.Status, r.Body)
	}
	if len(o.Connections) != 1 || o.Connections[0].ID != id || o.Connections[0].Name != "SES relay" || o.Connections[0].Current.Sent != 4 || o.Connections[0].Current.Failed != 1 {
		t.Fatalf("overview connections: %s", r.Body)
	}
	type src struct {
		name                             string
		sent, delivered, failed, bounced int64
	}
	var srcs []src
	for _, s := range o.Sources {
		srcs = append(srcs, src{s.Source, s.Current.Sent, s.Current.Delivered, s.Current.Failed, s.Current.Bounced})
	}
	if want := []src{{"sendmail", 3, 2, 1, 0}, {"test", 1, 1, 0, 1}}; !slices.Equal(srcs, want) {
		t.Fatalf("overview sources %+v, want %+v (%s)", srcs, want, r.Body)
	}

	var d struct {
		Providers []struct {
			Provider          string
			Accepted, Bounced int64
			Opened            *int64
			BounceRate        *float64 `json:"bounce_rate"`
		}
	}
	r = call("GET", "/pro/analytics/deliverability?days=1", "")
	r.JSON(t, &d)
	if r.Status != 200 || len(d.Providers) != 1 || d.Providers[0].Provider != "ses" || d.Providers[0].Accepted != 3 || d.Providers[0].Bounced != 1 ||
		d.Providers[0].Opened != nil || d.Providers[0].BounceRate == nil {
		t.Fatalf("deliverability: %d %s", r.Status, r.Body)
	}

	r = call("GET", "/pro/analytics/export?days=1", "")
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/csv") || !strings.HasPrefix(r.Header.Get("Content-Disposition"), "attachment;") {
		t.Fatalf("export: %d %v %s", r.Status, r.Header, r.Body)
	}
	recs, err := csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
	if err != nil {
		t.Fatalf("export is not CSV: %v\n%s", err, r.Body)
	}
	if len(recs) != 5 || strings.Join(recs[0], ",") != "id,created_at,status,connection,source,recipients,subject,last_error,provider_message_id" {
		t.Fatalf("export rows: %q", recs)
	}
	statuses := map[string]int{}
	for _, rec := range recs[1:] {
		statuses[rec[4]+"/"+rec[2]]++
		if rec[3] != "SES relay" {
			t.Errorf("row %q: connection %q", rec, rec[3])
		}
		if rec[4] == "sendmail" && !strings.HasPrefix(rec[6], `'=HYPERLINK(`) {
			t.Errorf("row %q: the formula subject is not neutralised", rec)
		}
		if rec[4] == "test" && rec[8] != sent.ProviderMessageID {
			t.Errorf("row %q: provider message id, want %s", rec, sent.ProviderMessageID)
		}
	}
	// The bounce moved the test email to failed.
	if want := map[string]int{"sendmail/delivered": 2, "sendmail/failed": 1, "test/failed": 1}; fmt.Sprint(statuses) != fmt.Sprint(want) {
		t.Fatalf("exported statuses %v, want %v", statuses, want)
	}

	for _, tc := range []struct{ path, field string }{
		{"/pro/analytics/overview?days=0", "days"},
		{"/pro/analytics/overview?from=2024-05-02&to=2024-05-01", "to"},
		{"/pro/analytics/deliverability?from=someday", "from"},
		{"/pro/analytics/export?from=2020-01-01&to=2024-01-01", "to"},
		{"/pro/analytics/export?days=1000", "days"},
	} {
		if r := call("GET", tc.path, ""); r.Status != 422 || !strings.Contains(string(r.Body), `"`+tc.field+`"`) {
			t.Fatalf("%s: %d %s", tc.path, r.Status, r.Body)
		}
	}
	if r := servicetest.Call(t, "GET", svc.Base+"/pro/analytics/export", "", nil); r.Status != 401 || strings.Contains(string(r.Body), "example.com") {
		t.Fatalf("anonymous export: %d %s", r.Status, r.Body)
	}
}
