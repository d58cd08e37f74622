package http

import (
	"context"
	"net/http"
	"time"

	"github.com/gorilla/mux"

	"github.com/mailsvc/mailsvc/app/report"
)

// ReportService is what the summary report routes need (report.Service).
type ReportService interface {
	Preview(ctx context.Context, q report.Query) (*report.Rendered, error)
	SendNow(ctx context.Context, q report.Query, recipients any) (*report.SendResult, error)
}

// reportBody is the JSON body of the summary report routes; recipients
// (send only) is a list of addresses or one comma-separated string,
// validated by the service.
type reportBody struct {
	Period     string `json:"period"`
	From       string `json:"from"`
	To         string `json:"to"`
	Recipients any    `json:"recipients"`
}

// previewAnswer is POST /reports/summary/preview's answer.
type previewAnswer struct {
	Subject string    `json:"subject"`
	From    time.Time `json:"from"`
	To      time.Time `json:"to"`
	HTML    string    `json:"html"`
	Text    string    `json:"text"`
}

// reportRoutes registers the summary report routes.
func (s *Server) reportRoutes(api *mux.Router) {
	s.private(api, "POST", "/reports/summary/preview", s.previewReport)
	s.private(api, "POST", "/reports/summary/send", s.sendReport)
}

func (s *Server) previewReport(w http.ResponseWriter, r *http.Request) error {
	var body reportBody
	if err := s.decodeJSON(w, r, &body); err != nil {
		return err
	}
	out, err := s.Reports.Preview(r.Context(), report.Query{Period: body.Period, From: body.From, To: body.To})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, previewAnswer{Subject: out.Subject, From: out.Report.Period.From, To: out.Report.Period.To, HTML: out.HTML, Text: out.Text})
	return nil
}

func (s *Server) sendReport(w http.ResponseWriter, r *http.Request) error {
	var body reportBody
	if err := s.decodeJSON(w, r, &body); err != nil {
		return err
	}
	res, err := s.Reports.SendNow(r.Context(), report.Query{Period: body.Period, From: body.From, To: body.To}, body.Recipients)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}
