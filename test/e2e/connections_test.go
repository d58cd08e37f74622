package e2e

import (
	"github.com/mailsvc/mailsvc/test/servicetest"

	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// adminOf starts a standalone service in dir and returns it with the first
// administrator's credentials.
func adminOf(t *testing.T, dir string, extra ...string) (*servicetest.Service, string) {
	t.Helper()
	svc := servicetest.Start(t, dir, extra...)
	pw := svc.MustAdminPassword(t)
	return svc, pw
}

func TestConnectionsConstantsAndEncryption(t *testing.T) {
	dir := t.TempDir()
	env := []string{"MAIL_SVC_ENCRYPTION_KEY=first-key", "MAILSVC_SMTP_USERNAME=pinned-user", "MAIL_SVC_PASSWORD=legacy-alias-pass"}
	svc, pw := adminOf(t, dir, env...)
	admin := basic("admin", pw)

	r := call(t, "GET", svc.Base+"/transports/smtp", "", admin)
	var tr struct {
		Driver string
		Fields []struct {
			Key, Constant string
			Sensitive     bool
		}
		Presets []json.RawMessage
	}
	if err := json.Unmarshal(r.Body, &tr); err != nil || r.Status != 200 {
		t.Fatalf("GET /transports/smtp: %d %s", r.Status, r.Body)
	}
	keys := map[string]string{}
	for _, f := range tr.Fields {
		keys[f.Key] = f.Constant
	}
	for _, k := range []string{"host", "port", "encryption", "username", "password", "from_email", "from_name"} {
		if keys[k] != "MAILSVC_SMTP_"+strings.ToUpper(k) {
			t.Errorf("smtp field %s: constant %q", k, keys[k])
		}
	}
	if len(tr.Presets) == 0 {
		t.Errorf("smtp has no presets")
	}
	r = call(t, "GET", svc.Base+"/transports", "", admin)
	var transports []struct {
		Driver string `json:"driver"`
	}
	if err := json.Unmarshal(r.Body, &transports); err != nil {
		t.Fatalf("GET /transports: %v: %s", err, r.Body)
	}
	served := map[string]bool{}
	for _, tr := range transports {
		served[tr.Driver] = true
	}
	builtIn := []string{"smtp", "ses", "sendgrid", "mailgun", "postmark", "outlook", "gmail", "zoho",
		"brevo", "sparkpost", "mailjet", "resend", "smtp2go", "mailersend",
		"elasticemail", "mandrill", "mailtrap", "sendlayer", "smtpcom", "emailit", "cloudflare"}
	for _, d := range builtIn {
		if !served[d] {
			t.Errorf("GET /transports lacks %s", d)
		}
	}
	if len(transports) != len(builtIn) || len(served) != len(builtIn) {
		t.Errorf("GET /transports lists %d drivers (%d distinct), want the %d built-in ones", len(transports), len(served), len(builtIn))
	}

	body := `{"name":"Office relay","driver":"smtp","settings":{"host":"smtp.example.com","port":587,"encryption":"tls","from_email":"site@example.com","helo":"relay-secret-word"}}`
	r = call(t, "POST", svc.Base+"/connections", body, admin)
	if r.Status != 201 {
		t.Fatalf("create smtp connection: %d %s", r.Status, r.Body)
	}
	var c struct {
		ID            int64
		Settings      map[string]any
		Pinned        []string
		SettingsError string `json:"settings_error"`
	}
	_ = json.Unmarshal(r.Body, &c)
	if strings.Join(c.Pinned, ",") != "password,username" {
		t.Errorf("pinned = %v, want password (legacy alias) and username", c.Pinned)
	}
	if c.Settings["username"] != "********" || c.Settings["password"] != "********" {
		t.Errorf("pinned secrets not masked: %v", c.Settings)
	}
	if bytes.Contains(r.Body, []byte("pinned-user")) || bytes.Contains(r.Body, []byte("legacy-alias-pass")) {
		t.Fatalf("a constant's secret leaked: %s", r.Body)
	}
	r = call(t, "PUT", fmt.Sprintf("%s/connections/%d", svc.Base, c.ID), `{"settings":{"username":"someone-else"}}`, admin)
	if r.Status != 422 || !bytes.Contains(r.Body, []byte("MAILSVC_SMTP_USERNAME")) {
		t.Errorf("PUT of a pinned key: %d %s", r.Status, r.Body)
	}

	// A second connection with its own stored secret.
	r = call(t, "POST", svc.Base+"/connections", `{"name":"Grid","driver":"sendgrid","settings":{"api_key":"SG.stored-secret-value"}}`, admin)
	if r.Status != 201 || bytes.Contains(r.Body, []byte("stored-secret-value")) {
		t.Fatalf("create sendgrid: %d %s", r.Status, r.Body)
	}
	var grid struct{ ID int64 }
	_ = json.Unmarshal(r.Body, &grid)
	svc.Stop(t)

	// At rest the secret is ciphertext.
	raw, err := os.ReadFile(filepath.Join(dir, "data", "mailsvc.db"))
	if err != nil {
		t.Fatal(err)
	}
	wal, _ := os.ReadFile(filepath.Join(dir, "data", "mailsvc.db-wal"))
	if bytes.Contains(raw, []byte("stored-secret-value")) || bytes.Contains(wal, []byte("stored-secret-value")) {
		t.Fatal("the API key is stored in plain text")
	}
	if !bytes.Contains(append(raw, wal...), []byte("enc:v1:")) {
		t.Fatal("no ciphertext found in the database")
	}

	// With another key the service still starts, says so, and the API reports it.
	svc2 := servicetest.Start(t, dir, "MAIL_SVC_ENCRYPTION_KEY=second-key")
	r = call(t, "GET", fmt.Sprintf("%s/connections/%d", svc2.Base, grid.ID), "", admin)
	var broken struct {
		SettingsError string `json:"settings_error"`
	}
	_ = json.Unmarshal(r.Body, &broken)
	if r.Status != 200 || !strings.Contains(broken.SettingsError, "encryption key changed") {
		t.Errorf("connection after key change: %d %s", r.Status, r.Body)
	}
	if !strings.Contains(svc2.Stderr.String(), "connection settings unusable") {
		t.Errorf("boot did not report the unreadable connection:\n%s", svc2.Stderr)
	}
}

func TestRESTCapabilityConstant(t *testing.T) {
	dir := t.TempDir()
	svc, _ := adminOf(t, dir, "MAILSVC_REST_CAPABILITY=read")
	res := svc.Run("", "users", "add", "sub", "--role", "subscriber")
	if res.Code != 0 {
		t.Fatalf("users add: %+v", res)
	}
	if r := call(t, "GET", svc.Base+"/settings", "", basic("sub", res.LastLine())); r.Status != 200 {
		t.Errorf("subscriber with capability read: %d %s", r.Status, r.Body)
	}
}
