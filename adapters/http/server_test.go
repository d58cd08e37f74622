package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/core"

	api "github.com/mailsvc/mailsvc/adapters/http"
)

func init() {
	core.Register(core.Driver{
		Slug: "httptestmail",
		Name: "HTTP test driver",
		Fields: []core.Field{
			{Key: "host", Type: core.FieldString, Required: true, Destination: true},
			{Key: "port", Type: core.FieldInteger, Default: int64(25), Min: core.Int64(1), Max: core.Int64(65535)},
			{Key: "api_key", Label: "API key", Type: core.FieldString},
		},
		New: func(*core.Connection, core.DriverEnv) (core.Transport, error) { return nil, nil },
	})
}

// tokenAuth authenticates "Bearer admin" (manage_options), "Bearer editor"
// (no manage_options), rejects "Bearer bad", and treats no header as anonymous.
type tokenAuth struct {
	sawSecure   bool
	sawClientIP string
}

func (a *tokenAuth) Authenticate(r *http.Request, secure bool) (*core.User, error) {
	a.sawSecure = secure
	a.sawClientIP = core.ClientIP(r.Context())
	switch r.Header.Get("Authorization") {
	case "":
		return nil, nil
	case "Bearer admin":
		return &core.User{ID: 1, Login: "admin", Caps: map[string]bool{"manage_options": true, "edit_posts": true}}, nil
	case "Bearer editor":
		return &core.User{ID: 2, Login: "editor", Caps: map[string]bool{"edit_posts": true}}, nil
	}
	return nil, core.Errorf(core.EUNAUTHORIZED, "bad credentials")
}

type panicky struct{ api.ConnectionService }

func (panicky) List(context.Context, int, int) ([]*core.Connection, int, error) {
	panic("boom")
}

// newAPI returns a Server over in-memory stores and tokenAuth.
func newAPI() (*api.Server, *tokenAuth) {
	conns := apptest.NewConnectionStore()
	auth := &tokenAuth{}
	s := &api.Server{
		Auth:        auth,
		Connections: &app.Connections{Store: conns, Cipher: apptest.Cipher{Key: "k"}, Hooks: &core.Hooks{}},
		Settings:    &app.Settings{Store: apptest.NewSettingsStore(), Connections: conns},
		Hooks:       &core.Hooks{},
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	return s, auth
}

func newServer(t *testing.T) (*httptest.Server, *api.Server, *tokenAuth) {
	t.Helper()
	s, auth := newAPI()
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts, s, auth
}

type reply struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r reply) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

func (r reply) errorCode(t *testing.T) (string, int, map[string]string) {
	var e struct {
		Code string `json:"code"`
		Data struct {
			Status int               `json:"status"`
			Errors map[string]string `json:"errors"`
		} `json:"data"`
	}
	r.json(t, &e)
	return e.Code, e.Data.Status, e.Data.Errors
}

func do(t *testing.T, ts *httptest.Server, method, path, token string, body io.Reader) reply {
	t.Helper()
	req, err := http.NewRequest(method, ts.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, b}
}

const ns = "/wp-json/mailsvc/v1"

func TestErrorShapes(t *testing.T) {
	ts, _, _ := newServer(t)
	huge := `{"name":"` + strings.Repeat("a", 2<<20) + `"}`
	tests := []errorCase{
		{"anonymous", "GET", "/connections", "", "", 401, "rest_not_logged_in", ""},
		{"bad credentials", "GET", "/connections", "bad", "", 401, "rest_not_logged_in", ""},
		{"no capability", "GET", "/connections", "editor", "", 403, "rest_forbidden", ""},
		{"no capability on settings", "PUT", "/settings", "editor", `{}`, 403, "rest_forbidden", ""},
		{"unknown route", "GET", "/nope", "admin", "", 404, "rest_no_route", ""},
		{"unknown route anonymous", "GET", "/nope", "", "", 404, "rest_no_route", ""},
		{"wrong method", "PATCH", "/settings", "admin", "", 404, "rest_no_route", ""},
		{"missing connection", "GET", "/connections/77", "admin", "", 404, "not_found", ""},
		{"non-numeric id", "GET", "/connections/abc", "admin", "", 404, "not_found", ""},
		{"malformed json", "POST", "/connections", "admin", `{"name":`, 400, "bad_request", ""},
		{"json array body", "POST", "/connections", "admin", `[1,2]`, 400, "bad_request", ""},
		{"wrong json type", "POST", "/connections", "admin", `{"name": 5, "driver": "httptestmail"}`, 400, "bad_request", "name"},
		{"settings not an object", "POST", "/connections", "admin", `{"name":"x","driver":"httptestmail","settings":"host"}`, 400, "bad_request", "settings"},
		{"huge body", "POST", "/connections", "admin", huge, 400, "bad_request", ""},
		{"validation", "POST", "/connections", "admin", `{"name":"x","driver":"httptestmail","settings":{"port":99999}}`, 422, "validation_error", "port"},
		{"unknown driver", "POST", "/connections", "admin", `{"name":"x","driver":"carrier-pigeon"}`, 422, "validation_error", "driver"},
		{"bulk delete ids wrong type", "DELETE", "/connections", "admin", `{"ids":"1,2"}`, 400, "bad_request", "ids"},
		{"bulk delete no ids", "DELETE", "/connections", "admin", `{}`, 422, "validation_error", "ids"},
		{"settings out of bounds", "PUT", "/settings", "admin", `{"health_check_interval": 0}`, 422, "validation_error", "health_check_interval"},
		{"settings wrong type", "PUT", "/settings", "admin", `{"oauth_refresh_enabled": "no"}`, 422, "validation_error", "oauth_refresh_enabled"},
		{"log_body not a mode", "PUT", "/settings", "admin", `{"log_body": "everything"}`, 422, "validation_error", "log_body"},
		{"log_body_sources not an object", "PUT", "/settings", "admin", `{"log_body_sources": ["woocommerce"]}`, 422, "validation_error", "log_body_sources"},
		{"log_body_sources with a bad mode", "PUT", "/settings", "admin", `{"log_body_sources": {"woocommerce": "some"}}`, 422, "validation_error", "log_body_sources"},
		{"bad per_page", "GET", "/connections?per_page=1000", "admin", "", 422, "validation_error", "per_page"},
		{"unknown transport", "GET", "/transports/nope", "admin", "", 404, "not_found", ""},
	}
	checkErrorCases(t, ts, tests)
}

func TestConnectionLifecycle(t *testing.T) {
	ts, _, _ := newServer(t)
	var ids []int64
	for i := 0; i < 3; i++ {
		r := do(t, ts, "POST", ns+"/connections", "admin", strings.NewReader(fmt.Sprintf(`{"name":"c%d","driver":"httptestmail","is_active":true,"settings":{"host":"h%d","api_key":"SECRET-%d"}}`, i, i, i)))
		if r.Status != 201 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		if bytes.Contains(r.Body, []byte("SECRET")) {
			t.Fatalf("secret in response: %s", r.Body)
		}
		var c core.Connection
		r.json(t, &c)
		ids = append(ids, c.ID)
	}
	r := do(t, ts, "GET", ns+"/connections?per_page=2&page=2", "admin", nil)
	var list []core.Connection
	r.json(t, &list)
	if r.Status != 200 || len(list) != 1 || list[0].ID != ids[2] || r.Header.Get("X-WP-Total") != "3" || r.Header.Get("X-WP-TotalPages") != "2" {
		t.Fatalf("page 2: %d %v headers %v", r.Status, list, r.Header)
	}
	r = do(t, ts, "PUT", ns+fmt.Sprintf("/connections/%d", ids[0]), "admin", strings.NewReader(`{"settings":{"port":2525,"api_key":"********"}}`))
	var c core.Connection
	r.json(t, &c)
	if r.Status != 200 || c.Settings["port"] != float64(2525) || c.Settings["host"] != "h0" || c.Settings["api_key"] != core.Mask {
		t.Fatalf("update: %d %s", r.Status, r.Body)
	}
	r = do(t, ts, "DELETE", ns+fmt.Sprintf("/connections/%d", ids[0]), "admin", nil)
	if r.Status != 200 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	r = do(t, ts, "DELETE", ns+"/connections", "admin", strings.NewReader(fmt.Sprintf(`{"ids":[%d,%d,9999]}`, ids[1], ids[2])))
	var del struct{ Deleted int }
	r.json(t, &del)
	if r.Status != 200 || del.Deleted != 2 {
		t.Fatalf("bulk delete: %d %s", r.Status, r.Body)
	}
	r = do(t, ts, "GET", ns+"/connections", "admin", nil)
	if string(bytes.TrimSpace(r.Body)) != "[]" || r.Header.Get("X-WP-Total") != "0" {
		t.Fatalf("empty list: %s %v", r.Body, r.Header)
	}
}

func TestTransportsServeRegistry(t *testing.T) {
	ts, _, _ := newServer(t)
	r := do(t, ts, "GET", ns+"/transports/httptestmail", "admin", nil)
	var d struct {
		Driver string `json:"driver"`
		Fields []core.Field
	}
	r.json(t, &d)
	// Its three fields and the three every driver gets (max_concurrency,
	// adaptive_concurrency, max_per_second).
	if r.Status != 200 || d.Driver != "httptestmail" || len(d.Fields) != 6 {
		t.Fatalf("transport: %d %s", r.Status, r.Body)
	}
	for _, f := range d.Fields {
		if f.Constant != core.ConstantName("httptestmail", f.Key) {
			t.Errorf("field %s constant %q", f.Key, f.Constant)
		}
		if f.Key == "api_key" && !f.Sensitive {
			t.Errorf("api_key not marked sensitive")
		}
	}
	r = do(t, ts, "GET", "/?rest_route=/mailsvc/v1/transports", "admin", nil)
	var all []map[string]any
	r.json(t, &all)
	if r.Status != 200 || len(all) == 0 {
		t.Fatalf("rest_route form: %d %s", r.Status, r.Body)
	}
}

func TestCapabilityFilterAndPanic(t *testing.T) {
	ts, s, _ := newServer(t)
	s.Hooks.AddFilter(core.HookRESTCapability, func(v any, _ ...any) any { return "edit_posts" })
	if r := do(t, ts, "GET", ns+"/settings", "editor", nil); r.Status != 200 {
		t.Fatalf("editor with filtered capability: %d %s", r.Status, r.Body)
	}
	s.Connections = panicky{}
	r := do(t, ts, "GET", ns+"/connections", "admin", nil)
	code, _, _ := r.errorCode(t)
	if r.Status != 500 || code != "internal_error" || bytes.Contains(r.Body, []byte("boom")) {
		t.Fatalf("panic: %d %s", r.Status, r.Body)
	}
}

func TestSecureFromTrustedProxyOnly(t *testing.T) {
	ts, s, auth := newServer(t)
	req := func() {
		r, _ := http.NewRequest("GET", ts.URL+ns+"/settings", nil)
		r.Header.Set("Authorization", "Bearer admin")
		r.Header.Set("X-Forwarded-Proto", "https")
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	req()
	if auth.sawSecure {
		t.Fatal("X-Forwarded-Proto trusted from an untrusted peer")
	}
	_, loopback, _ := net.ParseCIDR("127.0.0.0/8")
	s.TrustedProxies = append(s.TrustedProxies, loopback)
	req()
	if !auth.sawSecure {
		t.Fatal("X-Forwarded-Proto from a trusted proxy ignored")
	}
}

// TestClientIPFromTrustedProxyOnly: the client address the authenticator
// sees is the peer's, or from a trusted proxy the last X-Forwarded-For
// entry that is not itself a trusted proxy; a list from anyone else is
// ignored.
func TestClientIPFromTrustedProxyOnly(t *testing.T) {
	ts, s, auth := newServer(t)
	req := func(forwarded ...string) string {
		r, _ := http.NewRequest("GET", ts.URL+ns+"/settings", nil)
		r.Header.Set("Authorization", "Bearer admin")
		for _, f := range forwarded {
			r.Header.Add("X-Forwarded-For", f)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return auth.sawClientIP
	}
	if got := req("203.0.113.7"); got != "127.0.0.1" {
		t.Fatalf("from an untrusted peer: %q, want the peer 127.0.0.1", got)
	}
	_, loopback, _ := net.ParseCIDR("127.0.0.0/8")
	_, office, _ := net.ParseCIDR("10.0.0.0/8")
	s.TrustedProxies = append(s.TrustedProxies, loopback, office)
	tests := []struct {
		forwarded []string
		want      string
	}{
		{nil, "127.0.0.1"},
		{[]string{"203.0.113.7"}, "203.0.113.7"},
		{[]string{"198.51.100.1, 203.0.113.7"}, "203.0.113.7"}, // the client claims an address first
		{[]string{"203.0.113.7, 10.1.2.3"}, "203.0.113.7"},     // through a second trusted proxy
		{[]string{"203.0.113.7", "10.1.2.3"}, "203.0.113.7"},   // in two header lines
		{[]string{"not-an-address, 10.1.2.3"}, "10.1.2.3"},     // a malformed hop ends the walk
		{[]string{"198.51.100.1, garbage"}, "127.0.0.1"},       // a malformed last hop: the peer
	}
	for _, tt := range tests {
		if got := req(tt.forwarded...); got != tt.want {
			t.Errorf("X-Forwarded-For %q: %q, want %q", tt.forwarded, got, tt.want)
		}
	}
}

// TestRequestLogAtDebug checks that a request is logged at DEBUG only: a
// service logging at INFO writes no line per request.
func TestRequestLogAtDebug(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		s, _ := newAPI()
		var buf bytes.Buffer
		s.Logger = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level}))
		ts := httptest.NewServer(s.Handler())
		do(t, ts, "GET", ns+"/settings", "", nil)
		ts.Close()
		logged := strings.Contains(buf.String(), "msg=request")
		if want := level == slog.LevelDebug; logged != want {
			t.Errorf("at %v the request was logged: %v, want %v\n%s", level, logged, want, buf.String())
		}
		if logged && !strings.Contains(buf.String(), "level=DEBUG msg=request method=GET path="+ns+"/settings status=401") {
			t.Errorf("request line: %s", buf.String())
		}
	}
}

// errorCase is a request that must fail: its answer's status, error code
// and data.status, and the field data.errors names (when field is set).
type errorCase struct {
	name, method, path, token, body string
	status                          int
	code, field                     string
}

// checkErrorCases sends each case (its path under the namespace) and
// checks the error it answers.
func checkErrorCases(t *testing.T, ts *httptest.Server, cases []errorCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			r := do(t, ts, tt.method, ns+tt.path, tt.token, body)
			code, status, fields := r.errorCode(t)
			if r.Status != tt.status || code != tt.code || status != tt.status || (tt.field != "" && fields[tt.field] == "") {
				t.Fatalf("%d %s (data.status %d, data.errors %v): %s; want %d %s naming %q", r.Status, code, status, fields, r.Body, tt.status, tt.code, tt.field)
			}
		})
	}
}
