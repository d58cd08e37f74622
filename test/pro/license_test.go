package protest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/licenseserverfake"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

func TestLicenseIssueRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	v := keygen(t, dir)
	publicAsPrivate := filepath.Join(dir, "public.key")
	if err := os.WriteFile(publicAsPrivate, []byte(v.public), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no site", []string{"--private-key", v.keyFile, "--expires", "2030-01-01"}, "required"},
		{"bad date", []string{"--private-key", v.keyFile, "--site", "https://a.example", "--expires", "01/01/2030"}, "YYYY-MM-DD"},
		{"missing key file", []string{"--private-key", filepath.Join(dir, "nope"), "--site", "https://a.example", "--expires", "2030-01-01"}, "read the private key"},
		{"public key given as private", []string{"--private-key", publicAsPrivate, "--site", "https://a.example", "--expires", "2030-01-01"}, "private key"},
		{"bad site", []string{"--private-key", v.keyFile, "--site", "ftp://a.example", "--expires", "2030-01-01"}, "not an http(s) site URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := servicetest.Run(dir, servicetest.Environ(dir), "", append([]string{"license", "issue"}, tt.args...)...)
			if r.Code == 0 || !strings.Contains(r.Stderr, tt.want) {
				t.Fatalf("code %d stderr %q, want a failure saying %q", r.Code, r.Stderr, tt.want)
			}
		})
	}
}

func TestBadVendorKeyStopsServe(t *testing.T) {
	dir := t.TempDir()
	r := servicetest.Run(dir, servicetest.Environ(dir, "MAILSVC_LICENSE_PUBLIC_KEYS=bm90LWEta2V5"), "", "serve", "--addr", servicetest.FreeAddr(t))
	if r.Code == 0 || !strings.Contains(r.Stderr, "MAILSVC_LICENSE_PUBLIC_KEYS") {
		t.Fatalf("serve with a bad vendor key: code %d, stderr %s", r.Code, r.Stderr)
	}
}

// tamper changes one character of a key's signed payload.
func tamper(key string) string {
	i := len("MSVC1.") + 10
	c := byte('A')
	if key[i] == 'A' {
		c = 'B'
	}
	return key[:i] + string(c) + key[i+1:]
}

func TestLicenseKeysThroughTheBinary(t *testing.T) {
	dir := t.TempDir()
	trusted := keygen(t, dir)  // trusted through MAILSVC_LICENSE_PUBLIC_KEYS
	stranger := keygen(t, dir) // trusted by nobody
	next := time.Now().UTC().AddDate(1, 0, 0).Format("2006-01-02")
	past := time.Now().UTC().AddDate(0, 0, -2).Format("2006-01-02")
	pastEnd := time.Now().UTC().AddDate(0, 0, -1).Format("2006-01-02") // valid through the named day
	valid := trusted.issue(t, dir, "https://shop.example.com", "tools.domain_check,connections.oneclick.save", next)
	keys := map[string]string{
		"valid":          valid,
		"expired":        trusted.issue(t, dir, "https://shop.example.com", "", past),
		"other site":     trusted.issue(t, dir, "https://elsewhere.example.org", "", next),
		"unknown vendor": stranger.issue(t, dir, "https://shop.example.com", "", next),
		"tampered":       tamper(valid),
	}
	_, call := start(t, dir, "MAILSVC_PUBLIC_URL=https://www.shop.example.com/", "MAILSVC_LICENSE_PUBLIC_KEYS="+trusted.public)

	tests := []struct {
		name, key string
		status    int
		contains  []string
	}{
		{"expired", keys["expired"], 422, []string{`"code":"validation_error"`, "This licence expired at " + pastEnd + " 00:00 UTC"}},
		{"other site", keys["other site"], 422, []string{"issued for https://elsewhere.example.org, not for this site"}},
		{"unknown vendor", keys["unknown vendor"], 422, []string{"not issued by a known vendor"}},
		{"tampered", keys["tampered"], 422, []string{"signature does not verify"}},
		{"garbage", "hello", 422, []string{"not a mailsvc licence key"}},
		{"valid", keys["valid"], 200, []string{`"active":true`, `"site":"https://shop.example.com"`, `"license_key":"********"`,
			`"features":["feature:tools.domain_check","feature:connections.oneclick.save"]`, `"expires_at":"`, `"last_confirmed_at":null`, `"license_server":false`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call("POST", "/pro/license/activate", keyBody(tt.key))
			if r.Status != tt.status {
				t.Fatalf("%d %s, want %d", r.Status, r.Body, tt.status)
			}
			for _, c := range tt.contains {
				if !bytes.Contains(r.Body, []byte(c)) {
					t.Errorf("%s does not contain %s", r.Body, c)
				}
			}
			if bytes.Contains(r.Body, []byte(tt.key)) {
				t.Error("the licence key appears in the answer")
			}
		})
	}
	st := call("GET", "/pro/license/status", "")
	if st.Status != 200 || !bytes.Contains(st.Body, []byte(`"active":true`)) || bytes.Contains(st.Body, []byte(valid)) {
		t.Fatalf("status: %d %s", st.Status, st.Body)
	}
	if bytes.Contains(dbFiles(t, dir), []byte(valid)) {
		t.Error("the licence key is stored in plain text")
	}
	if r := call("POST", "/pro/license/refresh", ""); r.Status != 200 || !bytes.Contains(r.Body, []byte(`"active":true`)) {
		t.Errorf("refresh without a server: %d %s", r.Status, r.Body)
	}
	if r := call("POST", "/pro/license/deactivate", ""); r.Status != 200 || !bytes.Contains(r.Body, []byte(`"active":false`)) || !bytes.Contains(r.Body, []byte(`"license_key":""`)) {
		t.Errorf("deactivate: %d %s", r.Status, r.Body)
	}
	if r := call("POST", "/pro/license/activate", `{"license_key":`); r.Status != 400 || r.Code() != "bad_request" {
		t.Errorf("malformed body: %d %s", r.Status, r.Body)
	}
}

func TestLicenseServerThroughTheBinary(t *testing.T) {
	dir := t.TempDir()
	v := keygen(t, dir)
	next := time.Now().UTC().AddDate(1, 0, 0).Format("2006-01-02")
	key := func(id string) string {
		r := servicetest.Run(dir, servicetest.Environ(dir), "", "license", "issue", "--private-key", v.keyFile,
			"--site", "https://shop.example.com", "--expires", next, "--id", id)
		if r.Code != 0 {
			t.Fatalf("issue: %s", r.Stderr)
		}
		return r.LastLine()
	}
	fake := licenseserverfake.New()
	defer fake.Close()
	fake.SetStatus("lic_refused", "unknown", "No such licence.")
	_, call := start(t, dir, "MAILSVC_PUBLIC_URL=https://shop.example.com", "MAILSVC_LICENSE_PUBLIC_KEYS="+v.public,
		"MAILSVC_LICENSE_SERVER="+fake.URL)

	expect := func(step string, r servicetest.Response, status int, contains ...string) {
		t.Helper()
		if r.Status != status {
			t.Fatalf("%s: %d %s, want %d", step, r.Status, r.Body, status)
		}
		for _, c := range contains {
			if !bytes.Contains(r.Body, []byte(c)) {
				t.Errorf("%s: %s does not contain %s", step, r.Body, c)
			}
		}
	}
	expect("refused by the server", call("POST", "/pro/license/activate", keyBody(key("lic_refused"))), 422, "The licence server refused this licence. It said: No such licence.")
	expect("confirmed", call("POST", "/pro/license/activate", keyBody(key("lic_ok"))), 200, `"active":true`, `"license_server":true`, `"license_id":"lic_ok"`)
	var st struct {
		LastConfirmedAt *time.Time `json:"last_confirmed_at"`
		LastCheckedAt   *time.Time `json:"last_checked_at"`
	}
	call("GET", "/pro/license/status", "").JSON(t, &st)
	if st.LastConfirmedAt == nil {
		t.Fatal("activation confirmed by the server left last_confirmed_at empty")
	}
	confirmed := *st.LastConfirmedAt

	fake.SetFailing(true)
	expect("refresh, server failing", call("POST", "/pro/license/refresh", ""), 200, `"active":true`, "could not be reached")
	call("GET", "/pro/license/status", "").JSON(t, &st)
	if st.LastConfirmedAt == nil || !st.LastConfirmedAt.Equal(confirmed) || st.LastCheckedAt == nil {
		t.Errorf("after an unreachable refresh: confirmed %v (want %v), checked %v", st.LastConfirmedAt, confirmed, st.LastCheckedAt)
	}
	fake.SetFailing(false)
	fake.SetStatus("lic_ok", "revoked", "Refunded.")
	expect("refresh, revoked", call("POST", "/pro/license/refresh", ""), 200, `"active":false`, `"status":"revoked"`, "Refunded.")
	fake.SetStatus("lic_ok", "active", "")
	expect("refresh, reinstated", call("POST", "/pro/license/refresh", ""), 200, `"active":true`)
	expect("deactivate", call("POST", "/pro/license/deactivate", ""), 200, `"active":false`)

	var got []string
	for _, c := range fake.Calls() {
		if c.Site != "https://shop.example.com" {
			t.Errorf("call %+v names another site", c)
		}
		got = append(got, c.Action+":"+c.LicenseID)
	}
	want := "activate:lic_refused activate:lic_ok check:lic_ok check:lic_ok check:lic_ok deactivate:lic_ok"
	if strings.Join(got, " ") != want {
		t.Errorf("server calls %v, want %s", got, want)
	}
}

func TestLicenseServerUnreachable(t *testing.T) {
	dir := t.TempDir()
	v := keygen(t, dir)
	key := v.issue(t, dir, "https://shop.example.com", "", time.Now().UTC().AddDate(1, 0, 0).Format("2006-01-02"))
	_, call := start(t, dir, "MAILSVC_PUBLIC_URL=https://shop.example.com", "MAILSVC_LICENSE_PUBLIC_KEYS="+v.public,
		"MAILSVC_LICENSE_SERVER=http://"+servicetest.FreeAddr(t))
	r := call("POST", "/pro/license/activate", keyBody(key))
	if r.Status != 200 || !bytes.Contains(r.Body, []byte(`"active":true`)) || !bytes.Contains(r.Body, []byte(`"last_confirmed_at":null`)) ||
		!bytes.Contains(r.Body, []byte("could not be reached")) {
		t.Fatalf("activate with the server unreachable: %d %s", r.Status, r.Body)
	}
	if r := call("POST", "/pro/license/refresh", ""); r.Status != 200 || !bytes.Contains(r.Body, []byte(`"active":true`)) {
		t.Fatalf("refresh with the server unreachable: %d %s", r.Status, r.Body)
	}
	if r := call("POST", "/pro/license/deactivate", ""); r.Status != 200 || !bytes.Contains(r.Body, []byte(`"active":false`)) {
		t.Fatalf("deactivate with the server unreachable: %d %s", r.Status, r.Body)
	}
}
