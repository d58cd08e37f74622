package http_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/store/storetest"
	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/capture"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/internal/testdb"
)

// copySite is a running site whose address moved: a copy of the live one.
type copySite struct{ url string }

func (c copySite) Fingerprint(context.Context) (core.Fingerprint, error) {
	return core.Fingerprint{SiteURL: c.url, Home: c.url, DBName: "wp", DBHost: "localhost", TablePrefix: "wp_"}, nil
}

func (copySite) EnvironmentType(context.Context) (string, error) { return "", nil }

// newCaptureServer serves the capture and log routes over a real SQLite
// store whose live site is https://live.example, run as
// https://staging.example, with n captured logs.
func newCaptureServer(t *testing.T, n int) (*httptest.Server, *store.DB, []int64) {
	t.Helper()
	ctx := context.Background()
	db := storetest.Open(t, testdb.SQLite(t), "wp_")
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if _, err := db.Capture().RecordFingerprint(ctx, core.Fingerprint{SiteURL: "https://live.example", Home: "https://live.example", DBName: "wp", DBHost: "localhost", TablePrefix: "wp_"}, false); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i := range n {
		l := &core.Log{Message: core.Message{From: core.Address{Email: "site@example.com"}, To: []core.Address{{Email: fmt.Sprintf("c%d@customer.example", i)}}, Subject: fmt.Sprintf("held %d", i), Text: "b"}}
		if err := db.Logs().EnqueueLog(ctx, l); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, l.ID)
	}
	if n > 0 {
		claimed, err := db.Logs().ClaimLogs(ctx, "w", n, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		var outs []core.LogOutcome
		for _, l := range claimed {
			outs = append(outs, core.LogOutcome{LogID: l.ID, Status: core.StatusCaptured})
		}
		if _, err := db.Logs().RecordOutcomes(ctx, "w", outs); err != nil {
			t.Fatal(err)
		}
	}
	s, _ := newAPI()
	settings := &app.Settings{Store: db.Settings(), Connections: db.Connections()}
	s.Logs = &app.Logs{Store: db.Logs()}
	s.Settings = settings
	s.Capture = &capture.Guard{Store: db.Capture(), Site: copySite{"https://staging.example"}, Settings: settings, Logger: quiet}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts, db, ids
}

// TestCaptureRoutesBadInput: the usual auth and error shapes.
func TestCaptureRoutesBadInput(t *testing.T) {
	ts, _, ids := newCaptureServer(t, 1)
	tests := []errorCase{
		{"list without credentials", "GET", "/capture", "", "", 401, "rest_not_logged_in", ""},
		{"list without the capability", "GET", "/capture", "editor", "", 403, "rest_forbidden", ""},
		{"release without credentials", "POST", "/capture/release", "", `{"all":true}`, 401, "rest_not_logged_in", ""},
		{"adopt without the capability", "POST", "/capture/adopt", "editor", "", 403, "rest_forbidden", ""},
		{"list page 0", "GET", "/capture?page=0", "admin", "", 422, "validation_error", "page"},
		{"list per_page too big", "GET", "/capture?per_page=101", "admin", "", 422, "validation_error", "per_page"},
		{"release with malformed JSON", "POST", "/capture/release", "admin", `{"ids":`, 400, "bad_request", ""},
		{"release with ids of the wrong type", "POST", "/capture/release", "admin", `{"ids":"1"}`, 400, "bad_request", ""},
		{"release with all of the wrong type", "POST", "/capture/release", "admin", `{"all":"yes"}`, 400, "bad_request", ""},
		{"release with nothing", "POST", "/capture/release", "admin", `{}`, 422, "validation_error", "ids"},
		{"release with empty ids", "POST", "/capture/release", "admin", `{"ids":[]}`, 422, "validation_error", "ids"},
		{"release with a zero id", "POST", "/capture/release", "admin", `{"ids":[0]}`, 422, "validation_error", "ids"},
		{"release with all false", "POST", "/capture/release", "admin", `{"all":false}`, 422, "validation_error", "all"},
		{"release with ids and all", "POST", "/capture/release", "admin", fmt.Sprintf(`{"ids":[%d],"all":true}`, ids[0]), 422, "validation_error", "ids"},
		{"release of a log that does not exist", "POST", "/capture/release", "admin", `{"ids":[999]}`, 404, "not_found", ""},
	}
	checkErrorCases(t, ts, tests)
}

// TestCaptureRoutes: the state and the paginated captured messages,
// release by ids (a second release is 404), adopt (nothing released), and
// release all.
func TestCaptureRoutes(t *testing.T) {
	ts, db, ids := newCaptureServer(t, 3)
	type view struct {
		Mode        string   `json:"mode"`
		Reason      string   `json:"reason"`
		Message     string   `json:"message"`
		Differences []string `json:"differences"`
		Captured    int      `json:"captured"`
		Live        *core.Fingerprint
		Current     core.Fingerprint
		Messages    []struct {
			ID     int64  `json:"id"`
			Status string `json:"status"`
		} `json:"messages"`
	}
	var v view
	r := do(t, ts, "GET", ns+"/capture?per_page=2&page=2", "admin", nil)
	r.json(t, &v)
	if r.Status != 200 || v.Mode != "capture" || v.Reason != "copy" || v.Message != "This looks like a copy of https://live.example. Mail is being held." ||
		v.Captured != 3 || len(v.Messages) != 1 || v.Messages[0].ID != ids[0] || v.Messages[0].Status != "captured" ||
		v.Live == nil || v.Live.SiteURL != "https://live.example" || v.Current.SiteURL != "https://staging.example" ||
		strings.Join(v.Differences, ",") != "siteurl,home" {
		t.Fatalf("GET /capture page 2: %d %s", r.Status, r.Body)
	}
	if r.Header.Get("X-WP-Total") != "3" || r.Header.Get("X-WP-TotalPages") != "2" {
		t.Fatalf("pagination headers %v", r.Header)
	}
	r = do(t, ts, "POST", ns+"/capture/release", "admin", strings.NewReader(fmt.Sprintf(`{"ids":[%d]}`, ids[0])))
	if r.Status != 200 || !strings.Contains(string(r.Body), `"released":1`) {
		t.Fatalf("release: %d %s", r.Status, r.Body)
	}
	if r = do(t, ts, "POST", ns+"/capture/release", "admin", strings.NewReader(fmt.Sprintf(`{"ids":[%d]}`, ids[0]))); r.Status != 404 {
		t.Fatalf("second release: %d %s", r.Status, r.Body)
	}
	if l, err := db.Logs().FindLogByID(context.Background(), ids[0]); err != nil || l.Status != core.StatusQueued {
		t.Fatalf("released log: %+v, %v", l, err)
	}
	r = do(t, ts, "POST", ns+"/capture/adopt", "admin", nil)
	r.json(t, &v)
	if r.Status != 200 || v.Mode != "send" || v.Live.SiteURL != "https://staging.example" || v.Captured != 2 {
		t.Fatalf("adopt: %d %s", r.Status, r.Body)
	}
	r = do(t, ts, "POST", ns+"/capture/release", "admin", strings.NewReader(`{"all":true}`))
	if r.Status != 200 || !strings.Contains(string(r.Body), `"released":2`) {
		t.Fatalf("release all: %d %s", r.Status, r.Body)
	}
	if r = do(t, ts, "POST", ns+"/capture/release", "admin", strings.NewReader(`{"all":true}`)); r.Status != 200 || !strings.Contains(string(r.Body), `"released":0`) {
		t.Fatalf("release all of none: %d %s", r.Status, r.Body)
	}
}
