package webhooksink

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestSinkRecordsFailsAndAwaits(t *testing.T) {
	s := New()
	defer s.Close()
	s.FailNext(1, http.StatusServiceUnavailable)
	tests := []struct {
		path       string
		wantStatus int
	}{
		{"/hook/a?x=1", http.StatusServiceUnavailable},
		{"/hook/b", http.StatusOK},
	}
	go func() {
		for _, tt := range tests {
			resp, err := http.Post(s.URL+tt.path, "application/json", strings.NewReader(`{"n":1}`))
			if err == nil {
				resp.Body.Close()
			}
		}
	}()
	got, err := s.Await(2, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range tests {
		if got[i].Status != tt.wantStatus || !strings.HasPrefix(tt.path, got[i].Path) || string(got[i].Body) != `{"n":1}` {
			t.Errorf("request %d = %+v, want path %s status %d", i, got[i], tt.path, tt.wantStatus)
		}
		if got[i].Header.Get("Content-Type") != "application/json" {
			t.Errorf("request %d content type %q", i, got[i].Header.Get("Content-Type"))
		}
	}
	if got[0].RawQuery != "x=1" {
		t.Errorf("query = %q", got[0].RawQuery)
	}
	if _, err := s.Await(3, 50*time.Millisecond); err == nil {
		t.Error("Await(3) succeeded with 2 requests")
	}
}
