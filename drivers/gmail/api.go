package gmail

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/mail"
	"strings"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
	"github.com/mailsvc/mailsvc/drivers/mime"
	"github.com/mailsvc/mailsvc/drivers/oauthdriver"
)

// UploadThreshold is the size of the raw message above which the
// transport sends through the media upload endpoint instead of the JSON
// one, whose request size Google limits.
const UploadThreshold = 5 << 20

// Transport sends through the Gmail API for one connection. It is safe for
// concurrent use.
type Transport struct {
	connID  int64
	tokens  core.TokenSource
	baseURL string
	sender  apidriver.Sender
	http    *http.Client
}

func newAPI(conn *core.Connection, env core.DriverEnv) *Transport {
	return &Transport{
		connID:  conn.ID,
		tokens:  env.Tokens,
		baseURL: apidriver.BaseURL(conn.Settings, DefaultBaseURL),
		sender:  apidriver.SenderOf(conn.Settings),
		http:    apidriver.HTTPClient(env),
	}
}

// BaseURL returns the API base URL the transport talks to.
func (t *Transport) BaseURL() string { return t.baseURL }

// sent is the Message resource users.messages.send answers with.
type sent struct {
	ID       string   `json:"id"`
	ThreadID string   `json:"threadId"`
	LabelIDs []string `json:"labelIds"`
}

// Send implements core.Transport with users.messages.send.
func (t *Transport) Send(ctx context.Context, msg *core.Message) (core.Receipt, error) {
	// Gmail takes the recipients from the headers: a part of a split
	// message shows its own.
	m := *msg.ForEnvelope()
	m.From = t.sender.Apply(msg.From)
	if mime.HeaderNamesOthers(&m) {
		// Gmail sends to the addresses of the header: a message whose
		// To or Cc names others than its envelope is built from its
		// fields, which name only the envelope.
		m.RawHeader = ""
	}
	raw, err := mime.Build(&m)
	if err != nil {
		return core.Receipt{}, core.Permanent(fmt.Errorf("gmail: build message: %w", err))
	}
	raw = withBcc(raw, m.Bcc)

	var url, ctype string
	var body []byte
	if len(raw) > UploadThreshold {
		url = t.baseURL + "/upload/gmail/v1/users/me/messages/send?uploadType=media"
		ctype, body = "message/rfc822", raw
	} else {
		url = t.baseURL + "/gmail/v1/users/me/messages/send"
		ctype = "application/json"
		body, _ = json.Marshal(map[string]string{"raw": base64.URLEncoding.EncodeToString(raw)})
	}
	var out sent
	var status int
	err = oauthdriver.WithToken(ctx, t.tokens, t.connID, func(token string) error {
		var answer []byte
		var cerr error
		status, answer, cerr = t.call(ctx, token, http.MethodPost, url, ctype, body)
		if cerr != nil {
			return apidriver.Scrub(cerr, token)
		}
		if err := json.Unmarshal(answer, &out); err != nil || out.ID == "" {
			return core.Permanent(fmt.Errorf("gmail: send: HTTP %d with an answer that names no message: %s", status, apidriver.Summary(answer)))
		}
		return nil
	})
	if err != nil {
		return core.Receipt{}, fmt.Errorf("gmail: send: %w", err)
	}
	return core.Receipt{MessageID: out.ID, Response: fmt.Sprintf("%d id=%s threadId=%s", status, out.ID, out.ThreadID)}, nil
}

// Verify implements core.Verifier with users.getProfile, an authenticated
// read that sends nothing. A token granted only the gmail.send scope may
// not read the profile: Google then answers 403 with the reason
// insufficientPermissions after accepting the token, which proves the
// credentials as well, so Verify counts it as success.
func (t *Transport) Verify(ctx context.Context) error {
	url := t.baseURL + "/gmail/v1/users/me/profile"
	err := oauthdriver.WithToken(ctx, t.tokens, t.connID, func(token string) error {
		_, _, err := t.call(ctx, token, http.MethodGet, url, "", nil)
		var ge *googleError
		if errors.As(err, &ge) && ge.status == http.StatusForbidden && ge.insufficientScope() {
			return nil
		}
		return apidriver.Scrub(err, token)
	})
	if err != nil {
		return fmt.Errorf("gmail: verify: %w", err)
	}
	return nil
}

// call makes one request with the bearer token and returns the status and
// body of a 2xx answer, or a classified error: network errors and 429/5xx
// temporary, 401 unauthorized (WithToken refreshes), other statuses
// permanent.
func (t *Transport) call(ctx context.Context, token, method, url, ctype string, body []byte) (int, []byte, error) {
	status, answer, err := oauthdriver.Request{Method: method, URL: url, Scheme: "Bearer", Token: token,
		ContentType: ctype, Body: body, Limit: 1 << 20}.Do(ctx, t.http)
	if err != nil || status >= 200 && status <= 299 {
		return status, answer, err
	}
	return status, answer, classify(status, answer)
}

// googleError is an error answer of a Google API:
// {"error":{"code":..,"message":..,"status":..,"errors":[{"reason":..}]}}.
type googleError struct {
	status  int
	Message string `json:"message"`
	Status  string `json:"status"`
	Errors  []struct {
		Reason  string `json:"reason"`
		Message string `json:"message"`
	} `json:"errors"`
	body string
}

func (e *googleError) Error() string {
	reasons := make([]string, 0, len(e.Errors))
	for _, r := range e.Errors {
		reasons = append(reasons, r.Reason)
	}
	if e.Message == "" {
		return fmt.Sprintf("Google answered HTTP %d: %s", e.status, e.body)
	}
	return fmt.Sprintf("Google answered HTTP %d %s (%s): %s", e.status, e.Status, strings.Join(reasons, ", "), e.Message)
}

func (e *googleError) hasReason(reasons ...string) bool {
	for _, r := range e.Errors {
		for _, want := range reasons {
			if r.Reason == want {
				return true
			}
		}
	}
	return false
}

// insufficientScope reports whether Google refused the call for the
// token's scopes (the token itself was accepted).
func (e *googleError) insufficientScope() bool {
	return e.hasReason("insufficientPermissions", "ACCESS_TOKEN_SCOPE_INSUFFICIENT") ||
		strings.Contains(e.Message, "insufficient authentication scopes")
}

// classify turns a non-2xx answer into a classified error. Google's rate
// limits come as 429 or as 403 with a rate-limit reason; both are
// temporary.
func classify(status int, body []byte) error {
	ge := &googleError{status: status, body: apidriver.Summary(body)}
	var wire struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &wire) == nil && len(wire.Error) > 0 {
		_ = json.Unmarshal(wire.Error, ge)
	}
	switch {
	case status == http.StatusUnauthorized:
		return oauthdriver.Unauthorized(core.Permanent(ge))
	case status == http.StatusForbidden && ge.hasReason("rateLimitExceeded", "userRateLimitExceeded", "dailyLimitExceeded", "quotaExceeded"):
		return core.Temporary(ge)
	case status == http.StatusTooManyRequests || status >= 500:
		return core.Temporary(ge)
	}
	return core.Permanent(ge)
}

// withBcc returns raw with a Bcc header naming bcc in front of its other
// headers (drivers/mime writes none; Gmail reads it for the recipients and
// removes it before delivery). The addresses are folded one per line.
func withBcc(raw []byte, bcc []core.Address) []byte {
	if len(bcc) == 0 {
		return raw
	}
	parts := make([]string, 0, len(bcc))
	for _, a := range bcc {
		parts = append(parts, (&mail.Address{Name: a.Name, Address: a.Email}).String())
	}
	header := "Bcc: " + strings.Join(parts, ",\r\n ") + "\r\n"
	return append([]byte(header), raw...)
}
