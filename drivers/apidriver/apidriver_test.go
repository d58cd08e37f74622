package apidriver_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
)

func TestSummary(t *testing.T) {
	long := strings.Repeat("x", 600)
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"trimmed", "  {\"errors\":[]}\n", `{"errors":[]}`},
		{"empty", "", ""},
		{"exactly the limit", strings.Repeat("y", 500), strings.Repeat("y", 500)},
		{"cut", long, strings.Repeat("x", 500) + "..."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := apidriver.Summary(tc.in); got != tc.want {
				t.Errorf("Summary(string) = %q, want %q", got, tc.want)
			}
			if got := apidriver.Summary([]byte(tc.in)); got != tc.want {
				t.Errorf("Summary([]byte) = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSender(t *testing.T) {
	from := core.Address{Name: "Shop", Email: "shop@example.com"}
	tests := []struct {
		name     string
		settings core.Settings
		want     core.Address
	}{
		{"no override", core.Settings{}, from},
		{"email only", core.Settings{"from_email": "noreply@example.net"}, core.Address{Name: "Shop", Email: "noreply@example.net"}},
		{"name only", core.Settings{"from_name": "Net"}, core.Address{Name: "Net", Email: "shop@example.com"}},
		{"both", core.Settings{"from_email": "noreply@example.net", "from_name": "Net"}, core.Address{Name: "Net", Email: "noreply@example.net"}},
		{"empty strings", core.Settings{"from_email": "", "from_name": ""}, from},
		{"force_from on", core.Settings{"from_email": "noreply@example.net", "force_from": true}, core.Address{Name: "Shop", Email: "noreply@example.net"}},
		{"force_from off keeps a sender", core.Settings{"from_email": "noreply@example.net", "from_name": "Net", "force_from": false}, from},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := apidriver.SenderOf(tc.settings).Apply(from); got != tc.want {
				t.Errorf("Apply = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestBaseURL(t *testing.T) {
	const def = "https://api.example.com"
	tests := []struct {
		in   any
		want string
	}{
		{nil, def},
		{"", def},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"http://127.0.0.1:8080//", "http://127.0.0.1:8080"},
		{"https://proxy.example.com/v3/", "https://proxy.example.com/v3"},
	}
	for _, tc := range tests {
		s := core.Settings{}
		if tc.in != nil {
			s["base_url"] = tc.in
		}
		if got := apidriver.BaseURL(s, def); got != tc.want {
			t.Errorf("BaseURL(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestHTTPClient(t *testing.T) {
	own := &http.Client{Transport: &http.Transport{}}
	timed := &http.Client{Timeout: time.Minute}
	tests := []struct {
		name        string
		host        *http.Client
		wantSame    bool // the host's own client
		wantShared  bool // a client over SharedTransport
		wantTimeout time.Duration
	}{
		{name: "host client with a transport: its transport", host: own, wantSame: true},
		{name: "no host client: the shared transport", host: nil, wantShared: true},
		{name: "http.DefaultClient: the shared transport", host: http.DefaultClient, wantShared: true},
		{name: "host client without transport keeps its timeout", host: timed, wantShared: true, wantTimeout: time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := apidriver.HTTPClient(core.DriverEnv{HTTPClient: tc.host})
			watch, ok := got.Transport.(apidriver.UnansweredTransport)
			if !ok {
				t.Fatalf("transport %T, want one that marks unanswered sends", got.Transport)
			}
			if tc.wantSame && (watch.Base != tc.host.Transport || got.Jar != tc.host.Jar || got.CheckRedirect != nil) {
				t.Fatalf("HTTPClient did not send through the host's transport")
			}
			if tc.wantShared && watch.Base != apidriver.SharedTransport {
				t.Fatalf("transport %T, want the shared transport", watch.Base)
			}
			if got.Timeout != tc.wantTimeout {
				t.Errorf("timeout %s, want %s", got.Timeout, tc.wantTimeout)
			}
		})
	}
	if tr := apidriver.SharedTransport; tr.MaxIdleConnsPerHost < core.MaxConnectionConcurrency || !tr.ForceAttemptHTTP2 || tr.DisableKeepAlives {
		t.Errorf("shared transport: %d idle per host, HTTP/2 %v, keep-alives off %v", tr.MaxIdleConnsPerHost, tr.ForceAttemptHTTP2, tr.DisableKeepAlives)
	}
}

func TestFields(t *testing.T) {
	tests := []struct {
		field     core.Field
		wantKey   string
		wantType  string
		wantHelp  string
		wantLabel string
	}{
		{apidriver.FromEmailField("Sender address; must be verified."), "from_email", core.FieldEmail,
			"Sender address; must be verified. Empty: the message's own sender.", "From email"},
		{apidriver.APIKeyField("Server API token", "The server's token."), "api_key", core.FieldPassword,
			"The server's token.", "Server API token"},
		{apidriver.FromNameField(), "from_name", core.FieldString,
			"Sender display name. Empty: the message's own sender name.", "From name"},
		{apidriver.BaseURLField("Leave empty for the real API."), "base_url", core.FieldURL,
			"Leave empty for the real API.", "API base URL"},
	}
	for _, tc := range tests {
		f := tc.field
		wantRequired := tc.wantKey == "api_key"
		if f.Key != tc.wantKey || string(f.Type) != string(tc.wantType) || f.Help != tc.wantHelp || f.Label != tc.wantLabel || f.Required != wantRequired {
			t.Errorf("field = %+v, want key %s type %s label %q help %q, required %v", f, tc.wantKey, tc.wantType, tc.wantLabel, tc.wantHelp, wantRequired)
		}
	}
}

// TestUnansweredTransport: a send written whole with no answer is
// uncertain (the provider may have taken it); a failure before the
// request left, a read, and any answer are not.
func TestUnansweredTransport(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	mux := http.NewServeMux()
	mux.HandleFunc("/drop", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	closed := httptest.NewServer(mux)
	closedURL := closed.URL
	closed.Close()

	tests := []struct {
		name          string
		method, url   string
		wantErr       bool
		wantUncertain bool
	}{
		{name: "sent, then the connection closed", method: http.MethodPost, url: srv.URL + "/drop", wantErr: true, wantUncertain: true},
		{name: "sent, then no answer before the timeout", method: http.MethodPost, url: srv.URL + "/hang", wantErr: true, wantUncertain: true},
		{name: "connection refused: never sent", method: http.MethodPost, url: closedURL + "/drop", wantErr: true},
		{name: "a read is never uncertain", method: http.MethodGet, url: srv.URL + "/drop", wantErr: true},
		{name: "an answer is not an error", method: http.MethodPost, url: srv.URL + "/fail"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := apidriver.HTTPClient(core.DriverEnv{HTTPClient: &http.Client{Timeout: 300 * time.Millisecond}})
			req, err := http.NewRequest(tc.method, tc.url, strings.NewReader(`{"to":"a@example.com"}`))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Do(req)
			if resp != nil {
				_ = resp.Body.Close()
			}
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want an error: %v", err, tc.wantErr)
			}
			if got := core.IsUncertain(err); got != tc.wantUncertain {
				t.Errorf("uncertain = %v, want %v: %v", got, tc.wantUncertain, err)
			}
			if tc.wantUncertain && !core.IsTemporary(err) {
				t.Errorf("an uncertain failure must also be temporary: %v", err)
			}
		})
	}
}
