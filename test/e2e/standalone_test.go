package e2e

import (
	"github.com/mailsvc/mailsvc/test/servicetest"

	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestStandaloneFirstRunUsersAndRestart(t *testing.T) {
	dir := t.TempDir()
	svc := servicetest.Start(t, dir)
	pw := svc.MustAdminPassword(t)
	admin := basic("admin", pw)
	if !strings.Contains(svc.Stdout.String(), "curl -u 'admin:"+pw+"' "+svc.Base) {
		t.Errorf("first start printed no ready curl line:\n%s", svc.Stdout)
	}

	if r := call(t, "GET", svc.Base+"/settings", "", admin); r.Status != 200 {
		t.Fatalf("admin GET /settings: %d %s", r.Status, r.Body)
	}
	// WordPress shows application passwords in groups of four; both forms work.
	chunked := pw[:4] + " " + pw[4:8] + " " + pw[8:12] + " " + pw[12:16] + " " + pw[16:20] + " " + pw[20:]
	if r := call(t, "GET", svc.Base+"/settings", "", basic("admin", chunked)); r.Status != 200 {
		t.Errorf("chunked password: %d %s", r.Status, r.Body)
	}
	cases := []struct {
		name   string
		auth   func(*http.Request)
		status int
		code   string
	}{
		{"anonymous", nil, 401, "rest_not_logged_in"},
		{"wrong password", basic("admin", "AAAAAAAAAAAAAAAAAAAAAAAA"), 401, "rest_not_logged_in"},
		{"unknown user", basic("nobody", pw), 401, "rest_not_logged_in"},
	}
	for _, c := range cases {
		r := call(t, "GET", svc.Base+"/connections", "", c.auth)
		if r.Status != c.status || r.Code() != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.Status, r.Body, c.status, c.code)
		}
	}

	res := svc.Run("", "users", "add", "sam", "--role", "subscriber", "--email", "sam@example.com")
	if res.Code != 0 {
		t.Fatalf("users add: %+v", res)
	}
	samPW := res.LastLine()
	if len(samPW) != 24 {
		t.Fatalf("last line of users add is %q, want the 24-character password", samPW)
	}
	if r := call(t, "GET", svc.Base+"/settings", "", basic("sam", samPW)); r.Status != 403 || r.Code() != "rest_forbidden" {
		t.Errorf("subscriber: %d %s", r.Status, r.Body)
	}
	res = svc.Run("", "users", "add", "ed", "--role", "administrator")
	if res.Code != 0 {
		t.Fatalf("users add administrator: %+v", res)
	}
	if r := call(t, "GET", svc.Base+"/settings", "", basic("ed", res.LastLine())); r.Status != 200 {
		t.Errorf("second administrator: %d %s", r.Status, r.Body)
	}
	if res := svc.Run("", "users", "add", "x", "--role", "emperor"); res.Code == 0 || !strings.Contains(res.Stderr, "emperor") {
		t.Errorf("unknown role accepted: %+v", res)
	}

	// Settings survive a restart; the first administrator is not created twice.
	if r := call(t, "PUT", svc.Base+"/settings", `{"health_check_interval": 30, "from_email": "site@example.com"}`, admin); r.Status != 200 {
		t.Fatalf("PUT /settings: %d %s", r.Status, r.Body)
	}
	svc.Stop(t)
	svc2 := servicetest.Start(t, dir)
	if svc2.AdminPassword() != "" {
		t.Errorf("second start created another administrator:\n%s", svc2.Stdout)
	}
	r := call(t, "GET", svc2.Base+"/settings", "", admin)
	var got map[string]any
	if err := json.Unmarshal(r.Body, &got); err != nil || got["health_check_interval"] != float64(30) || got["from_email"] != "site@example.com" {
		t.Errorf("settings after restart: %d %s", r.Status, r.Body)
	}

	res = svc2.Run("", "config")
	if res.Code != 0 {
		t.Fatalf("config: %+v", res)
	}
	cfg := res.Stdout
	for _, want := range []string{"MAILSVC_AWS_SES_ACCESS_KEY_ID", "MAIL_SVC_ENCRYPTION_KEY", "MAIL_SVC_DEBUG_SECRET_VISIBILITY", "health_check_interval"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config output lacks %s", want)
		}
	}
	if l := lineOf(cfg, "MAILSVC_DB "); !strings.Contains(l, "sqlite:") || !strings.Contains(l, "mailsvc.db") || !strings.HasSuffix(strings.TrimSpace(l), "default") {
		t.Errorf("config does not show the database in use: %q", l)
	}
	if !strings.Contains(cfg, "health_check_interval") || !strings.Contains(lineOf(cfg, "health_check_interval"), "database") {
		t.Errorf("stored setting not shown as from the database: %q", lineOf(cfg, "health_check_interval"))
	}
	if res := svc2.Run("", "version"); res.Code != 0 || !strings.HasPrefix(res.Stdout, "mailsvc ") {
		t.Errorf("version: %+v", res)
	}
}

func lineOf(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// TestStandaloneMigrationTools: the migration tools routes exist without
// WordPress too. The scan finds no other plugin (the normal shape, an
// empty list) and an import is the spec's 422 for an unavailable source,
// never rest_no_route; the capability check still comes first.
func TestStandaloneMigrationTools(t *testing.T) {
	dir := t.TempDir()
	svc := servicetest.Start(t, dir)
	admin := basic("admin", svc.AdminPassword())

	r := call(t, "GET", svc.Base+"/tools/migration/scan", "", admin)
	var scan map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &scan); r.Status != 200 || err != nil || string(scan["sources"]) != "[]" || len(scan) != 1 {
		t.Errorf("scan: %d %s, want 200 {\"sources\":[]}", r.Status, r.Body)
	}
	if r := call(t, "GET", svc.Base+"/tools/migration/scan?counts=false", "", admin); r.Status != 200 {
		t.Errorf("scan without counts: %d %s", r.Status, r.Body)
	}
	for _, body := range []string{`{"source":"wp-mail-smtp"}`, `{"source":"fluent-smtp","dry_run":true,"import_logs":true}`, `{"source":"nope"}`} {
		r := call(t, "POST", svc.Base+"/tools/migration/import", body, admin)
		var e struct {
			Data struct {
				Errors map[string]string `json:"errors"`
			} `json:"data"`
		}
		if err := json.Unmarshal(r.Body, &e); r.Status != 422 || r.Code() != "validation_error" || err != nil || e.Data.Errors["source"] == "" {
			t.Errorf("import %s: %d %s, want 422 validation_error on source", body, r.Status, r.Body)
		}
	}
	if r := call(t, "POST", svc.Base+"/tools/migration/import", `{"source":`, admin); r.Status != 400 || r.Code() != "bad_request" {
		t.Errorf("malformed import body: %d %s", r.Status, r.Body)
	}
	res := svc.Run("", "users", "add", "sam", "--role", "subscriber")
	if res.Code != 0 {
		t.Fatalf("users add: %+v", res)
	}
	if r := call(t, "GET", svc.Base+"/tools/migration/scan", "", basic("sam", res.LastLine())); r.Status != 403 || r.Code() != "rest_forbidden" {
		t.Errorf("subscriber scan: %d %s", r.Status, r.Body)
	}
}
