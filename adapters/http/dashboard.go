package http

import (
	"context"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/mailsvc/mailsvc/app/dashboard"
	"github.com/mailsvc/mailsvc/core"
)

// DashboardService is what the dashboard routes need (dashboard.Service).
type DashboardService interface {
	Stats(ctx context.Context, q dashboard.RangeQuery) (*dashboard.Stats, error)
	Chart(ctx context.Context, q dashboard.ChartQuery) (*dashboard.Chart, error)
	Activity(ctx context.Context, q dashboard.ActivityQuery) (*dashboard.Activity, error)
	Attention(ctx context.Context) (*dashboard.Attention, error)
	Onboarding(ctx context.Context) (*dashboard.OnboardingState, error)
	UpdateOnboarding(ctx context.Context, in dashboard.OnboardingInput) (*dashboard.OnboardingState, error)
	ApplyOnboarding(ctx context.Context, in dashboard.ApplyInput) (*dashboard.ApplyResult, error)
}

// onboardingBody is the JSON body of POST /dashboard/onboarding.
type onboardingBody struct {
	Step      *int64  `json:"step"`
	Driver    *string `json:"driver"`
	Dismissed *bool   `json:"dismissed"`
	Completed *bool   `json:"completed"`
}

// applyBody is the JSON body of POST /dashboard/onboarding/apply.
type applyBody struct {
	Name         *string        `json:"name"`
	Driver       *string        `json:"driver"`
	Settings     map[string]any `json:"settings"`
	ConnectionID *int64         `json:"connection_id"`
	TestEmail    *string        `json:"test_email"`
}

// dashboardRoutes registers the spec's Dashboard section.
func (s *Server) dashboardRoutes(api *mux.Router) {
	s.private(api, "GET", "/dashboard/stats", s.dashboardStats)
	s.private(api, "GET", "/dashboard/chart", s.dashboardChart)
	s.private(api, "GET", "/dashboard/activity", s.dashboardActivity)
	s.private(api, "GET", "/dashboard/attention", s.dashboardAttention)
	s.private(api, "GET", "/dashboard/onboarding", s.getOnboarding)
	s.private(api, "POST", "/dashboard/onboarding", s.updateOnboarding)
	s.private(api, "POST", "/dashboard/onboarding/apply", s.applyOnboarding)
}

// rangeQuery reads the range parameters: range, days, from, to.
func rangeQuery(r *http.Request) dashboard.RangeQuery {
	q := r.URL.Query()
	return dashboard.RangeQuery{Range: q.Get("range"), Days: q.Get("days"), From: q.Get("from"), To: q.Get("to")}
}

func (s *Server) dashboardStats(w http.ResponseWriter, r *http.Request) error {
	st, err := s.Dashboard.Stats(r.Context(), rangeQuery(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

func (s *Server) dashboardChart(w http.ResponseWriter, r *http.Request) error {
	c, err := s.Dashboard.Chart(r.Context(), dashboard.ChartQuery{RangeQuery: rangeQuery(r), Bucket: r.URL.Query().Get("bucket")})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

func (s *Server) dashboardActivity(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	return Respond(w, r, func(ctx context.Context) (*dashboard.Activity, error) {
		return s.Dashboard.Activity(ctx, dashboard.ActivityQuery{Limit: q.Get("limit"), Status: q.Get("status")})
	})
}

func (s *Server) dashboardAttention(w http.ResponseWriter, r *http.Request) error {
	return Respond(w, r, s.Dashboard.Attention)
}

func (s *Server) getOnboarding(w http.ResponseWriter, r *http.Request) error {
	return Respond(w, r, s.Dashboard.Onboarding)
}

func (s *Server) updateOnboarding(w http.ResponseWriter, r *http.Request) error {
	return RespondBody(s.decodeJSON, w, r, func(ctx context.Context, body onboardingBody) (*dashboard.OnboardingState, error) {
		return s.Dashboard.UpdateOnboarding(ctx, dashboard.OnboardingInput{
			Step: body.Step, Driver: body.Driver, Dismissed: body.Dismissed, Completed: body.Completed,
		})
	})
}

func (s *Server) applyOnboarding(w http.ResponseWriter, r *http.Request) error {
	return RespondBody(s.decodeJSON, w, r, func(ctx context.Context, body applyBody) (*dashboard.ApplyResult, error) {
		return s.Dashboard.ApplyOnboarding(ctx, dashboard.ApplyInput{
			Name: body.Name, Driver: body.Driver, Settings: body.Settings, ConnectionID: body.ConnectionID, TestEmail: body.TestEmail,
		})
	})
}

// SiteFormatReader reads the site's date and time format and time zone.
type SiteFormatReader interface {
	SiteFormat(ctx context.Context) (core.SiteFormat, error)
}

func (s *Server) siteFormat(w http.ResponseWriter, r *http.Request) error {
	return Respond(w, r, s.SiteFormat.SiteFormat)
}
