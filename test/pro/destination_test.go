package protest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/graphfake"
	"github.com/mailsvc/mailsvc/test/fakes/oauthfake"
	"github.com/mailsvc/mailsvc/test/fakes/sendgridfake"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/fakes/wiretap"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

// caller is the admin's call of a running service.
type caller func(method, path, body string) servicetest.Response

// send sends a test email through connection id and reports whether the
// provider accepted it.
func (call caller) send(t *testing.T, id int64) bool {
	t.Helper()
	r := call("POST", fmt.Sprintf("/connections/%d/test", id), `{"to":"ann@example.com"}`)
	var res struct{ Success bool }
	r.JSON(t, &res)
	if r.Status != 200 {
		t.Fatalf("test send through %d: %d %s", id, r.Status, r.Body)
	}
	return res.Success
}

// useAll sends, verifies and refreshes connection id every way the API
// allows, whatever the outcome: what a moved connection must survive
// without handing its old secrets to the new destination.
func (call caller) useAll(t *testing.T, id int64) {
	t.Helper()
	call.send(t, id)
	for _, action := range []string{"verify-credentials", "verify-api-credentials", "oauth-refresh-now"} {
		if r := call("POST", fmt.Sprintf("/connections/%d/%s", id, action), `{}`); r.Status >= 500 {
			t.Fatalf("%s of %d: %d %s", action, id, r.Status, r.Body)
		}
	}
}

func (call caller) create(t *testing.T, body string, args ...any) int64 {
	t.Helper()
	return createConnection(t, call, fmt.Sprintf(body, args...))
}

// wantReenter requires a 422 validation_error whose data.errors are want.
func wantReenter(t *testing.T, what string, r servicetest.Response, want map[string]string) {
	t.Helper()
	var e struct {
		Code string
		Data struct {
			Status int
			Errors map[string]string
		}
	}
	r.JSON(t, &e)
	if r.Status != 422 || e.Code != "validation_error" || e.Data.Status != 422 || len(e.Data.Errors) != len(want) {
		t.Fatalf("%s: %d %s, want 422 validation_error naming %v", what, r.Status, r.Body, want)
	}
	for k, msg := range want {
		if e.Data.Errors[k] != msg {
			t.Fatalf("%s: data.errors.%s = %q, want %q", what, k, e.Data.Errors[k], msg)
		}
	}
}

// noneOnTheWire fails when any secret went through a tap.
func noneOnTheWire(t *testing.T, what string, taps []*wiretap.Tap, secrets ...string) {
	t.Helper()
	for _, tp := range taps {
		for _, s := range secrets {
			if tp.Carries(s) {
				t.Fatalf("%s: the secret %.12s... went to the new destination %s", what, s, tp.Addr())
			}
		}
	}
}

func hostPort(u string) string { return strings.TrimPrefix(u, "http://") }

// TestStoredSecretsStayWithTheirDestination drives the built binary: an
// SMTP, a SendGrid and an Outlook (OAuth) connection deliver through
// their fakes; then edits and an import move each of them to a capture
// server on loopback that records every byte (SMTP AUTH, HTTP headers,
// token requests). A PUT that moves a connection with its secret masked
// is 422 naming the secret and leaves it where it was; with the secret
// entered again it moves and works; a change of another field keeps the
// secret; OAuth tokens are dropped (needs_authorization); an import that
// moves a connection drops its secrets. After each move, no send, verify
// or refresh puts an old secret on the wire.
func TestStoredSecretsStayWithTheirDestination(t *testing.T) {
	const (
		smtpOld, smtpNew = "smtp-secret-one", "smtp-secret-two"
		sgKey            = "SG.stored-api-key"
		msSecret         = "client-secret-one"
		msSecret2        = "client-secret-of-the-second"
	)
	sinkOld := smtpsink.Start(t, smtpsink.WithAuth("mailer", smtpOld))
	sinkNew := smtpsink.Start(t, smtpsink.WithAuth("mailer", smtpNew))
	sg := sendgridfake.New(sgKey)
	defer sg.Close()
	ms := oauthfake.New(core.ProviderMicrosoft)
	defer ms.Close()
	ms.SetRotation(false) // the refresh tokens below stay the stored ones
	ms.AddClient("cid", msSecret)
	ms.AddClient("cid2", msSecret2)
	const scope = "offline_access https://graph.microsoft.com/Mail.Send"
	_, refresh1 := ms.Grant("cid", scope)
	_, refresh2 := ms.Grant("cid2", scope)
	graph := graphfake.New(ms.Valid)
	defer graph.Close()

	// The capture servers: each passes on to a working fake, so an old
	// secret that reached one would even be accepted.
	smtpTap := wiretap.Start(t, sinkNew.Addr())
	smtpTap2 := wiretap.Start(t, sinkNew.Addr())
	sgTap := wiretap.Start(t, hostPort(sg.URL))
	graphTap := wiretap.Start(t, hostPort(graph.URL))
	msTap := wiretap.Start(t, hostPort(ms.URL()))
	taps := []*wiretap.Tap{smtpTap, smtpTap2, sgTap, graphTap, msTap}

	_, c := start(t, t.TempDir(), "MAILSVC_ALLOW_CUSTOM_ENDPOINTS=true")
	call := caller(c)
	smtpID := call.create(t, `{"name":"Relay","driver":"smtp","settings":{"host":%q,"port":%d,"encryption":"none","username":"mailer","password":%q,"from_email":"site@example.com"}}`,
		sinkOld.Host(), sinkOld.Port(), smtpOld)
	sgID := call.create(t, `{"name":"Grid","driver":"sendgrid","settings":{"api_key":%q,"base_url":%q,"from_email":"site@example.com"}}`, sgKey, sg.URL)
	outlook := `{"name":%q,"driver":"outlook","settings":{"client_id":%q,"client_secret":%q,"refresh_token":%q,"oauth_base_url":%q,"base_url":%q,"from_email":"site@outlook.example"}}`
	msID := call.create(t, outlook, "M365", "cid", msSecret, refresh1, ms.URL(), graph.BaseURL())
	ms2ID := call.create(t, outlook, "M365 second", "cid2", msSecret2, refresh2, ms.URL(), graph.BaseURL())
	for _, id := range []int64{smtpID, sgID, msID, ms2ID} {
		if !call.send(t, id) {
			t.Fatalf("connection %d does not deliver before any move", id)
		}
	}
	access := graph.Tokens() // the access tokens the service obtained and holds
	if len(access) != 2 {
		t.Fatalf("graph saw %d tokens, want 2", len(access))
	}
	secrets := append([]string{smtpOld, sgKey, msSecret, msSecret2, refresh1, refresh2}, access...)

	// 1. A PUT that moves a connection, its secrets masked or left out:
	// 422 naming each, and the connection stays where it was.
	path := func(id int64) string { return fmt.Sprintf("/connections/%d", id) }
	again := func(what string) string { return "Enter the " + what + " again: the server changed." }
	wantReenter(t, "smtp port", call("PUT", path(smtpID), fmt.Sprintf(`{"settings":{"port":%d,"password":"********","username":"********"}}`, smtpTap.Port())),
		map[string]string{"password": again("password"), "username": again("username")})
	wantReenter(t, "sendgrid base_url", call("PUT", path(sgID), fmt.Sprintf(`{"settings":{"base_url":%q}}`, sgTap.URL())),
		map[string]string{"api_key": again("API key")})
	wantReenter(t, "outlook oauth_base_url", call("PUT", path(msID), fmt.Sprintf(`{"settings":{"oauth_base_url":%q,"base_url":%q,"client_secret":"********"}}`, msTap.URL(), graphTap.URL()+"/v1.0")),
		map[string]string{"client_secret": again("client secret")})
	for _, id := range []int64{smtpID, sgID, msID} {
		if !call.send(t, id) {
			t.Fatalf("connection %d stopped delivering after a refused edit", id)
		}
	}
	for _, tp := range taps {
		if tp.Connections() != 0 {
			t.Fatalf("a refused edit reached %s", tp.Addr())
		}
	}

	// 2. A change of another field keeps the secret.
	if r := call("PUT", path(smtpID), `{"settings":{"from_name":"The Shop","password":"********","username":"********"}}`); r.Status != 200 {
		t.Fatalf("from_name: %d %s", r.Status, r.Body)
	}
	if !call.send(t, smtpID) {
		t.Fatal("the SMTP connection lost its password with its from_name")
	}

	// 3. The secret entered again with the new destination: it moves and
	// works, and only the new secret went there.
	if r := call("PUT", path(smtpID), fmt.Sprintf(`{"settings":{"port":%d,"username":"mailer","password":%q}}`, smtpTap.Port(), smtpNew)); r.Status != 200 {
		t.Fatalf("smtp port with the password: %d %s", r.Status, r.Body)
	}
	if !call.send(t, smtpID) || !smtpTap.Carries(smtpNew) {
		t.Fatal("the SMTP connection does not deliver through its new server with its new password")
	}
	noneOnTheWire(t, "smtp moved by PUT", taps, secrets...)

	// 4. An OAuth connection moved with its client secret entered again:
	// its tokens are dropped and it needs authorization.
	r := call("PUT", path(msID), fmt.Sprintf(`{"settings":{"oauth_base_url":%q,"base_url":%q,"client_secret":"client-secret-new"}}`, msTap.URL(), graphTap.URL()+"/v1.0"))
	var moved struct {
		OAuthStatus string         `json:"oauth_status"`
		Settings    map[string]any `json:"settings"`
	}
	r.JSON(t, &moved)
	if r.Status != 200 || moved.OAuthStatus != core.OAuthNeedsAuthorization || moved.Settings["refresh_token"] != nil {
		t.Fatalf("outlook moved: %d %s, want needs_authorization without tokens", r.Status, r.Body)
	}
	call.useAll(t, msID)
	noneOnTheWire(t, "outlook moved by PUT", taps, secrets...)

	// 5. An import that moves connections (a "settings template" with
	// other servers) drops their secrets and says so.
	exported := call("POST", "/pro/tools/export", "")
	if exported.Status != 200 {
		t.Fatalf("export: %d %s", exported.Status, exported.Body)
	}
	var snap map[string]any
	exported.JSON(t, &snap)
	for _, item := range snap["connections"].([]any) {
		conn := item.(map[string]any)
		settings := conn["settings"].(map[string]any)
		switch conn["name"] {
		case "Relay":
			settings["port"] = smtpTap2.Port()
		case "Grid":
			settings["base_url"] = sgTap.URL()
		case "M365 second":
			settings["oauth_base_url"] = msTap.URL()
		}
	}
	data := mustJSON(t, snap)
	for _, item := range snap["connections"].([]any) {
		if conn := item.(map[string]any); conn["name"] == "Relay" {
			conn["settings"].(map[string]any)["timeout"] = "not-a-number"
		}
	}
	invalid := mustJSON(t, snap)
	type record struct {
		Name    string
		Status  string
		Missing []string
		Reason  string
	}
	importFile := func(data string) (replaced, skipped []record) {
		t.Helper()
		preview := call("POST", "/pro/tools/import/preview", `{"data":`+data+`}`)
		var p struct{ Conflicts []struct{ Key string } }
		preview.JSON(t, &p)
		resolutions := map[string]string{}
		for _, cf := range p.Conflicts {
			resolutions[cf.Key] = "replace"
		}
		imp := call("POST", "/pro/tools/import", `{"data":`+data+`,"resolutions":`+mustJSON(t, resolutions)+`}`)
		var res struct{ Replaced, Skipped []record }
		imp.JSON(t, &res)
		if imp.Status != 200 {
			t.Fatalf("import: %d %s", imp.Status, imp.Body)
		}
		return res.Replaced, res.Skipped
	}

	// A file with a setting the driver rejects: that connection is
	// skipped with the driver's reason, and nothing of it is written.
	replaced, skipped := importFile(invalid)
	if len(skipped) != 1 || skipped[0].Name != "Relay" || !strings.Contains(skipped[0].Reason, "timeout: Must be a whole number.") {
		t.Fatalf("skipped %+v, want Relay for its timeout", skipped)
	}
	var relay struct{ Settings map[string]any }
	call("GET", path(smtpID), "").JSON(t, &relay)
	if relay.Settings["timeout"] == "not-a-number" || relay.Settings["port"] != float64(smtpTap.Port()) {
		t.Fatalf("the invalid import wrote: %v", relay.Settings)
	}
	more, skipped := importFile(data)
	if len(skipped) != 0 {
		t.Fatalf("skipped %+v", skipped)
	}
	replaced = append(replaced, more...)
	want := map[string]string{"Relay": "password,username", "Grid": "api_key", "M365 second": "access_token,client_secret,refresh_token"}
	if len(replaced) != len(want) {
		t.Fatalf("replaced %+v, want %v", replaced, want)
	}
	for _, rep := range replaced {
		if rep.Status != "needs_password" || strings.Join(rep.Missing, ",") != want[rep.Name] {
			t.Fatalf("replaced %+v, want needs_password missing %s", rep, want[rep.Name])
		}
	}
	for _, id := range []int64{smtpID, sgID, ms2ID} {
		call.useAll(t, id)
	}
	noneOnTheWire(t, "moved by import", taps, secrets...)
	// The password entered for smtpTap went there, and nowhere else.
	noneOnTheWire(t, "smtp moved by import", []*wiretap.Tap{smtpTap2, sgTap, graphTap, msTap}, smtpNew)
	var grid struct {
		LastError string `json:"last_error"`
	}
	call("GET", path(sgID), "").JSON(t, &grid)
	if !strings.Contains(grid.LastError, "api_key") {
		t.Fatalf("the moved connection's last_error %q does not name the secret to enter", grid.LastError)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
