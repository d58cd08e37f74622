package pro_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	api "github.com/mailsvc/mailsvc/adapters/http"
	httppro "github.com/mailsvc/mailsvc/adapters/http/pro"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/pro"
	"github.com/mailsvc/mailsvc/app/pro/domaincheck"
	"github.com/mailsvc/mailsvc/app/pro/sesid"
	"github.com/mailsvc/mailsvc/core"
)

// stubSES answers each route from connection 1 (an SES connection); 2 is
// not SES, any other id does not exist.
type stubSES struct{}

func (stubSES) check(id int64) error {
	switch id {
	case 1:
		return nil
	case 0:
		return core.InvalidField("connection_id", "This field is required.")
	case 2:
		return core.InvalidField("connection_id", "Connection 2 uses the smtp driver, not Amazon SES.")
	}
	return core.Errorf(core.ENOTFOUND, "connection not found")
}

func (s stubSES) Identities(_ context.Context, id int64) ([]sesid.Identity, error) {
	return []sesid.Identity{{Identity: "a@example.com", Type: sesid.TypeEmailAddress}}, s.check(id)
}

func (s stubSES) ValidSenders(_ context.Context, id int64) (*sesid.Senders, error) {
	return &sesid.Senders{Addresses: []string{"a@example.com"}, Domains: []string{}}, s.check(id)
}

func (s stubSES) Act(_ context.Context, id int64, action, identity string) (*sesid.ActionResult, error) {
	if action != "verify" && action != "delete" {
		return nil, core.InvalidField("action", "Must be one of: verify, delete.")
	}
	return &sesid.ActionResult{Action: action, Identity: &sesid.Identity{Identity: identity}}, s.check(id)
}

func (s stubSES) Stats(_ context.Context, id int64) (*sesid.Stats, error) {
	return &sesid.Stats{Account: sesid.Account{Max24HourSend: 200}}, s.check(id)
}

func (s stubSES) CredentialSources(_ context.Context, id int64) (*sesid.CredentialSources, error) {
	return &sesid.CredentialSources{ConnectionID: id, InUse: sesid.SourceDatabase}, s.check(id)
}

type stubChecker struct{}

func (stubChecker) Check(_ context.Context, domain string) (*domaincheck.Report, error) {
	d, ok := domaincheck.NormalizeDomain(domain)
	if !ok {
		return nil, core.InvalidField("domain", "Must be a domain name such as example.com.")
	}
	return &domaincheck.Report{Domain: d, Verdict: domaincheck.Pass}, nil
}

func TestSESAndDomainCheckRoutes(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(nil)
	store := apptest.NewSettingsStore()
	m := &httppro.Module{
		Licenses:    &pro.Licenses{Store: store, Cipher: apptest.Cipher{Key: "k"}, Vendors: []ed25519.PublicKey{pub}, Site: "https://shop.example.com"},
		Settings:    &pro.Settings{Store: store},
		SES:         stubSES{},
		DomainCheck: stubChecker{},
	}
	s := &api.Server{Auth: adminAuth{}, Hooks: &core.Hooks{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Modules: []api.Module{m}}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	e := &env{url: ts.URL + api.Namespace, priv: priv, t: t}
	year := time.Now().AddDate(1, 0, 0)
	activate := func(features ...string) string {
		b, _ := json.Marshal(map[string]string{"license_key": e.key("https://shop.example.com", year, features...)})
		return string(b)
	}

	e.run([]step{
		{"ses without a licence", "POST", "/pro/ses/identities", `{"connection_id":1}`, 403, []string{`"code":"license_required"`}},
		{"domain check without a licence", "GET", "/pro/tools/domain-check?domain=example.com", "", 403, []string{`"code":"license_required"`}},
		{"licence without the feature", "POST", "/pro/license/activate", activate("tools.domain_check"), 200, nil},
		{"ses without the feature", "POST", "/pro/ses/stats", `{"connection_id":1}`, 403, []string{`"code":"rest_forbidden"`, "feature:connections.ses.identity_management"}},
		{"domain check with any licence", "GET", "/pro/tools/domain-check?domain=Example.com", "", 200, []string{`"domain":"example.com"`, `"verdict":"pass"`}},
		{"domain check, bad domain", "GET", "/pro/tools/domain-check?domain=not_a_domain", "", 422, []string{`"code":"validation_error"`, `"domain":`}},
		{"domain check, no domain", "GET", "/pro/tools/domain-check", "", 422, []string{`"domain":`}},
		{"licence with the feature", "POST", "/pro/license/activate", activate("connections.ses.identity_management"), 200, nil},
		{"identities", "POST", "/pro/ses/identities", `{"connection_id":1}`, 200, []string{`"identities":[{"identity":"a@example.com"`}},
		{"valid senders", "POST", "/pro/ses/valid-senders", `{"connection_id":1}`, 200, []string{`"addresses":["a@example.com"]`}},
		{"action", "POST", "/pro/ses/identities/action", `{"connection_id":1,"action":"verify","identity":"example.com"}`, 200, []string{`"action":"verify"`}},
		{"bad action", "POST", "/pro/ses/identities/action", `{"connection_id":1,"action":"steal","identity":"example.com"}`, 422, []string{`"action":`}},
		{"stats", "POST", "/pro/ses/stats", `{"connection_id":1}`, 200, []string{`"max_24_hour_send":200`}},
		{"credential sources", "POST", "/pro/ses/credential-sources", `{"connection_id":1}`, 200, []string{`"in_use":"database"`}},
		{"missing connection", "POST", "/pro/ses/stats", `{}`, 422, []string{`"connection_id":`}},
		{"not ses", "POST", "/pro/ses/stats", `{"connection_id":2}`, 422, []string{"not Amazon SES"}},
		{"unknown connection", "POST", "/pro/ses/identities", `{"connection_id":99}`, 404, []string{`"code":"not_found"`}},
		{"malformed", "POST", "/pro/ses/identities", `{"connection_id":`, 400, []string{`"code":"bad_request"`}},
		{"wrong type", "POST", "/pro/ses/identities", `{"connection_id":"one"}`, 400, []string{`"code":"bad_request"`}},
		{"domain check, licence without the domain feature", "GET", "/pro/tools/domain-check?domain=example.com", "", 200, []string{`"domain":"example.com"`}},
	})
}
