// Package thirdparty proves that a driver defined outside drivers/ extends
// the binary by a blank import in a custom main: the custom build lists
// it, validates its settings and delivers through it.
package thirdparty

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mailsvc/mailsvc/test/servicetest"
)

func TestMain(m *testing.M) {
	servicetest.MainPackage(m, "github.com/mailsvc/mailsvc/test/thirdparty/acmemailsvc")
}

func TestCustomBuildDeliversThroughThirdPartyDriver(t *testing.T) {
	var mu sync.Mutex
	var got []map[string]any
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer acme-key" {
			http.Error(w, "bad key", http.StatusUnauthorized)
			return
		}
		var m map[string]any
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &m)
		mu.Lock()
		got = append(got, m)
		mu.Unlock()
		fmt.Fprint(w, "acme-42")
	}))
	defer api.Close()

	dir := t.TempDir()
	svc := servicetest.Start(t, dir)
	admin := servicetest.Basic("admin", svc.AdminPassword())

	r := servicetest.Call(t, "GET", svc.Base+"/transports", "", admin)
	for _, slug := range []string{`"acme"`, `"smtp"`, `"ses"`} {
		if !strings.Contains(string(r.Body), slug) {
			t.Errorf("GET /transports lacks %s", slug)
		}
	}
	if r := servicetest.Call(t, "POST", svc.Base+"/connections", `{"name":"acme","driver":"acme","settings":{"endpoint":"not a url"}}`, admin); r.Status != 422 ||
		!strings.Contains(string(r.Body), "endpoint") || !strings.Contains(string(r.Body), "api_key") {
		t.Errorf("the driver's schema is not enforced: %d %s", r.Status, r.Body)
	}
	r = servicetest.Call(t, "POST", svc.Base+"/connections", fmt.Sprintf(`{"name":"acme","driver":"acme","settings":{"endpoint":%q,"api_key":"acme-key"}}`, api.URL), admin)
	var conn struct {
		ID       int64
		Settings map[string]any
	}
	r.JSON(t, &conn)
	if r.Status != 201 || conn.Settings["api_key"] != "********" {
		t.Fatalf("create acme connection: %d %s", r.Status, r.Body)
	}
	if r := servicetest.Call(t, "PUT", svc.Base+"/settings", `{"from_email":"site@example.com"}`, admin); r.Status != 200 {
		t.Fatalf("PUT /settings: %d %s", r.Status, r.Body)
	}
	r = servicetest.Call(t, "POST", svc.Base+"/test-email", fmt.Sprintf(`{"to":"someone@example.com","connection_id":%d}`, conn.ID), admin)
	var res struct {
		Success           bool
		ProviderMessageID string `json:"provider_message_id"`
	}
	r.JSON(t, &res)
	if !res.Success || res.ProviderMessageID != "acme-42" {
		t.Fatalf("test email through acme: %d %s", r.Status, r.Body)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || fmt.Sprint(got[0]["to"]) == "" || !strings.Contains(fmt.Sprint(got[0]["to"]), "someone@example.com") {
		t.Fatalf("acme API received %v", got)
	}
}
