package sesfake

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Identity is one SES v2 email identity held by the fake.
type Identity struct {
	Name               string
	Type               string // EMAIL_ADDRESS or DOMAIN
	VerificationStatus string // PENDING, SUCCESS, FAILED, TEMPORARY_FAILURE, NOT_STARTED
	DkimStatus         string
	DkimTokens         []string
}

// identities is the identity store of the fake.
type identities struct {
	mu   sync.Mutex
	byID map[string]*Identity
}

// registerIdentityRoutes serves the SES v2 identity operations:
// ListEmailIdentities, GetEmailIdentity, CreateEmailIdentity and
// DeleteEmailIdentity.
func (s *Server) registerIdentityRoutes(mux *http.ServeMux) {
	s.ids = &identities{byID: map[string]*Identity{}}
	// ListEmailIdentities is GET with query parameters in the API
	// reference and POST with a JSON body in current SDKs: both are served.
	mux.HandleFunc("GET /v2/email/identities", s.handleListIdentities)
	mux.HandleFunc("POST /v2/email/list-identities", s.handleListIdentities)
	mux.HandleFunc("POST /v2/email/identities", s.handleCreateIdentity)
	mux.HandleFunc("GET /v2/email/identities/{identity}", s.handleGetIdentity)
	mux.HandleFunc("DELETE /v2/email/identities/{identity}", s.handleDeleteIdentity)
}

// AddIdentity adds an identity as if it had been created (and, with
// status SUCCESS, verified) earlier. A domain gets three DKIM tokens.
func (s *Server) AddIdentity(name, status string) Identity {
	it := newIdentity(name)
	it.VerificationStatus = status
	if it.Type == "DOMAIN" {
		it.DkimStatus = status
	}
	s.ids.mu.Lock()
	defer s.ids.mu.Unlock()
	s.ids.byID[strings.ToLower(name)] = it
	return *it
}

// SetVerified sets an identity's verification (and, for a domain, DKIM)
// status to SUCCESS, as when its owner clicked the link or published the
// records. It reports whether the identity exists.
func (s *Server) SetVerified(name string) bool {
	s.ids.mu.Lock()
	defer s.ids.mu.Unlock()
	it, ok := s.ids.byID[strings.ToLower(name)]
	if ok {
		it.VerificationStatus = "SUCCESS"
		if it.Type == "DOMAIN" {
			it.DkimStatus = "SUCCESS"
		}
	}
	return ok
}

// Identities returns a copy of every identity, sorted by name.
func (s *Server) Identities() []Identity {
	s.ids.mu.Lock()
	defer s.ids.mu.Unlock()
	out := make([]Identity, 0, len(s.ids.byID))
	for _, it := range s.ids.byID {
		c := *it
		c.DkimTokens = append([]string(nil), it.DkimTokens...)
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func newIdentity(name string) *Identity {
	it := &Identity{Name: name, Type: "EMAIL_ADDRESS", VerificationStatus: "PENDING"}
	if !strings.Contains(name, "@") {
		it.Type, it.DkimStatus = "DOMAIN", "PENDING"
		for i := 0; i < 3; i++ {
			var b [16]byte
			_, _ = rand.Read(b[:])
			it.DkimTokens = append(it.DkimTokens, hex.EncodeToString(b[:]))
		}
	} else {
		it.DkimStatus = "NOT_STARTED"
	}
	return it
}

func (s *Server) handleListIdentities(w http.ResponseWriter, r *http.Request) {
	body, _, fail := s.authenticate(r, "ListEmailIdentities")
	if fail != nil {
		writeError(w, true, fail.status, fail.code, fail.message)
		return
	}
	pageSize, next := r.URL.Query().Get("PageSize"), r.URL.Query().Get("NextToken")
	if r.Method == http.MethodPost && len(body) > 0 {
		var in struct {
			NextToken *string
			PageSize  *int
		}
		if err := json.Unmarshal(body, &in); err != nil {
			writeError(w, true, http.StatusBadRequest, "BadRequestException", "Malformed request body: "+err.Error())
			return
		}
		if in.PageSize != nil {
			pageSize = strconv.Itoa(*in.PageSize)
		}
		if in.NextToken != nil {
			next = *in.NextToken
		}
	}
	size := 1000
	if v := pageSize; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 1000 {
			writeError(w, true, http.StatusBadRequest, "BadRequestException", "PageSize must be between 0 and 1000.")
			return
		}
		if n > 0 {
			size = n
		}
	}
	start := 0
	if v := next; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, true, http.StatusBadRequest, "BadRequestException", "Invalid NextToken.")
			return
		}
		start = n
	}
	all := s.Identities()
	out := map[string]any{}
	items := []map[string]any{}
	for i := start; i < len(all) && i < start+size; i++ {
		it := all[i]
		items = append(items, map[string]any{"IdentityType": it.Type, "IdentityName": it.Name,
			"SendingEnabled": true, "VerificationStatus": it.VerificationStatus})
	}
	out["EmailIdentities"] = items
	if start+size < len(all) {
		out["NextToken"] = strconv.Itoa(start + size)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) lookupIdentity(name string) (Identity, bool) {
	s.ids.mu.Lock()
	defer s.ids.mu.Unlock()
	it, ok := s.ids.byID[strings.ToLower(name)]
	if !ok {
		return Identity{}, false
	}
	return *it, true
}

func dkimAttributes(it Identity) map[string]any {
	tokens := it.DkimTokens
	if tokens == nil {
		tokens = []string{}
	}
	return map[string]any{"SigningEnabled": it.Type == "DOMAIN", "Status": it.DkimStatus, "Tokens": tokens,
		"SigningAttributesOrigin": "AWS_SES", "CurrentSigningKeyLength": "RSA_2048_BIT", "NextSigningKeyLength": "RSA_2048_BIT"}
}

func (s *Server) handleGetIdentity(w http.ResponseWriter, r *http.Request) {
	if _, _, fail := s.authenticate(r, "GetEmailIdentity"); fail != nil {
		writeError(w, true, fail.status, fail.code, fail.message)
		return
	}
	name := r.PathValue("identity")
	it, ok := s.lookupIdentity(name)
	if !ok {
		writeError(w, true, http.StatusNotFound, "NotFoundException", "Email identity "+name+" does not exist.")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"IdentityType": it.Type, "FeedbackForwardingStatus": true,
		"VerifiedForSendingStatus": it.VerificationStatus == "SUCCESS",
		"VerificationStatus":       it.VerificationStatus,
		"DkimAttributes":           dkimAttributes(it),
		"Policies":                 map[string]string{}, "Tags": []any{},
	})
}

func (s *Server) handleCreateIdentity(w http.ResponseWriter, r *http.Request) {
	body, _, fail := s.authenticate(r, "CreateEmailIdentity")
	if fail != nil {
		writeError(w, true, fail.status, fail.code, fail.message)
		return
	}
	var in struct{ EmailIdentity string }
	if err := json.Unmarshal(body, &in); err != nil || strings.TrimSpace(in.EmailIdentity) == "" {
		writeError(w, true, http.StatusBadRequest, "BadRequestException", "EmailIdentity is required.")
		return
	}
	s.ids.mu.Lock()
	key := strings.ToLower(in.EmailIdentity)
	if _, exists := s.ids.byID[key]; exists {
		s.ids.mu.Unlock()
		writeError(w, true, http.StatusBadRequest, "AlreadyExistsException", "Email identity "+in.EmailIdentity+" already exist.")
		return
	}
	it := newIdentity(in.EmailIdentity)
	s.ids.byID[key] = it
	c := *it
	s.ids.mu.Unlock()
	out := map[string]any{"IdentityType": c.Type, "VerifiedForSendingStatus": false}
	if c.Type == "DOMAIN" {
		out["DkimAttributes"] = dkimAttributes(c)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleDeleteIdentity(w http.ResponseWriter, r *http.Request) {
	if _, _, fail := s.authenticate(r, "DeleteEmailIdentity"); fail != nil {
		writeError(w, true, fail.status, fail.code, fail.message)
		return
	}
	name := r.PathValue("identity")
	s.ids.mu.Lock()
	_, ok := s.ids.byID[strings.ToLower(name)]
	delete(s.ids.byID, strings.ToLower(name))
	s.ids.mu.Unlock()
	if !ok {
		writeError(w, true, http.StatusNotFound, "NotFoundException", "Email identity "+name+" does not exist.")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{})
}
