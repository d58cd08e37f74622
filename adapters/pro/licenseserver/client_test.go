package licenseserver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/pro/licenseserver"
	"github.com/mailsvc/mailsvc/app/pro"
	"github.com/mailsvc/mailsvc/test/fakes/licenseserverfake"
)

func TestClient(t *testing.T) {
	fake := licenseserverfake.New()
	defer fake.Close()
	fake.SetStatus("lic_gone", "revoked", "Refunded.")
	c := &licenseserver.Client{BaseURL: fake.URL + "/"}
	ctx := context.Background()
	tests := []struct {
		name, action, id string
		want             pro.ServerVerdict
	}{
		{"activate", pro.ServerActivate, "lic_ok", pro.ServerVerdict{Status: "active"}},
		{"check revoked", pro.ServerCheck, "lic_gone", pro.ServerVerdict{Status: "revoked", Message: "Refunded."}},
		{"deactivate", pro.ServerDeactivate, "lic_ok", pro.ServerVerdict{Status: "active"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := c.Call(ctx, tt.action, pro.ServerRequest{LicenseID: tt.id, Site: "https://shop.example.com"})
			if err != nil || v != tt.want {
				t.Fatalf("Call = %+v, %v; want %+v", v, err, tt.want)
			}
		})
	}
	calls := fake.Calls()
	if len(calls) != 3 || calls[1] != (licenseserverfake.Call{Action: "check", LicenseID: "lic_gone", Site: "https://shop.example.com"}) {
		t.Fatalf("calls = %+v", calls)
	}

	fake.SetFailing(true)
	if _, err := c.Call(ctx, pro.ServerCheck, pro.ServerRequest{LicenseID: "lic_ok"}); err == nil {
		t.Error("a 503 was taken as a verdict")
	}
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"ok":true}`)) }))
	defer bad.Close()
	if _, err := (&licenseserver.Client{BaseURL: bad.URL}).Call(ctx, pro.ServerCheck, pro.ServerRequest{LicenseID: "x"}); err == nil {
		t.Error("an answer without a status was taken as a verdict")
	}
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	if _, err := (&licenseserver.Client{BaseURL: down.URL}).Call(ctx, pro.ServerCheck, pro.ServerRequest{LicenseID: "x"}); err == nil {
		t.Error("an unreachable server gave no error")
	}
}
