package pro_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestOneClickRoutes(t *testing.T) {
	e := newToolsEnv(t)
	year := time.Now().AddDate(1, 0, 0)
	bare, full := e.key("https://shop.example.com", year), e.key("https://shop.example.com", year, "connections.oneclick.save")
	activate := func(k string) {
		if code, body := e.call("POST", "/pro/license/activate", `{"license_key":"`+k+`"}`); code != 200 {
			t.Fatalf("activate: %d %s", code, body)
		}
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	e.run([]step{
		{"authorize without a licence", "GET", "/pro/oauth/google/one-click/authorize", "", 403, []string{"license_required"}},
	})
	activate(bare)
	e.run([]step{
		{"authorize without the feature", "GET", "/pro/oauth/microsoft/one-click/authorize", "", 403, []string{"rest_forbidden", "feature:connections.oneclick.save"}},
		{"unknown provider", "GET", "/pro/oauth/zoho/one-click/authorize", "", 404, []string{"rest_no_route"}},
	})
	activate(full)
	e.run([]step{{"bad connection id", "GET", "/pro/oauth/google/one-click/authorize?connection_id=x", "", 422, []string{`"connection_id":`}}})
	if len(e.oneclick.authorized) != 0 {
		t.Fatalf("refused authorizations reached the service: %+v", e.oneclick.authorized)
	}
	for _, p := range []string{"google", "microsoft"} {
		req, _ := http.NewRequest("GET", e.url+"/pro/oauth/"+p+"/one-click/authorize?connection_id=4", nil)
		req.Header.Set("Authorization", "Bearer admin")
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 302 || resp.Header.Get("Location") != "https://consent.example/?p="+p {
			t.Fatalf("%s authorize: %d to %q", p, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	if got := e.oneclick.authorized; len(got) != 2 || got[0].ConnectionID != "4" || got[0].User == nil || got[1].Provider != "microsoft" {
		t.Fatalf("authorizations %+v", got)
	}
	// The callbacks are public: GET with a query, POST with a form.
	resp, err := noFollow.Get(e.url + "/pro/oauth/google/one-click/callback?code=c1&state=s1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 302 || !strings.Contains(resp.Header.Get("Location"), "oauth=success") {
		t.Fatalf("GET callback: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, err = noFollow.PostForm(e.url+"/pro/oauth/microsoft/one-click/callback", url.Values{"code": {"c2"}, "state": {"s2"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 302 {
		t.Fatalf("POST callback: %d", resp.StatusCode)
	}
	if got := e.oneclick.callbacks; len(got) != 2 || got[0].Code != "c1" || got[0].State != "s1" || got[1].Code != "c2" || got[1].State != "s2" || got[0].UserID != 0 {
		t.Fatalf("callbacks %+v", got)
	}
}
