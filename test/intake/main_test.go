// Package intake tests the ways mail enters mailsvc other than the
// WordPress bridge — `mailsvc sendmail` and the SMTP submission listener —
// and the site tools route GET /tools/plugins, all through the built
// binary.
package intake

import (
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/servicetest"

	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"testing"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

// Shorthands for the calls every test here makes.
var (
	call  = servicetest.Call
	basic = servicetest.Basic
)

// result unpacks a finished command.
func result(r servicetest.Result) (stdout, stderr string, code int) {
	return r.Stdout, r.Stderr, r.Code
}

// adminPassword returns the application password that the first start
// printed for "admin".
func adminPassword(t *testing.T, s *servicetest.Service) string {
	t.Helper()
	pw := s.MustAdminPassword(t)
	return pw
}

// addUser creates a standalone user with a role and returns its
// application password.
func addUser(t *testing.T, s *servicetest.Service, login, role string) string {
	t.Helper()
	out, errOut, code := result(s.Run("", "users", "add", login, "--role", role))
	m := regexp.MustCompile(`(?m)^([A-Za-z0-9]{24})$`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("users add %s: %d %s %s", login, code, out, errOut)
	}
	return m[1]
}

// callJSON makes a request that must answer want and decodes the body.
func callJSON(t *testing.T, method, url, body string, auth func(*http.Request), want int, v any) {
	t.Helper()
	r := call(t, method, url, body, auth)
	if r.Status != want {
		t.Fatalf("%s %s: %d %s", method, url, r.Status, r.Body)
	}
	if v != nil {
		if err := json.Unmarshal(r.Body, v); err != nil {
			t.Fatalf("%s %s: %v in %s", method, url, err, r.Body)
		}
	}
}

// useSink creates an smtp connection to the sink at host:port and makes
// it the default connection.
func useSink(t *testing.T, s *servicetest.Service, admin func(*http.Request), host string, port int) int64 {
	t.Helper()
	var c struct{ ID int64 }
	body := fmt.Sprintf(`{"name":"sink","driver":"smtp","settings":{"host":%q,"port":%d,"encryption":"none","auth":false}}`, host, port)
	callJSON(t, "POST", s.Base+"/connections", body, admin, 201, &c)
	callJSON(t, "PUT", s.Base+"/settings", fmt.Sprintf(`{"default_connection_id":%d,"from_email":"default@example.org","from_name":"Default Sender"}`, c.ID), admin, 200, nil)
	return c.ID
}

// logDetail is GET /logs/{id}.
type logDetail struct {
	ID          int64        `json:"id"`
	Status      string       `json:"status"`
	Source      string       `json:"source"`
	Message     core.Message `json:"message"`
	Attachments []struct {
		Filename    string `json:"filename"`
		ContentType string `json:"content_type"`
		Size        int    `json:"size"`
		Inline      bool   `json:"inline"`
		ContentID   string `json:"content_id"`
	} `json:"attachments"`
}

// findLog returns the log whose subject is subject.
func findLog(t *testing.T, s *servicetest.Service, admin func(*http.Request), subject string) logDetail {
	t.Helper()
	var list []struct {
		ID int64 `json:"id"`
	}
	callJSON(t, "GET", s.Base+"/logs?search="+url.QueryEscape(subject), "", admin, 200, &list)
	if len(list) != 1 {
		t.Fatalf("logs with subject %q: %d", subject, len(list))
	}
	var d logDetail
	callJSON(t, "GET", fmt.Sprintf("%s/logs/%d", s.Base, list[0].ID), "", admin, 200, &d)
	return d
}

func emails(list []core.Address) []string {
	out := []string{}
	for _, a := range list {
		out = append(out, a.Email)
	}
	return out
}
