package http

import (
	"context"
	"crypto/subtle"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/mux"
)

// ReadinessChecker tells whether the service can do its work: it returns
// nil when the database answers and its migrations are applied, else an
// error whose message says why (it is shown only to a prober that may read
// it: see Probes).
type ReadinessChecker interface {
	Ready(ctx context.Context) error
}

// Probes serves the operational endpoints on the server root, outside the
// REST namespace: GET /metrics (Prometheus), GET /healthz (the process is
// up) and GET /readyz (ReadinessChecker). Nil fields leave their route
// unregistered (404).
//
// /metrics needs "Authorization: Bearer <MetricsToken>" when MetricsToken
// is set; without a token it answers only requests from a loopback
// address that carry no forwarding header (a reverse proxy on the same
// host forwards the outside world), and 403 to the rest.
//
// /readyz is public, but its failure names the reason (the database's
// error can name an internal host) only to a caller /metrics would serve:
// one with the metrics bearer token, or one straight from loopback. Any
// other caller gets 503 "not ready" and nothing more.
type Probes struct {
	Metrics      http.Handler
	MetricsToken string
	Ready        ReadinessChecker
	// Health, when true, serves /healthz.
	Health bool
}

// readyTimeout bounds one readiness check.
const readyTimeout = 5 * time.Second

// register adds the probe routes to the root router r.
func (p *Probes) register(r *mux.Router) {
	if p.Metrics != nil {
		r.Handle("/metrics", p.metricsAccess(p.Metrics)).Methods(http.MethodGet, http.MethodHead)
	}
	if p.Health {
		r.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
			writeProbe(w, http.StatusOK, "ok")
		}).Methods(http.MethodGet, http.MethodHead)
	}
	if p.Ready != nil {
		r.HandleFunc("/readyz", p.readyz).Methods(http.MethodGet, http.MethodHead)
	}
}

func (p *Probes) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	if err := p.Ready.Ready(ctx); err != nil {
		reason := "not ready"
		if p.hasMetricsToken(r) || fromLoopback(r) {
			reason += ": " + err.Error()
		}
		writeProbe(w, http.StatusServiceUnavailable, reason)
		return
	}
	writeProbe(w, http.StatusOK, "ok")
}

// metricsAccess applies /metrics' access rule.
func (p *Probes) metricsAccess(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.MetricsToken != "" {
			if !p.hasMetricsToken(r) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="mailsvc metrics"`)
				writeProbe(w, http.StatusUnauthorized, "a valid bearer token is required")
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		if !fromLoopback(r) {
			writeProbe(w, http.StatusForbidden, "metrics are served to loopback clients only; set MAILSVC_METRICS_TOKEN to scrape from elsewhere")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// hasMetricsToken reports whether a metrics token is set and r carries it
// as "Authorization: Bearer <token>".
func (p *Probes) hasMetricsToken(r *http.Request) bool {
	if p.MetricsToken == "" {
		return false
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(p.MetricsToken)) == 1
}

// fromLoopback reports whether r came straight from a loopback address:
// a request that a proxy forwarded (Forwarded, X-Forwarded-For or
// X-Real-IP) is not local even when the proxy is.
func fromLoopback(r *http.Request) bool {
	for _, h := range []string{"Forwarded", "X-Forwarded-For", "X-Real-Ip"} {
		if r.Header.Get(h) != "" {
			return false
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// writeProbe answers a probe in plain text.
func writeProbe(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(text + "\n"))
}
