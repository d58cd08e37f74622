package http_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	api "github.com/mailsvc/mailsvc/adapters/http"
)

// readiness is a ReadinessChecker answering err.
type readiness struct{ err error }

func (r readiness) Ready(context.Context) error { return r.err }

// metricsBody is what the stand-in metrics handler serves.
const metricsBody = "mailsvc_up 1\n"

func probeServer(token string, ready error) http.Handler {
	s, _ := newAPI()
	s.Probes = &api.Probes{
		Metrics: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte(metricsBody))
		}),
		MetricsToken: token,
		Ready:        readiness{ready},
		Health:       true,
	}
	return s.Handler()
}

func TestMetricsAccess(t *testing.T) {
	tests := []struct {
		name   string
		token  string
		remote string
		header map[string]string
		want   int
	}{
		{"loopback without token", "", "127.0.0.1:4000", nil, http.StatusOK},
		{"IPv6 loopback without token", "", "[::1]:4000", nil, http.StatusOK},
		{"remote without token configured", "", "192.0.2.7:4000", nil, http.StatusForbidden},
		{"loopback proxy forwarding a remote client", "", "127.0.0.1:4000", map[string]string{"X-Forwarded-For": "192.0.2.7"}, http.StatusForbidden},
		{"loopback proxy with Forwarded", "", "127.0.0.1:4000", map[string]string{"Forwarded": "for=192.0.2.7"}, http.StatusForbidden},
		{"token: remote with the right bearer", "s3cret-metrics", "192.0.2.7:4000", map[string]string{"Authorization": "Bearer s3cret-metrics"}, http.StatusOK},
		{"token: remote with a wrong bearer", "s3cret-metrics", "192.0.2.7:4000", map[string]string{"Authorization": "Bearer nope"}, http.StatusUnauthorized},
		{"token: loopback without bearer", "s3cret-metrics", "127.0.0.1:4000", nil, http.StatusUnauthorized},
		{"token: basic instead of bearer", "s3cret-metrics", "127.0.0.1:4000", map[string]string{"Authorization": "Basic czNjcmV0LW1ldHJpY3M="}, http.StatusUnauthorized},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			req.RemoteAddr = tc.remote
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			probeServer(tc.token, nil).ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Fatalf("status = %d, want %d (%s)", rec.Code, tc.want, rec.Body)
			}
			gotMetrics := rec.Body.String() == metricsBody
			if gotMetrics != (tc.want == http.StatusOK) {
				t.Fatalf("body = %q; metrics served = %v, want %v", rec.Body, gotMetrics, tc.want == http.StatusOK)
			}
			if tc.token != "" && strings.Contains(rec.Body.String(), tc.token) {
				t.Fatalf("the token appears in the answer: %q", rec.Body)
			}
		})
	}
}

func TestHealthAndReadiness(t *testing.T) {
	tests := []struct {
		name     string
		path     string
		ready    error
		want     int
		wantBody string
	}{
		{"healthz", "/healthz", nil, http.StatusOK, "ok"},
		{"healthz while the database is down", "/healthz", errors.New("database unreachable"), http.StatusOK, "ok"},
		{"readyz ready", "/readyz", nil, http.StatusOK, "ok"},
		{"readyz database down", "/readyz", errors.New("database unreachable: dial tcp"), http.StatusServiceUnavailable, "not ready"},
		{"probes are not under the REST namespace", api.Namespace + "/healthz", nil, http.StatusNotFound, "rest_no_route"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, tc.path, nil)
			req.RemoteAddr = "192.0.2.7:4000" // probes need no loopback
			rec := httptest.NewRecorder()
			probeServer("", tc.ready).ServeHTTP(rec, req)
			if rec.Code != tc.want || !strings.Contains(rec.Body.String(), tc.wantBody) {
				t.Fatalf("%s = %d %q, want %d containing %q", tc.path, rec.Code, rec.Body, tc.want, tc.wantBody)
			}
		})
	}
}

// TestReadinessDetail checks who reads why /readyz fails: the database's
// error (here naming an internal host) reaches a caller with the metrics
// token or one straight from loopback; any other caller gets 503 "not
// ready" and nothing more.
func TestReadinessDetail(t *testing.T) {
	const detail = "database unreachable: dial tcp db.internal.example:3306: connect: connection refused"
	const token = "s3cret-metrics"
	tests := []struct {
		name       string
		token      string
		remote     string
		header     map[string]string
		wantDetail bool
	}{
		{"remote, no token configured", "", "192.0.2.7:4000", nil, false},
		{"remote IPv6", "", "[2001:db8::7]:4000", nil, false},
		{"remote, token configured, none sent", token, "192.0.2.7:4000", nil, false},
		{"remote with a wrong bearer", token, "192.0.2.7:4000", map[string]string{"Authorization": "Bearer nope"}, false},
		{"remote with the token as Basic", token, "192.0.2.7:4000", map[string]string{"Authorization": "Basic " + token}, false},
		{"remote sending a bearer when no token is configured", "", "192.0.2.7:4000", map[string]string{"Authorization": "Bearer "}, false},
		{"remote claiming loopback in X-Forwarded-For", "", "192.0.2.7:4000", map[string]string{"X-Forwarded-For": "127.0.0.1"}, false},
		{"loopback proxy forwarding a remote client", "", "127.0.0.1:4000", map[string]string{"X-Forwarded-For": "192.0.2.7"}, false},
		{"loopback proxy with X-Real-IP", "", "127.0.0.1:4000", map[string]string{"X-Real-IP": "192.0.2.7"}, false},
		{"loopback proxy with Forwarded", token, "127.0.0.1:4000", map[string]string{"Forwarded": "for=192.0.2.7"}, false},
		{"remote with the metrics token", token, "192.0.2.7:4000", map[string]string{"Authorization": "Bearer " + token}, true},
		{"proxied caller with the metrics token", token, "127.0.0.1:4000", map[string]string{"Authorization": "Bearer " + token, "X-Forwarded-For": "192.0.2.7"}, true},
		{"loopback", "", "127.0.0.1:4000", nil, true},
		{"IPv6 loopback", "", "[::1]:4000", nil, true},
		{"loopback, token configured, none sent", token, "127.0.0.1:4000", nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/readyz", nil)
			req.RemoteAddr = tc.remote
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			probeServer(tc.token, errors.New(detail)).ServeHTTP(rec, req)
			if rec.Code != http.StatusServiceUnavailable {
				t.Fatalf("status = %d, want 503 (%s)", rec.Code, rec.Body)
			}
			want := "not ready\n"
			if tc.wantDetail {
				want = "not ready: " + detail + "\n"
			}
			if got := rec.Body.String(); got != want {
				t.Fatalf("body = %q, want %q", got, want)
			}
		})
	}
}

func TestProbesOffWithoutConfig(t *testing.T) {
	s, _ := newAPI()
	h := s.Handler()
	for _, p := range []string{"/metrics", "/healthz", "/readyz"} {
		req := httptest.NewRequest(http.MethodGet, p, nil)
		req.RemoteAddr = "127.0.0.1:4000"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusNotFound {
			t.Fatalf("%s without Probes = %d, want 404", p, rec.Code)
		}
	}
}
