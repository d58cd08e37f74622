package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestStandaloneFirstRunUsersAndRestart(t *testing.T) {
	dir := t.TempDir()
	svc := startService(t, dir)
	m := firstRunPassword.FindStringSubmatch(svc.stdout.String())
	if m == nil {
		t.Fatalf("first start printed no application password:\n%s", svc.stdout)
	}
	admin := basic("admin", m[1])
	if !strings.Contains(svc.stdout.String(), "curl -u 'admin:"+m[1]+"' "+svc.Base) {
		t.Errorf("first start printed no ready curl line:\n%s", svc.stdout)
	}

	if r := call(t, "GET", svc.Base+"/settings", "", admin); r.Status != 200 {
		t.Fatalf("admin GET /settings: %d %s", r.Status, r.Body)
	}
	// WordPress shows application passwords in groups of four; both forms work.
	chunked := m[1][:4] + " " + m[1][4:8] + " " + m[1][8:12] + " " + m[1][12:16] + " " + m[1][16:20] + " " + m[1][20:]
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
		{"unknown user", basic("nobody", m[1]), 401, "rest_not_logged_in"},
	}
	for _, c := range cases {
		r := call(t, "GET", svc.Base+"/connections", "", c.auth)
		if r.Status != c.status || r.code() != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.Status, r.Body, c.status, c.code)
		}
	}

	out, err := svc.run("users", "add", "sam", "--role", "subscriber", "--email", "sam@example.com")
	if err != nil {
		t.Fatalf("users add: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	samPW := lines[len(lines)-1]
	if len(samPW) != 24 {
		t.Fatalf("last line of users add is %q, want the 24-character password", samPW)
	}
	if r := call(t, "GET", svc.Base+"/settings", "", basic("sam", samPW)); r.Status != 403 || r.code() != "rest_forbidden" {
		t.Errorf("subscriber: %d %s", r.Status, r.Body)
	}
	out, err = svc.run("users", "add", "ed", "--role", "administrator")
	if err != nil {
		t.Fatalf("users add administrator: %v\n%s", err, out)
	}
	lines = strings.Split(strings.TrimSpace(out), "\n")
	if r := call(t, "GET", svc.Base+"/settings", "", basic("ed", lines[len(lines)-1])); r.Status != 200 {
		t.Errorf("second administrator: %d %s", r.Status, r.Body)
	}
	if out, err := svc.run("users", "add", "x", "--role", "emperor"); err == nil || !strings.Contains(out, "emperor") {
		t.Errorf("unknown role accepted: %v %s", err, out)
	}

	// Settings survive a restart; the first administrator is not created twice.
	if r := call(t, "PUT", svc.Base+"/settings", `{"health_check_interval": 30, "from_email": "site@example.com"}`, admin); r.Status != 200 {
		t.Fatalf("PUT /settings: %d %s", r.Status, r.Body)
	}
	svc.stop()
	svc2 := startService(t, dir)
	if firstRunPassword.MatchString(svc2.stdout.String()) {
		t.Errorf("second start created another administrator:\n%s", svc2.stdout)
	}
	r := call(t, "GET", svc2.Base+"/settings", "", admin)
	var got map[string]any
	if err := json.Unmarshal(r.Body, &got); err != nil || got["health_check_interval"] != float64(30) || got["from_email"] != "site@example.com" {
		t.Errorf("settings after restart: %d %s", r.Status, r.Body)
	}

	cfg, err := svc2.run("config")
	if err != nil {
		t.Fatalf("config: %v\n%s", err, cfg)
	}
	for _, want := range []string{"MAILSVC_AWS_SES_ACCESS_KEY_ID", "MAIL_SVC_ENCRYPTION_KEY", "MAIL_SVC_DEBUG_SECRET_VISIBILITY", "health_check_interval"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config output lacks %s", want)
		}
	}
	if !strings.Contains(cfg, "health_check_interval") || !strings.Contains(lineOf(cfg, "health_check_interval"), "database") {
		t.Errorf("stored setting not shown as from the database: %q", lineOf(cfg, "health_check_interval"))
	}
	v, err := svc2.run("version")
	if err != nil || !strings.HasPrefix(v, "mailsvc ") {
		t.Errorf("version: %q %v", v, err)
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
