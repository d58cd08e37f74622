package http_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	api "github.com/mailsvc/mailsvc/adapters/http"
)

// fakePlugins returns list, or err when set.
type fakePlugins struct {
	list []api.Plugin
	err  error
}

func (f fakePlugins) ActivePlugins(context.Context) ([]api.Plugin, error) { return f.list, f.err }

func TestToolsPlugins(t *testing.T) {
	two := []api.Plugin{
		{File: "akismet/akismet.php", Slug: "akismet", Name: "Akismet Anti-spam", Version: "5.3.1"},
		{File: "hello.php", Slug: "hello"},
	}
	tests := []struct {
		name       string
		plugins    api.PluginService
		token      string
		wantStatus int
		want       []api.Plugin
		wantCode   string
	}{
		{name: "administrator", plugins: fakePlugins{list: two}, token: "admin", wantStatus: 200, want: two},
		{name: "none is an empty list", plugins: fakePlugins{}, token: "admin", wantStatus: 200, want: []api.Plugin{}},
		{name: "anonymous", plugins: fakePlugins{list: two}, wantStatus: 401, wantCode: "rest_not_logged_in"},
		{name: "without the capability", plugins: fakePlugins{list: two}, token: "editor", wantStatus: 403, wantCode: "rest_forbidden"},
		{name: "database error", plugins: fakePlugins{err: errors.New("dial tcp 127.0.0.1:3306: connection refused")}, token: "admin", wantStatus: 500, wantCode: "internal_error"},
		{name: "not configured", plugins: nil, token: "admin", wantStatus: 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := newAPI()
			s.Plugins = tt.plugins
			ts := httptest.NewServer(s.Handler())
			defer ts.Close()
			r := do(t, ts, "GET", api.Namespace+"/tools/plugins", tt.token, nil)
			if r.Status != tt.wantStatus {
				t.Fatalf("status %d %s, want %d", r.Status, r.Body, tt.wantStatus)
			}
			if tt.wantCode != "" {
				if code, _, _ := r.errorCode(t); code != tt.wantCode {
					t.Errorf("code %q, want %q", code, tt.wantCode)
				}
				if strings.Contains(string(r.Body), "3306") {
					t.Errorf("internal error details leaked: %s", r.Body)
				}
			}
			if tt.want != nil {
				var got []api.Plugin
				r.json(t, &got)
				if !reflect.DeepEqual(got, tt.want) {
					t.Errorf("got %+v, want %+v", got, tt.want)
				}
			}
		})
	}
}
