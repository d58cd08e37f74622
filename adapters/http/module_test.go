package http_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	api "github.com/mailsvc/mailsvc/adapters/http"
	"github.com/mailsvc/mailsvc/core"
)

// echoModule registers one private and one public route.
type echoModule struct{}

func (echoModule) RegisterRoutes(rt *api.Routes) {
	rt.Private("POST", "/ext/echo", func(w http.ResponseWriter, r *http.Request) error {
		var body struct {
			Say string `json:"say"`
		}
		if err := rt.DecodeJSON(w, r, &body); err != nil {
			return err
		}
		if body.Say == "" {
			return core.InvalidField("say", "Required.")
		}
		api.WriteJSON(w, http.StatusOK, map[string]string{"said": body.Say, "user": api.UserFrom(r.Context()).Login})
		return nil
	})
	rt.Public("GET", "/ext/ping/{id}", func(w http.ResponseWriter, r *http.Request) error {
		api.WriteJSON(w, http.StatusOK, "pong")
		return nil
	})
}

func TestModuleRoutes(t *testing.T) {
	s, _ := newAPI()
	s.Modules = []api.Module{echoModule{}}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	if got := s.ModuleRoutes(); len(got) != 2 || got[0] != (api.Route{Method: "POST", Path: "/ext/echo"}) || got[1].Path != "/ext/ping/{id}" {
		t.Fatalf("ModuleRoutes = %v", got)
	}
	tests := []struct {
		name, method, path, auth, body string
		status                         int
		contains                       string
	}{
		{"private with admin", "POST", "/ext/echo", "Bearer admin", `{"say":"hi"}`, 200, `"said":"hi","user":"admin"`},
		{"private anonymous", "POST", "/ext/echo", "", `{"say":"hi"}`, 401, "rest_not_logged_in"},
		{"private without the capability", "POST", "/ext/echo", "Bearer editor", `{"say":"hi"}`, 403, "rest_forbidden"},
		{"malformed body", "POST", "/ext/echo", "Bearer admin", `{"say":`, 400, "bad_request"},
		{"validation", "POST", "/ext/echo", "Bearer admin", `{}`, 422, `"say":"Required."`},
		{"public anonymous", "GET", "/ext/ping/7", "", "", 200, "pong"},
		{"wrong method", "GET", "/ext/echo", "Bearer admin", "", 404, "No route was found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, ts.URL+api.Namespace+tt.path, strings.NewReader(tt.body))
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status || !strings.Contains(string(b), tt.contains) {
				t.Fatalf("%d %s, want %d containing %s", resp.StatusCode, b, tt.status, tt.contains)
			}
		})
	}

	// Without the module its paths answer exactly as unknown routes do.
	bare, _ := newAPI()
	ts2 := httptest.NewServer(bare.Handler())
	defer ts2.Close()
	get := func(path string) (int, string) {
		req, _ := http.NewRequest("POST", ts2.URL+api.Namespace+path, strings.NewReader(`{"say":"hi"}`))
		req.Header.Set("Authorization", "Bearer admin")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := get("/ext/echo")
	wantCode, wantBody := get("/no/such/route")
	if code != 404 || code != wantCode || body != wantBody {
		t.Fatalf("module absent: %d %s; unknown route: %d %s", code, body, wantCode, wantBody)
	}
	if len(bare.ModuleRoutes()) != 0 {
		t.Fatalf("ModuleRoutes without modules = %v", bare.ModuleRoutes())
	}
}
