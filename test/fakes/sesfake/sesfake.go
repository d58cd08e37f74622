// Package sesfake is a local stand-in for Amazon SES that speaks its wire
// protocols closely enough for the real aws-sdk-go-v2 clients:
//
//   - SES v1 (Query API): POST / with a form body, Action=SendRawEmail,
//     GetSendQuota or GetAccountSendingEnabled, answered with the real XML
//     response and <ErrorResponse> shapes;
//   - SES v2 (REST-JSON): POST /v2/email/outbound-emails with Content.Raw and
//     GET /v2/email/account, errors carried by the X-Amzn-ErrorType header
//     and a {"message": ...} body; and the v2 email identity operations
//     (identities.go).
//
// Every request must carry a SigV4 Authorization header scoped to the fake's
// region and the service "ses"; the fake recomputes the signature with the
// secret of the access key id it names, so a wrong secret is refused as SES
// refuses it. Accepted messages are recorded with their raw MIME decoded
// (addresses, subject, text and HTML parts, attachment bytes). The fake can
// be told to fail or stall the next requests.
//
// IMDS (imds.go in this package) is a fake EC2 instance metadata service
// (IMDSv2) that hands out instance-role credentials.
package sesfake

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/mailsvc/mailsvc/test/fakes/faults"
)

// XMLNamespace is the namespace of every SES v1 response document.
const XMLNamespace = "http://ses.amazonaws.com/doc/2010-12-01/"

// maxRawSize is SES v1's limit on a raw message, 10 MB.
const maxRawSize = 10 << 20

// API versions a recorded message came through.
const (
	APIv1 = "v1"
	APIv2 = "v2"
)

// Tag is one SES message tag.
type Tag struct {
	Name  string
	Value string
}

// Request is the authentication of one request that reached a handler
// (faults answered before authentication are not recorded here).
type Request struct {
	Method        string
	Path          string
	Action        string // v1 Action, or the v2 operation path
	AccessKeyID   string
	Date          string // the YYYYMMDD of the credential scope
	Region        string
	Service       string
	SignedHeaders []string
	SessionToken  string // X-Amz-Security-Token, when sent
	AmzDate       string // X-Amz-Date
	// Authorized is true when the signature was verified with a known key.
	Authorized bool
}

// Message is one accepted send request, with its raw MIME decoded.
type Message struct {
	ID  string
	API string // APIv1 or APIv2
	// AccessKeyID signed the request that sent the message.
	AccessKeyID string
	// Source is the v1 Source or the v2 FromEmailAddress.
	Source string
	// Destinations are the envelope recipients the request named (v1
	// Destinations.member.N; v2 To, Cc and Bcc addresses in that order).
	Destinations []string
	// V2To, V2Cc and V2Bcc hold the v2 Destination lists as sent.
	V2To, V2Cc, V2Bcc []string
	ConfigurationSet  string
	Tags              []Tag
	Raw               []byte
	Parsed            *ParsedMessage
}

type credential struct {
	secret string
	token  string
}

// Server is a running fake of SES v1 and v2. Its zero value is not usable;
// call New.
type Server struct {
	// The embedded server's URL is the base endpoint to give the SDK
	// (BaseEndpoint) in place of https://email.<region>.amazonaws.com.
	*faults.Server
	// Region is the only region the fake accepts in a credential scope.
	Region string

	signer *v4.Signer

	ids *identities // SES v2 email identities (identities.go)

	mu       sync.Mutex
	keys     map[string]credential
	messages []Message
	requests []Request
	sent     int
}

// New starts a fake for region that accepts the given access key id and
// secret (with no session token).
func New(region, accessKeyID, secretKey string) *Server {
	s := &Server{
		Region: region,
		signer: v4.NewSigner(),
		keys:   map[string]credential{},
	}
	if accessKeyID != "" {
		s.keys[accessKeyID] = credential{secret: secretKey}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /{$}", s.handleQuery)
	mux.HandleFunc("POST /v2/email/outbound-emails", s.handleV2Send)
	mux.HandleFunc("GET /v2/email/account", s.handleV2Account)
	s.registerIdentityRoutes(mux)
	s.Server = faults.NewServer(mux)
	return s
}

// AddKey makes the fake accept another access key id. A non-empty
// sessionToken must then come with it as X-Amz-Security-Token, as with
// temporary (instance role) credentials.
func (s *Server) AddKey(accessKeyID, secretKey, sessionToken string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys[accessKeyID] = credential{secret: secretKey, token: sessionToken}
}

// Messages returns a copy of every accepted message, oldest first.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.messages...)
}

// Requests returns the authentication details of every request that
// reached a handler, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// RequestCount returns how many requests reached the fake, those answered
// by an injected fault or refused before authentication included.
func (s *Server) RequestCount() int { return s.Server.Requests() }

// FailNext makes the next n requests, whatever their operation, fail with
// the HTTP status and AWS error code (e.g. 400 "Throttling", 400
// "MessageRejected", 403 "InvalidClientTokenId", 503 "ServiceUnavailable"),
// in the error shape of the API the request used.
func (s *Server) FailNext(n, status int, code, message string) {
	if message == "" {
		message = fmt.Sprintf("simulated %s", code)
	}
	s.Server.FailNextWith(n, func(w http.ResponseWriter, r *http.Request) {
		writeError(w, isV2(r), status, code, message)
	})
}

func isV2(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/v2/") }

// writeError answers an error in the shape of the API: the v1 XML
// <ErrorResponse> or the v2 X-Amzn-ErrorType header with a JSON body.
func writeError(w http.ResponseWriter, v2 bool, status int, code, message string) {
	if v2 {
		w.Header().Set("X-Amzn-ErrorType", code)
		writeJSON(w, status, map[string]string{"message": message})
		return
	}
	typ := "Sender"
	if status >= 500 {
		typ = "Receiver"
	}
	var body struct {
		XMLName   xml.Name `xml:"ErrorResponse"`
		XMLNS     string   `xml:"xmlns,attr"`
		Type      string   `xml:"Error>Type"`
		Code      string   `xml:"Error>Code"`
		Message   string   `xml:"Error>Message"`
		Detail    string   `xml:"Error>Detail"`
		RequestID string   `xml:"RequestId"`
	}
	body.XMLNS, body.Type, body.Code, body.Message, body.RequestID = XMLNamespace, typ, code, message, newID()
	writeXML(w, status, &body)
}

func writeXML(w http.ResponseWriter, status int, v any) {
	b, err := xml.Marshal(v)
	write(w, status, "text/xml", xml.Header, b, err)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	write(w, status, "application/json", "", b, err)
}

// write answers status with the body b (after prefix) of contentType and
// a request id, as SES does; a body that could not be made (err) is a
// 500 saying why.
func write(w http.ResponseWriter, status int, contentType, prefix string, b []byte, err error) {
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("X-Amzn-RequestId", newID())
	w.WriteHeader(status)
	_, _ = io.WriteString(w, prefix)
	_, _ = w.Write(b)
}

// authFailure is an authentication error: its status, AWS code and message.
type authFailure struct {
	status  int
	code    string
	message string
}

// authenticate reads the body and checks the SigV4 signature. It records
// the request and returns the body, the request record, or a failure.
func (s *Server) authenticate(r *http.Request, action string) ([]byte, Request, *authFailure) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRawSize*2))
	rec := Request{Method: r.Method, Path: r.URL.Path, Action: action,
		SessionToken: r.Header.Get("X-Amz-Security-Token"), AmzDate: r.Header.Get("X-Amz-Date")}
	if err != nil {
		return nil, rec, &authFailure{http.StatusBadRequest, "InvalidParameterValue", "unreadable body"}
	}
	fail := s.checkSignature(r, body, &rec)
	rec.Authorized = fail == nil
	s.mu.Lock()
	s.requests = append(s.requests, rec)
	s.mu.Unlock()
	return body, rec, fail
}

func (s *Server) checkSignature(r *http.Request, body []byte, rec *Request) *authFailure {
	v2 := isV2(r)
	missing := "MissingAuthenticationToken"
	unknownKey := "InvalidClientTokenId"
	if v2 {
		missing, unknownKey = "MissingAuthenticationTokenException", "UnrecognizedClientException"
	}
	auth := r.Header.Get("Authorization")
	const algo = "AWS4-HMAC-SHA256 "
	if !strings.HasPrefix(auth, algo) {
		return &authFailure{http.StatusForbidden, missing, "Request is missing Authentication Token"}
	}
	params := map[string]string{}
	for _, p := range strings.Split(strings.TrimPrefix(auth, algo), ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		params[k] = v
	}
	scope := strings.Split(params["Credential"], "/")
	if len(scope) != 5 || scope[4] != "aws4_request" || params["SignedHeaders"] == "" || len(params["Signature"]) != 64 {
		return &authFailure{http.StatusBadRequest, "IncompleteSignature", "Authorization header requires Credential, SignedHeaders and Signature."}
	}
	rec.AccessKeyID, rec.Date, rec.Region, rec.Service = scope[0], scope[1], scope[2], scope[3]
	rec.SignedHeaders = strings.Split(params["SignedHeaders"], ";")
	amzDate, err := time.Parse("20060102T150405Z", rec.AmzDate)
	if err != nil {
		return &authFailure{http.StatusBadRequest, "IncompleteSignature", "X-Amz-Date header is missing or malformed."}
	}
	if amzDate.Format("20060102") != rec.Date {
		return &authFailure{http.StatusForbidden, "SignatureDoesNotMatch", "Date in Credential scope does not match YYYYMMDD from X-Amz-Date."}
	}
	if d := time.Since(amzDate); d > 15*time.Minute || d < -15*time.Minute {
		return &authFailure{http.StatusBadRequest, "RequestExpired", "Request has expired."}
	}
	if rec.Service != "ses" {
		return &authFailure{http.StatusForbidden, "SignatureDoesNotMatch", fmt.Sprintf("Credential should be scoped to correct service: 'ses'. (got %q)", rec.Service)}
	}
	if rec.Region != s.Region {
		return &authFailure{http.StatusForbidden, "SignatureDoesNotMatch", fmt.Sprintf("Credential should be scoped to a valid region, not '%s'.", rec.Region)}
	}
	s.mu.Lock()
	cred, known := s.keys[rec.AccessKeyID]
	s.mu.Unlock()
	if !known {
		return &authFailure{http.StatusForbidden, unknownKey, "The security token included in the request is invalid."}
	}
	if cred.token != "" && rec.SessionToken != cred.token {
		return &authFailure{http.StatusForbidden, unknownKey, "The security token included in the request is invalid."}
	}
	want, err := s.resign(r, body, rec, cred, amzDate)
	if err != nil {
		return &authFailure{http.StatusInternalServerError, "InternalFailure", err.Error()}
	}
	if want != params["Signature"] {
		return &authFailure{http.StatusForbidden, "SignatureDoesNotMatch",
			"The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method."}
	}
	return nil
}

// resign signs a copy of the request carrying only its signed headers with
// the known secret and returns the resulting signature.
func (s *Server) resign(r *http.Request, body []byte, rec *Request, cred credential, at time.Time) (string, error) {
	u := &url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery}
	req, err := http.NewRequest(r.Method, u.String(), nil)
	if err != nil {
		return "", fmt.Errorf("rebuild request: %w", err)
	}
	req.Host = r.Host
	for _, h := range rec.SignedHeaders {
		switch h {
		case "host":
		case "content-length":
			req.ContentLength = int64(len(body))
		default:
			req.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: rec.AccessKeyID, SecretAccessKey: cred.secret, SessionToken: rec.SessionToken}
	if err := s.signer.SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), rec.Service, rec.Region, at); err != nil {
		return "", fmt.Errorf("sign request: %w", err)
	}
	_, sig, _ := strings.Cut(req.Header.Get("Authorization"), "Signature=")
	return sig, nil
}

// handleQuery serves the v1 Query API.
func (s *Server) handleQuery(w http.ResponseWriter, r *http.Request) {
	body, rec, fail := s.authenticate(r, "")
	if fail != nil {
		writeError(w, false, fail.status, fail.code, fail.message)
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
		writeError(w, false, http.StatusBadRequest, "InvalidParameterValue", "Content-Type must be application/x-www-form-urlencoded.")
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		writeError(w, false, http.StatusBadRequest, "MalformedQueryString", "The query string is malformed.")
		return
	}
	s.mu.Lock()
	s.requests[len(s.requests)-1].Action = form.Get("Action")
	s.mu.Unlock()
	if v := form.Get("Version"); v != "2010-12-01" {
		writeError(w, false, http.StatusBadRequest, "InvalidAction", fmt.Sprintf("Could not find operation %s for version %s", form.Get("Action"), v))
		return
	}
	switch form.Get("Action") {
	case "SendRawEmail":
		s.sendRawV1(w, form, rec)
	case "GetSendQuota":
		s.mu.Lock()
		sent := s.sent
		s.mu.Unlock()
		var out struct {
			XMLName   xml.Name `xml:"GetSendQuotaResponse"`
			XMLNS     string   `xml:"xmlns,attr"`
			Sent      string   `xml:"GetSendQuotaResult>SentLast24Hours"`
			Max       string   `xml:"GetSendQuotaResult>Max24HourSend"`
			Rate      string   `xml:"GetSendQuotaResult>MaxSendRate"`
			RequestID string   `xml:"ResponseMetadata>RequestId"`
		}
		out.XMLNS, out.Sent, out.Max, out.Rate, out.RequestID = XMLNamespace, strconv.Itoa(sent)+".0", "200.0", "1.0", newID()
		writeXML(w, http.StatusOK, &out)
	case "GetAccountSendingEnabled":
		var out struct {
			XMLName   xml.Name `xml:"GetAccountSendingEnabledResponse"`
			XMLNS     string   `xml:"xmlns,attr"`
			Enabled   bool     `xml:"GetAccountSendingEnabledResult>Enabled"`
			RequestID string   `xml:"ResponseMetadata>RequestId"`
		}
		out.XMLNS, out.Enabled, out.RequestID = XMLNamespace, true, newID()
		writeXML(w, http.StatusOK, &out)
	default:
		writeError(w, false, http.StatusBadRequest, "InvalidAction", fmt.Sprintf("Could not find operation %s for version 2010-12-01", form.Get("Action")))
	}
}

// members returns the values of prefix.member.1, prefix.member.2, ... in order.
func members(form url.Values, prefix string) []string {
	var out []string
	for i := 1; ; i++ {
		v, ok := form[fmt.Sprintf("%s.member.%d", prefix, i)]
		if !ok {
			return out
		}
		out = append(out, v[0])
	}
}

func tagMembers(form url.Values) []Tag {
	var out []Tag
	for i := 1; ; i++ {
		name, ok := form[fmt.Sprintf("Tags.member.%d.Name", i)]
		if !ok {
			return out
		}
		out = append(out, Tag{Name: name[0], Value: form.Get(fmt.Sprintf("Tags.member.%d.Value", i))})
	}
}

func (s *Server) sendRawV1(w http.ResponseWriter, form url.Values, rec Request) {
	data := form.Get("RawMessage.Data")
	if data == "" {
		writeError(w, false, http.StatusBadRequest, "ValidationError", "1 validation error detected: Value null at 'rawMessage.data' failed to satisfy constraint: Member must not be null")
		return
	}
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		writeError(w, false, http.StatusBadRequest, "InvalidParameterValue", "RawMessage.Data is not valid base64.")
		return
	}
	m := Message{API: APIv1, AccessKeyID: rec.AccessKeyID, Source: form.Get("Source"),
		Destinations: members(form, "Destinations"), ConfigurationSet: form.Get("ConfigurationSetName"),
		Tags: tagMembers(form), Raw: raw}
	if code, problem := s.accept(&m); problem != "" {
		writeError(w, false, http.StatusBadRequest, code, problem)
		return
	}
	var out struct {
		XMLName   xml.Name `xml:"SendRawEmailResponse"`
		XMLNS     string   `xml:"xmlns,attr"`
		MessageID string   `xml:"SendRawEmailResult>MessageId"`
		RequestID string   `xml:"ResponseMetadata>RequestId"`
	}
	out.XMLNS, out.MessageID, out.RequestID = XMLNamespace, m.ID, newID()
	writeXML(w, http.StatusOK, &out)
}

// MaxRecipients is the most destinations (to, cc and bcc) of one
// message SES takes; the fake refuses a send over it.
const MaxRecipients = 50

// accept validates a send as SES does, parses its MIME and records it. It
// returns an AWS error code and message when the message is refused.
func (s *Server) accept(m *Message) (string, string) {
	if len(m.Raw) > maxRawSize {
		return "InvalidParameterValue", "Message length is more than 10485760 bytes long."
	}
	p, err := ParseMIME(m.Raw)
	if err != nil {
		return "InvalidParameterValue", "Illegal content: " + err.Error()
	}
	m.Parsed = p
	if m.Source == "" {
		if p.From.Email == "" {
			return "InvalidParameterValue", "Missing required header 'From'."
		}
		m.Source = p.From.Email
	}
	if len(m.Destinations) == 0 {
		for _, a := range append(append(append([]Address{}, p.To...), p.Cc...), p.Bcc...) {
			m.Destinations = append(m.Destinations, a.Email)
		}
	}
	if len(m.Destinations) == 0 {
		return "InvalidParameterValue", "Missing final '@domain'"
	}
	if len(m.Destinations) > MaxRecipients {
		return "InvalidParameterValue", fmt.Sprintf("Recipient count exceeds %d.", MaxRecipients)
	}
	for _, t := range m.Tags {
		if !validTagPart(t.Name) || !validTagPart(t.Value) {
			return "InvalidParameterValue", fmt.Sprintf("Invalid tag %q=%q: names and values may contain only ASCII letters, digits, '_' and '-'.", t.Name, t.Value)
		}
	}
	m.ID = newMessageID()
	s.mu.Lock()
	s.messages = append(s.messages, *m)
	s.sent++
	s.mu.Unlock()
	return "", ""
}

func validTagPart(v string) bool {
	if v == "" || len(v) > 256 {
		return false
	}
	for _, c := range v {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// v2SendRequest is the SESv2 SendEmail body (the parts the fake reads).
type v2SendRequest struct {
	FromEmailAddress string
	Destination      *struct {
		ToAddresses  []string
		CcAddresses  []string
		BccAddresses []string
	}
	Content *struct {
		Raw *struct {
			Data []byte // base64 in JSON, decoded by encoding/json
		}
		Simple   json.RawMessage
		Template json.RawMessage
	}
	ConfigurationSetName string
	EmailTags            []Tag
}

func (s *Server) handleV2Send(w http.ResponseWriter, r *http.Request) {
	body, rec, fail := s.authenticate(r, "SendEmail")
	if fail != nil {
		writeError(w, true, fail.status, fail.code, fail.message)
		return
	}
	var in v2SendRequest
	if err := json.Unmarshal(body, &in); err != nil {
		writeError(w, true, http.StatusBadRequest, "BadRequestException", "Malformed request body: "+err.Error())
		return
	}
	if in.Content == nil {
		writeError(w, true, http.StatusBadRequest, "BadRequestException", "Content is required.")
		return
	}
	if in.Content.Raw == nil {
		writeError(w, true, http.StatusBadRequest, "BadRequestException", "This fake accepts only Content.Raw.")
		return
	}
	m := Message{API: APIv2, AccessKeyID: rec.AccessKeyID, Source: in.FromEmailAddress,
		ConfigurationSet: in.ConfigurationSetName, Tags: in.EmailTags, Raw: in.Content.Raw.Data}
	if d := in.Destination; d != nil {
		m.V2To, m.V2Cc, m.V2Bcc = d.ToAddresses, d.CcAddresses, d.BccAddresses
		m.Destinations = append(append(append(m.Destinations, d.ToAddresses...), d.CcAddresses...), d.BccAddresses...)
	}
	if code, problem := s.accept(&m); problem != "" {
		if code == "InvalidParameterValue" {
			code = "BadRequestException"
		}
		writeError(w, true, http.StatusBadRequest, code, problem)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"MessageId": m.ID})
}

func (s *Server) handleV2Account(w http.ResponseWriter, r *http.Request) {
	if _, _, fail := s.authenticate(r, "GetAccount"); fail != nil {
		writeError(w, true, fail.status, fail.code, fail.message)
		return
	}
	s.mu.Lock()
	sent := s.sent
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{
		"DedicatedIpAutoWarmupEnabled": false,
		"EnforcementStatus":            "HEALTHY",
		"ProductionAccessEnabled":      false,
		"SendingEnabled":               true,
		"SendQuota": map[string]any{
			"Max24HourSend":   200.0,
			"MaxSendRate":     1.0,
			"SentLast24Hours": float64(sent),
		},
	})
}

// TagMap returns a message's tags as name → value, for assertions.
func (m Message) TagMap() map[string]string {
	out := make(map[string]string, len(m.Tags))
	for _, t := range m.Tags {
		out[t.Name] = t.Value
	}
	return out
}

// SortedDestinations returns the destinations sorted, for assertions that
// ignore order.
func (m Message) SortedDestinations() []string {
	out := append([]string(nil), m.Destinations...)
	sort.Strings(out)
	return out
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// newMessageID returns an id shaped like SES's: 0100 + hex + -...-000000.
func newMessageID() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return "0100" + h[:12] + "-" + h[12:20] + "-" + h[20:24] + "-" + h[24:28] + "-" + h[28:40] + "-000000"
}
