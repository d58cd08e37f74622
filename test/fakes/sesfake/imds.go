package sesfake

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"time"
)

// IMDS header names (IMDSv2).
const (
	HeaderTokenTTL = "X-Aws-Ec2-Metadata-Token-Ttl-Seconds"
	HeaderToken    = "X-Aws-Ec2-Metadata-Token"
)

// RoleCredentials are the temporary credentials the fake instance role
// hands out.
type RoleCredentials struct {
	AccessKeyID     string
	SecretAccessKey string
	Token           string
	Expiration      time.Time
}

// IMDS is a running fake of the EC2 instance metadata service, version 2
// only: a session token must first be obtained with PUT /latest/api/token
// and then sent with every GET; requests without it are refused with 401.
type IMDS struct {
	// URL is the endpoint to give the SDK in place of http://169.254.169.254.
	URL string

	role  string
	creds RoleCredentials
	srv   *httptest.Server

	mu        sync.Mutex
	tokens    map[string]time.Time
	ttls      []int
	refused   int
	credReads int
}

// NewIMDS starts a fake metadata service whose instance has the IAM role
// role with the given credentials. A zero Expiration means one hour from
// each request.
func NewIMDS(role string, creds RoleCredentials) *IMDS {
	m := &IMDS{role: role, creds: creds, tokens: map[string]time.Time{}}
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /latest/api/token", m.handleToken)
	mux.HandleFunc("GET /latest/meta-data/iam/security-credentials/{$}", m.handleRoles)
	mux.HandleFunc("GET /latest/meta-data/iam/security-credentials/{role}", m.handleRole)
	m.srv = httptest.NewServer(mux)
	m.URL = m.srv.URL
	return m
}

// Close shuts the fake down.
func (m *IMDS) Close() { m.srv.Close() }

// TokenTTLs returns the TTL in seconds of every token request, oldest
// first.
func (m *IMDS) TokenTTLs() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]int(nil), m.ttls...)
}

// Refused returns how many metadata reads came without a valid token.
func (m *IMDS) Refused() int { return m.count(&m.refused) }

// CredentialReads returns how many times the role's credentials were read.
func (m *IMDS) CredentialReads() int { return m.count(&m.credReads) }

func (m *IMDS) handleToken(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-Forwarded-For") != "" {
		http.Error(w, "Forbidden", http.StatusForbidden)
		return
	}
	ttl, err := strconv.Atoi(r.Header.Get(HeaderTokenTTL))
	if err != nil || ttl < 1 || ttl > 21600 {
		http.Error(w, "Bad Request", http.StatusBadRequest)
		return
	}
	token := newID()
	m.mu.Lock()
	m.ttls = append(m.ttls, ttl)
	m.tokens[token] = time.Now().Add(time.Duration(ttl) * time.Second)
	m.mu.Unlock()
	w.Header().Set(HeaderTokenTTL, strconv.Itoa(ttl))
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte(token))
}

// authorized checks the session token; IMDSv1 (no token) is refused.
func (m *IMDS) authorized(w http.ResponseWriter, r *http.Request) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	exp, ok := m.tokens[r.Header.Get(HeaderToken)]
	if ok && time.Now().Before(exp) {
		return true
	}
	m.refused++
	http.Error(w, "Unauthorized", http.StatusUnauthorized)
	return false
}

func (m *IMDS) handleRoles(w http.ResponseWriter, r *http.Request) {
	if !m.authorized(w, r) {
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write([]byte(m.role))
}

func (m *IMDS) handleRole(w http.ResponseWriter, r *http.Request) {
	if !m.authorized(w, r) {
		return
	}
	if r.PathValue("role") != m.role {
		http.NotFound(w, r)
		return
	}
	m.mu.Lock()
	m.credReads++
	m.mu.Unlock()
	exp := m.creds.Expiration
	if exp.IsZero() {
		exp = time.Now().Add(time.Hour)
	}
	w.Header().Set("Content-Type", "text/plain")
	_ = json.NewEncoder(w).Encode(map[string]string{
		"Code":            "Success",
		"LastUpdated":     time.Now().UTC().Format(time.RFC3339),
		"Type":            "AWS-HMAC",
		"AccessKeyId":     m.creds.AccessKeyID,
		"SecretAccessKey": m.creds.SecretAccessKey,
		"Token":           m.creds.Token,
		"Expiration":      exp.UTC().Format(time.RFC3339),
	})
}

// count returns the counter n of the server, read under its lock.
func (m *IMDS) count(n *int) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return *n
}
