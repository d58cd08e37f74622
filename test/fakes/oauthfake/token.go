package oauthfake

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// handleToken is the token endpoint.
func (s *Server) handleToken(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		s.oauthError(w, "invalid_request", 900144, "The request body must be application/x-www-form-urlencoded.")
		return
	}
	f := r.PostForm
	clientID, secret := f.Get("client_id"), f.Get("client_secret")
	if id, pw, ok := r.BasicAuth(); ok && s.provider != core.ProviderZoho {
		clientID, secret = id, pw
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	want, known := s.clients[clientID]
	if !known || secret == "" || !equal(secret, want) {
		s.oauthError(w, "invalid_client", 7000215, "Invalid client secret provided.")
		return
	}
	switch f.Get("grant_type") {
	case "authorization_code":
		s.exchange(w, clientID, f.Get("code"), f.Get("redirect_uri"), f.Get("code_verifier"))
	case "refresh_token":
		s.refresh(w, clientID, f.Get("refresh_token"))
	default:
		s.oauthError(w, "unsupported_grant_type", 70003, "The app requested an unsupported grant type.")
	}
}

// exchange serves the authorization_code grant; s.mu is held.
func (s *Server) exchange(w http.ResponseWriter, clientID, code, redirectURI, verifier string) {
	if code == "" {
		s.oauthError(w, "invalid_request", 900144, "The request body must contain the parameter: 'code'.")
		return
	}
	g := s.codes[code]
	delete(s.codes, code) // single use, whatever happens next
	switch {
	case g == nil:
		s.oauthError(w, "invalid_grant", 54005, "OAuth2 Authorization code was already redeemed or is unknown.")
		return
	case g.clientID != clientID || time.Now().After(g.expires):
		s.oauthError(w, "invalid_grant", 70000, "The provided authorization code is invalid or has expired.")
		return
	case g.redirectURI != redirectURI:
		s.oauthError(w, "invalid_grant", 50148, "The redirect_uri does not match the one of the authorization request.")
		return
	}
	if g.challenge != "" {
		ok := verifier != ""
		if ok && g.method == "S256" {
			ok = equal(s256(verifier), g.challenge)
		} else if ok {
			ok = equal(verifier, g.challenge)
		}
		if !ok {
			s.oauthError(w, "invalid_grant", 501481, "The Code_Verifier does not match the code_challenge supplied in the authorization request.")
			return
		}
	}
	access := s.newAccessToken(g.scope)
	refresh := ""
	if g.offline {
		refresh = newToken("rt")
		s.refreshTokens[refresh] = &grant{clientID: clientID, scope: g.scope}
	}
	s.exchanges++
	writeJSON(w, http.StatusOK, s.tokenAnswer(access, refresh, g.scope))
}

// refresh serves the refresh_token grant; s.mu is held.
func (s *Server) refresh(w http.ResponseWriter, clientID, refreshToken string) {
	if refreshToken == "" {
		s.oauthError(w, "invalid_request", 900144, "The request body must contain the parameter: 'refresh_token'.")
		return
	}
	g := s.refreshTokens[refreshToken]
	if g == nil || g.clientID != clientID {
		s.oauthError(w, "invalid_grant", 70008, "Token has been expired or revoked.")
		return
	}
	access := s.newAccessToken(g.scope)
	next := ""
	switch {
	case s.rotate:
		delete(s.refreshTokens, refreshToken)
		next = newToken("rt")
		s.refreshTokens[next] = g
	case s.provider == core.ProviderMicrosoft:
		next = refreshToken // Microsoft always answers one
	}
	s.refreshes++
	writeJSON(w, http.StatusOK, s.tokenAnswer(access, next, g.scope))
}

// tokenAnswer is a successful token response in the provider's shape;
// refresh is left out when "". s.mu is held.
func (s *Server) tokenAnswer(access, refresh, scope string) map[string]any {
	out := map[string]any{
		"access_token": access,
		"token_type":   "Bearer",
		"expires_in":   s.expiresIn,
	}
	if refresh != "" {
		out["refresh_token"] = refresh
	}
	switch s.provider {
	case core.ProviderGoogle:
		out["scope"] = scope
	case core.ProviderMicrosoft:
		out["scope"] = scope
		out["ext_expires_in"] = s.expiresIn
	case core.ProviderZoho:
		out["api_domain"] = s.apiDomain
	}
	return out
}

// googleDescriptions are Google's error_description texts, by the
// AADSTS number that names the same failure.
var googleDescriptions = map[int]string{
	54005:   "Bad Request",
	70000:   "Bad Request",
	50148:   "Bad Request",
	501481:  "Invalid code verifier.",
	70008:   "Token has been expired or revoked.",
	7000215: "Unauthorized",
}

// zohoCodes are Zoho's words for the RFC 6749 error codes.
var zohoCodes = map[string]string{"invalid_grant": "invalid_code"}

// oauthError answers an RFC 6749 error in the provider's shape: Google
// 400 (401 for invalid_client) {"error","error_description"}; Microsoft
// the same statuses with AADSTS details; Zoho HTTP 200 {"error"}.
func (s *Server) oauthError(w http.ResponseWriter, code string, aadsts int, desc string) {
	status := http.StatusBadRequest
	if code == "invalid_client" {
		status = http.StatusUnauthorized
	}
	switch s.provider {
	case core.ProviderMicrosoft:
		writeJSON(w, status, microsoftError(code, aadsts, desc))
	case core.ProviderZoho:
		if z, ok := zohoCodes[code]; ok {
			code = z
		}
		writeJSON(w, http.StatusOK, map[string]any{"error": code})
	default:
		if d, ok := googleDescriptions[aadsts]; ok {
			desc = d
		}
		writeJSON(w, status, map[string]any{"error": code, "error_description": desc})
	}
}

// writeJSON answers status with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
