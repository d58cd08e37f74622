package pro

import (
	"context"
	"mime"
	"net/http"

	api "github.com/mailsvc/mailsvc/adapters/http"
	"github.com/mailsvc/mailsvc/app/pro/analytics"
)

// AnalyticsService is what the analytics routes need
// (app/pro/analytics.Service).
type AnalyticsService interface {
	Overview(ctx context.Context, q analytics.RangeQuery) (*analytics.Overview, error)
	Deliverability(ctx context.Context, q analytics.RangeQuery) (*analytics.Deliverability, error)
	Export(ctx context.Context, q analytics.RangeQuery) (*analytics.Export, error)
}

// registerAnalyticsRoutes registers the spec's "Pro: analytics" section
// when m.Analytics is set.
func (m *Module) registerAnalyticsRoutes(rt *api.Routes) {
	if m.Analytics == nil {
		return
	}
	rt.Private("GET", "/pro/analytics/overview", func(w http.ResponseWriter, r *http.Request) error {
		return respondRange(w, r, m.Analytics.Overview)
	})
	rt.Private("GET", "/pro/analytics/deliverability", func(w http.ResponseWriter, r *http.Request) error {
		return respondRange(w, r, m.Analytics.Deliverability)
	})
	rt.Private("GET", "/pro/analytics/export", m.exportLogs)
}

// respondRange answers what get returns for the request's range
// (analyticsRange), as api.Respond does.
func respondRange[T any](w http.ResponseWriter, r *http.Request, get func(context.Context, analytics.RangeQuery) (T, error)) error {
	return api.Respond(w, r, func(ctx context.Context) (T, error) { return get(ctx, analyticsRange(r)) })
}

// analyticsRange reads the range parameters: days, from, to.
func analyticsRange(r *http.Request) analytics.RangeQuery {
	q := r.URL.Query()
	return analytics.RangeQuery{Days: q.Get("days"), From: q.Get("from"), To: q.Get("to")}
}

// exportLogs streams the CSV export. A bad range answers 422 before any
// byte of the file; a failure once the file has started aborts the
// response, so the client sees a broken download, never a short file
// that looks complete.
func (m *Module) exportLogs(w http.ResponseWriter, r *http.Request) error {
	e, err := m.Analytics.Export(r.Context(), analyticsRange(r))
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/csv; charset=UTF-8")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": e.Filename}))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if err := e.WriteCSV(r.Context(), flushWriter{w: w, rc: http.NewResponseController(w)}); err != nil {
		panic(http.ErrAbortHandler)
	}
	return nil
}

// flushWriter writes to a response and sends what it holds on Flush.
type flushWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func (f flushWriter) Write(p []byte) (int, error) { return f.w.Write(p) }

// Flush sends the buffered part of the response to the client.
func (f flushWriter) Flush() { _ = f.rc.Flush() }
