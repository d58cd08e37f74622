package http_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	api "github.com/mailsvc/mailsvc/adapters/http"
	"github.com/mailsvc/mailsvc/app/doctor"
)

// fakeDoctor answers a fixed report.
type fakeDoctor doctor.Report

func (f fakeDoctor) Diagnose(context.Context) doctor.Report { return doctor.Report(f) }

func TestToolsDoctor(t *testing.T) {
	failing := fakeDoctor{Healthy: false, Checks: []doctor.Result{
		{Name: "service", Title: "Service running", Critical: true, Verdict: doctor.Error, Message: "down", Fix: "start it"},
	}}
	tests := []struct {
		name       string
		doctor     api.DoctorService
		token      string
		wantStatus int
	}{
		{"a failing check is still a 200", failing, "admin", 200},
		{"anonymous", failing, "", 401},
		{"without the capability", failing, "editor", 403},
		{"not configured", nil, "admin", 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := newAPI()
			s.Doctor = tt.doctor
			ts := httptest.NewServer(s.Handler())
			defer ts.Close()
			r := do(t, ts, "GET", api.Namespace+"/tools/doctor", tt.token, nil)
			if r.Status != tt.wantStatus {
				t.Fatalf("status %d %s, want %d", r.Status, r.Body, tt.wantStatus)
			}
			if r.Status != 200 {
				return
			}
			var got doctor.Report
			if err := json.Unmarshal(r.Body, &got); err != nil || got.Healthy || len(got.Checks) != 1 || got.Checks[0].Fix != "start it" || got.Checks[0].Verdict != doctor.Error {
				t.Errorf("report %s (%v)", r.Body, err)
			}
		})
	}
}
