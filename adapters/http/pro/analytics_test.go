package pro_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	api "github.com/mailsvc/mailsvc/adapters/http"
	httppro "github.com/mailsvc/mailsvc/adapters/http/pro"
	prostore "github.com/mailsvc/mailsvc/adapters/pro/store"
	"github.com/mailsvc/mailsvc/adapters/store/storetest"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/pro"
	"github.com/mailsvc/mailsvc/app/pro/analytics"
	"github.com/mailsvc/mailsvc/app/pro/events"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/internal/testdb"
)

// failingExport is a log exporter whose database is gone.
type failingExport struct{}

func (failingExport) ExportLogs(context.Context, analytics.LogExportPage) ([]analytics.ExportedLog, error) {
	return nil, errors.New("database gone")
}

// newAnalyticsEnv serves the analytics routes over a real SQLite store
// holding connection 1 (sendgrid) and, imported yesterday, 4 logs from
// woocommerce (3 delivered, 1 failed) and 2 from sendmail (delivered), one
// of which sendgrid reported bounced. With failing set, reading the log
// for the export fails.
func newAnalyticsEnv(t *testing.T, failing bool) (*env, []*core.Log) {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t, testdb.SQLite(t), "wp_")
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	c := &core.Connection{Name: "SendGrid", Driver: "sendgrid", IsActive: true, Settings: core.Settings{}}
	if err := db.Connections().CreateConnection(ctx, c); err != nil {
		t.Fatal(err)
	}
	yesterday := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -1).Add(12 * time.Hour)
	var logs []*core.Log
	for i, src := range []string{"woocommerce", "woocommerce", "woocommerce", "woocommerce", "sendmail", "sendmail"} {
		l := &core.Log{Status: core.StatusDelivered, Source: src, SentConnectionID: &c.ID, CreatedAt: yesterday.Add(time.Duration(i) * time.Minute),
			ProviderMessageID: "pm-" + string(rune('a'+i)),
			Message:           core.Message{From: core.Address{Email: "shop@example.com"}, To: []core.Address{{Email: "ann@example.com"}}, Subject: "Order"}}
		if i == 3 {
			l.Status, l.LastError, l.Message.Subject = core.StatusFailed, "=550 no such user", "@everyone"
		}
		logs = append(logs, l)
	}
	if err := db.Logs().ImportLogs(ctx, logs); err != nil {
		t.Fatal(err)
	}
	pdb := prostore.New(db)
	if _, err := pdb.Events().RecordLogEvent(ctx, &events.LogEvent{LogID: logs[4].ID, Provider: "sendgrid", Event: events.EventBounced, At: yesterday.Add(time.Hour)}, "", ""); err != nil {
		t.Fatal(err)
	}
	svc := &analytics.Service{Rollups: pdb.Analytics(), Events: pdb.Events(), Logs: pdb.Analytics(), Connections: db.Connections(), Logger: quiet}
	if failing {
		svc.Logs = failingExport{}
	}
	settings := apptest.NewSettingsStore()
	m := &httppro.Module{Licenses: &pro.Licenses{Store: settings, Cipher: apptest.Cipher{Key: "k"}}, Settings: &pro.Settings{Store: settings},
		Analytics: svc}
	s := &api.Server{Auth: adminAuth{}, Hooks: &core.Hooks{}, Logger: quiet, Modules: []api.Module{m}}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return &env{url: ts.URL + api.Namespace, t: t}, logs
}

func TestAnalyticsRoutes(t *testing.T) {
	e, _ := newAnalyticsEnv(t, false)
	e.run([]step{
		{"overview", "GET", "/pro/analytics/overview?days=7", "", 200, []string{`"timezone":"UTC"`, `"previous_period"`, `"sent":6`,
			`"delivered":5`, `"failed":1`, `"bounced":1`, `"bounce_rate":16.67`, `"delivery_rate":83.33`,
			`"source":"woocommerce"`, `"source":"sendmail"`, `"name":"SendGrid"`}},
		{"deliverability", "GET", "/pro/analytics/deliverability", "", 200, []string{`"provider":"sendgrid"`, `"accepted":5`, `"bounced":1`,
			`"bounce_rate":20`, `"opened":null`}},
	})
	for _, route := range []string{"overview", "deliverability", "export"} {
		e.run([]step{
			{route + " days not a number", "GET", "/pro/analytics/" + route + "?days=ten", "", 422, []string{"validation_error", `"days"`}},
			{route + " days 0", "GET", "/pro/analytics/" + route + "?days=0", "", 422, []string{`"days"`}},
			{route + " days 367", "GET", "/pro/analytics/" + route + "?days=367", "", 422, []string{`"days"`}},
			{route + " reversed", "GET", "/pro/analytics/" + route + "?from=2024-06-10&to=2024-06-01", "", 422, []string{`"to"`, "after from"}},
			{route + " bad date", "GET", "/pro/analytics/" + route + "?from=2024-02-30&to=2024-03-01", "", 422, []string{`"from"`}},
			{route + " too long", "GET", "/pro/analytics/" + route + "?from=2022-01-01&to=2024-01-01", "", 422, []string{`"to"`, "366 days"}},
			{route + " days and dates", "GET", "/pro/analytics/" + route + "?days=3&from=2024-01-01", "", 422, []string{`"days"`}},
			{route + " year zero", "GET", "/pro/analytics/" + route + "?from=0000-01-01&to=0000-01-02", "", 422, []string{`"from"`}},
			{route + " injection", "GET", "/pro/analytics/" + route + "?from=2024-01-01%27%20OR%201=1--", "", 422, []string{`"from"`}},
		})
	}
}

func TestAnalyticsOverviewJSONShape(t *testing.T) {
	e, _ := newAnalyticsEnv(t, false)
	code, body := e.call("GET", "/pro/analytics/overview?days=2", "")
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	var o struct {
		Totals struct {
			Current, Previous struct{ Sent int64 }
			Change            struct {
				Sent        int64
				SentPercent *float64 `json:"sent_percent"`
			}
		}
		Sources []struct {
			Source  string
			Current struct{ Sent, Failed, Bounced int64 }
		}
	}
	if err := json.Unmarshal([]byte(body), &o); err != nil {
		t.Fatal(err)
	}
	if o.Totals.Current.Sent != 6 || o.Totals.Previous.Sent != 0 || o.Totals.Change.Sent != 6 || o.Totals.Change.SentPercent != nil {
		t.Fatalf("totals %+v", o.Totals)
	}
	if len(o.Sources) != 2 || o.Sources[0].Source != "woocommerce" || o.Sources[0].Current.Sent != 4 || o.Sources[0].Current.Failed != 1 ||
		o.Sources[1].Current.Sent != 2 || o.Sources[1].Current.Bounced != 1 {
		t.Fatalf("sources %+v", o.Sources)
	}
}

func TestAnalyticsExport(t *testing.T) {
	e, logs := newAnalyticsEnv(t, false)
	req, _ := http.NewRequest("GET", e.url+"/pro/analytics/export?days=3", nil)
	req.Header.Set("Authorization", "Bearer admin")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/csv") {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if cd := resp.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment; filename=mailsvc-logs-") || !strings.HasSuffix(cd, ".csv") {
		t.Fatalf("Content-Disposition %q", cd)
	}
	recs, err := csv.NewReader(resp.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(recs[0], analytics.ExportColumns) || len(recs) != 1+len(logs) {
		t.Fatalf("export %q", recs)
	}
	failed := recs[4]
	want := []string{failed[0], failed[1], "failed", "SendGrid", "woocommerce", "ann@example.com", "'@everyone", "'=550 no such user", "pm-d"}
	if !slices.Equal(failed, want) {
		t.Fatalf("failed log row %q, want %q", failed, want)
	}

	// Without authentication: refused, no file.
	code, body := func() (int, string) {
		resp, err := http.Get(e.url + "/pro/analytics/export")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}()
	if code != 401 || strings.Contains(body, "ann@example.com") {
		t.Fatalf("anonymous export: %d %s", code, body)
	}
}

func TestAnalyticsExportAbortsOnStoreError(t *testing.T) {
	e, _ := newAnalyticsEnv(t, true)
	req, _ := http.NewRequest("GET", e.url+"/pro/analytics/export?days=3", nil)
	req.Header.Set("Authorization", "Bearer admin")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return // the connection was cut before the headers: also a failed download
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil {
		t.Fatalf("the download of a failed export ended cleanly (%d): %q", resp.StatusCode, b)
	}
	if strings.Contains(string(b), "internal_error") {
		t.Fatalf("an error body was appended to the file: %q", b)
	}
}
