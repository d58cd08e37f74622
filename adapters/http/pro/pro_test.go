package pro_test

import (
	"crypto/ed25519"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	api "github.com/mailsvc/mailsvc/adapters/http"
	httppro "github.com/mailsvc/mailsvc/adapters/http/pro"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/pro"
	"github.com/mailsvc/mailsvc/core"
)

// adminAuth authenticates every request carrying any Authorization header
// as an administrator.
type adminAuth struct{}

func (adminAuth) Authenticate(r *http.Request, _ bool) (*core.User, error) {
	if r.Header.Get("Authorization") == "" {
		return nil, nil
	}
	return &core.User{ID: 1, Login: "admin", Caps: map[string]bool{core.DefaultCapability: true}}, nil
}

// gatedModule is the Pro module plus two test routes behind its gates.
type gatedModule struct{ *httppro.Module }

func (g gatedModule) RegisterRoutes(rt *api.Routes) {
	g.Module.RegisterRoutes(rt)
	ok := func(w http.ResponseWriter, _ *http.Request) error { api.WriteJSON(w, 200, "ok"); return nil }
	rt.Private("GET", "/pro/test/licensed", g.RequireLicense(ok))
	rt.Private("GET", "/pro/test/domain-check", g.RequireFeature("tools.domain_check", ok))
}

type env struct {
	url  string
	priv ed25519.PrivateKey
	t    *testing.T
}

func newEnv(t *testing.T) *env {
	t.Helper()
	pub, priv, _ := ed25519.GenerateKey(nil)
	store := apptest.NewSettingsStore()
	m := &httppro.Module{
		Licenses: &pro.Licenses{Store: store, Cipher: apptest.Cipher{Key: "k"}, Vendors: []ed25519.PublicKey{pub}, Site: "https://shop.example.com"},
		Settings: &pro.Settings{Store: store},
	}
	s := &api.Server{Auth: adminAuth{}, Hooks: &core.Hooks{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Modules: []api.Module{gatedModule{m}}}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return &env{url: ts.URL + api.Namespace, priv: priv, t: t}
}

func (e *env) key(site string, expires time.Time, features ...string) string {
	k, err := pro.IssueLicense(e.priv, pro.License{Site: site, ExpiresAt: expires, Features: features})
	if err != nil {
		e.t.Fatal(err)
	}
	return k
}

func (e *env) call(method, path, body string) (int, string) {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer admin")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

type step struct {
	name, method, path, body string
	status                   int
	contains                 []string
}

func (e *env) run(steps []step, secrets ...string) {
	for _, s := range steps {
		code, body := e.call(s.method, s.path, s.body)
		if code != s.status {
			e.t.Fatalf("%s: %d %s, want %d", s.name, code, body, s.status)
		}
		for _, c := range s.contains {
			if !strings.Contains(body, c) {
				e.t.Errorf("%s: %s does not contain %s", s.name, body, c)
			}
		}
		for _, secret := range secrets {
			if strings.Contains(body, secret) {
				e.t.Errorf("%s: the licence key appears in the answer", s.name)
			}
		}
	}
}

func TestLicenseRoutesAndGates(t *testing.T) {
	e := newEnv(t)
	year := time.Now().AddDate(1, 0, 0)
	full := e.key("https://shop.example.com", year, "tools.domain_check")
	bare := e.key("https://shop.example.com", year)
	body := func(k string) string { b, _ := json.Marshal(map[string]string{"license_key": k}); return string(b) }
	e.run([]step{
		{"status, none", "GET", "/pro/license/status", "", 200, []string{`"active":false`, `"status":"inactive"`, `"license_key":""`, `"last_confirmed_at":null`}},
		{"gate without a licence", "GET", "/pro/test/licensed", "", 403, []string{`"code":"license_required"`, `"status":403`}},
		{"feature gate without a licence", "GET", "/pro/test/domain-check", "", 403, []string{`"code":"license_required"`}},
		{"activate malformed JSON", "POST", "/pro/license/activate", `{"license_key":`, 400, []string{"bad_request"}},
		{"activate wrong type", "POST", "/pro/license/activate", `{"license_key":5}`, 400, []string{"bad_request", "license_key"}},
		{"activate empty", "POST", "/pro/license/activate", `{}`, 422, []string{"validation_error", `"license_key":"A licence key is required."`}},
		{"activate expired", "POST", "/pro/license/activate", body(e.key("https://shop.example.com", time.Now().AddDate(0, 0, -1))), 422, []string{"This licence expired at "}},
		{"activate other site", "POST", "/pro/license/activate", body(e.key("https://elsewhere.example", year)), 422, []string{"issued for https://elsewhere.example"}},
		{"activate without the feature", "POST", "/pro/license/activate", body(bare), 200, []string{`"active":true`, `"license_key":"********"`, `"features":[]`}},
		{"gate with a licence", "GET", "/pro/test/licensed", "", 200, []string{"ok"}},
		{"feature gate, feature missing", "GET", "/pro/test/domain-check", "", 403, []string{`"code":"rest_forbidden"`, "feature:tools.domain_check"}},
		{"activate with the feature", "POST", "/pro/license/activate", body(full), 200, []string{`"features":["feature:tools.domain_check"]`, `"site":"https://shop.example.com"`, `"expires_at":"`}},
		{"feature gate passes", "GET", "/pro/test/domain-check", "", 200, []string{"ok"}},
		{"refresh without a server", "POST", "/pro/license/refresh", "", 200, []string{`"active":true`, `"license_server":false`}},
		{"deactivate", "POST", "/pro/license/deactivate", "", 200, []string{`"active":false`, `"status":"inactive"`}},
		{"gate after deactivation", "GET", "/pro/test/licensed", "", 403, []string{"license_required"}},
		{"deactivate again", "POST", "/pro/license/deactivate", "", 200, []string{`"status":"inactive"`}},
	}, full, bare)
}

func TestSettingsRoutes(t *testing.T) {
	e := newEnv(t)
	e.run([]step{
		{"defaults", "GET", "/pro/settings", "", 200, []string{`"max_retries":3`, `"plugin_exclusions_enabled":false`, `"excluded_plugins":[]`, `"disabled_log_sources":[]`}},
		{"update", "PUT", "/pro/settings", `{"max_retries":5,"plugin_exclusions_enabled":true,"excluded_plugins":["woocommerce"],"disabled_log_sources":["sendmail","wpforms"]}`, 200,
			[]string{`"max_retries":5`, `"plugin_exclusions_enabled":true`, `"excluded_plugins":["woocommerce"]`, `"disabled_log_sources":["sendmail","wpforms"]`}},
		{"read back", "GET", "/pro/settings", "", 200, []string{`"max_retries":5`, `"excluded_plugins":["woocommerce"]`}},
		{"partial update keeps the rest", "PUT", "/pro/settings", `{"max_retries":0}`, 200, []string{`"max_retries":0`, `"plugin_exclusions_enabled":true`}},
		{"malformed JSON", "PUT", "/pro/settings", `{"max_retries":`, 400, []string{"bad_request"}},
		{"not an object", "PUT", "/pro/settings", `[1]`, 400, []string{"bad_request"}},
		{"out of range", "PUT", "/pro/settings", `{"max_retries":11}`, 422, []string{"validation_error", `"max_retries":"Must be between 0 and 10."`}},
		{"unknown key", "PUT", "/pro/settings", `{"log_emails":false}`, 422, []string{`"log_emails":"Unknown setting."`}},
		{"bad list", "PUT", "/pro/settings", `{"excluded_plugins":"woocommerce","disabled_log_sources":[1]}`, 422, []string{`"excluded_plugins":`, `"disabled_log_sources":`}},
		{"unchanged after refusals", "GET", "/pro/settings", "", 200, []string{`"max_retries":0`, `"disabled_log_sources":["sendmail","wpforms"]`}},
	})
}
