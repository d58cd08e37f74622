package oauthfake_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/oauthfake"
)

var authPaths = map[string]string{
	core.ProviderGoogle:    "/o/oauth2/v2/auth",
	core.ProviderMicrosoft: "/common/oauth2/v2.0/authorize",
	core.ProviderZoho:      "/oauth/v2/auth",
}

var tokenPaths = map[string]string{
	core.ProviderGoogle:    "/token",
	core.ProviderMicrosoft: "/common/oauth2/v2.0/token",
	core.ProviderZoho:      "/oauth/v2/token",
}

func TestAuthorizeRefusals(t *testing.T) {
	tests := []struct {
		name      string
		params    url.Values
		wantErr   bool   // an error page (no redirect)
		wantError string // the error of the redirect
	}{
		{"unknown client", url.Values{"client_id": {"nope"}, "redirect_uri": {"https://a/cb"}, "response_type": {"code"}, "scope": {"s"}}, true, ""},
		{"no redirect_uri", url.Values{"client_id": {"app"}, "response_type": {"code"}, "scope": {"s"}}, true, ""},
		{"response_type token", url.Values{"client_id": {"app"}, "redirect_uri": {"https://a/cb"}, "response_type": {"token"}, "scope": {"s"}}, false, "unsupported_response_type"},
		{"accepted", url.Values{"client_id": {"app"}, "redirect_uri": {"https://a/cb"}, "response_type": {"code"}, "scope": {"s"}, "state": {"x"}}, false, ""},
	}
	for p, path := range authPaths {
		for _, tt := range tests {
			t.Run(p+"/"+tt.name, func(t *testing.T) {
				f := oauthfake.New(p)
				defer f.Close()
				f.AddClient("app", "sec")
				back, err := f.Consent(context.Background(), f.URL()+path+"?"+tt.params.Encode())
				if (err != nil) != tt.wantErr {
					t.Fatalf("consent: %v, want error %v", err, tt.wantErr)
				}
				if tt.wantErr {
					return
				}
				q := back.Query()
				if q.Get("error") != tt.wantError || (tt.wantError == "") != (q.Get("code") != "") {
					t.Fatalf("redirect %s, want error %q", back, tt.wantError)
				}
				if tt.wantError == "" && p == core.ProviderZoho && q.Get("accounts-server") != f.URL() {
					t.Fatalf("zoho redirect %s without accounts-server", back)
				}
			})
		}
	}
}

func TestTokenErrorShapes(t *testing.T) {
	tests := []struct {
		provider, secret string
		form             url.Values
		wantStatus       int
		wantError        string
		wantField        string // another field the body must have
	}{
		{core.ProviderGoogle, "wrong", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x"}}, 401, "invalid_client", "error_description"},
		{core.ProviderGoogle, "sec", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x"}}, 400, "invalid_grant", "error_description"},
		{core.ProviderMicrosoft, "sec", url.Values{"grant_type": {"authorization_code"}, "code": {"x"}}, 400, "invalid_grant", "error_codes"},
		{core.ProviderMicrosoft, "sec", url.Values{"grant_type": {"password"}}, 400, "unsupported_grant_type", "correlation_id"},
		{core.ProviderZoho, "sec", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x"}}, 200, "invalid_code", ""},
		{core.ProviderZoho, "wrong", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"x"}}, 200, "invalid_client", ""},
	}
	for _, tt := range tests {
		t.Run(tt.provider+"/"+tt.wantError, func(t *testing.T) {
			f := oauthfake.New(tt.provider)
			defer f.Close()
			f.AddClient("app", "sec")
			tt.form.Set("client_id", "app")
			tt.form.Set("client_secret", tt.secret)
			resp, err := http.PostForm(f.URL()+tokenPaths[tt.provider], tt.form)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.wantStatus || body["error"] != tt.wantError {
				t.Fatalf("HTTP %d %v, want %d error %s", resp.StatusCode, body, tt.wantStatus, tt.wantError)
			}
			if _, ok := body[tt.wantField]; tt.wantField != "" && !ok {
				t.Fatalf("body %v has no %s", body, tt.wantField)
			}
		})
	}
}

func TestPlainChallengeAndExpiry(t *testing.T) {
	f := oauthfake.New(core.ProviderGoogle)
	defer f.Close()
	f.AddClient("app", "sec")
	back, err := f.Consent(context.Background(), f.URL()+"/o/oauth2/v2/auth?"+url.Values{
		"client_id": {"app"}, "redirect_uri": {"https://a/cb"}, "response_type": {"code"}, "scope": {"s"},
		"access_type": {"offline"}, "code_challenge": {"plain-verifier"}, "code_challenge_method": {"plain"},
	}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.PostForm(f.URL()+"/token", url.Values{
		"grant_type": {"authorization_code"}, "code": {back.Query().Get("code")}, "redirect_uri": {"https://a/cb"},
		"client_id": {"app"}, "client_secret": {"sec"}, "code_verifier": {"plain-verifier"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != 200 {
		t.Fatalf("HTTP %d, %v", resp.StatusCode, err)
	}
	if !f.Valid(tok.AccessToken) || !strings.HasPrefix(tok.RefreshToken, "rt-") {
		t.Fatalf("token %+v: want a valid access token and a refresh token", tok)
	}
	if scope, ok := f.TokenScope(tok.AccessToken); !ok || scope != "s" {
		t.Fatalf("token scope %q %v, want s", scope, ok)
	}
	f.ExpireAccessTokens()
	if _, ok := f.TokenScope(tok.AccessToken); ok || f.Valid(tok.AccessToken) || f.Valid("made-up") {
		t.Fatal("an expired or unknown access token is valid")
	}
}
