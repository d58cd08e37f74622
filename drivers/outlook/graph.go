package outlook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
	"github.com/mailsvc/mailsvc/drivers/oauthdriver"
)

// Graph limits the transport plans around.
const (
	// RequestLimit is the largest JSON request the transport sends; Graph
	// refuses requests over 4 MB.
	RequestLimit = 4_000_000
	// LargeAttachment is the size from which an attachment goes through
	// an upload session (Graph takes 3 MB to 150 MB that way).
	LargeAttachment = 3 << 20
	// ChunkSize is the size of each PUT to an upload URL: a multiple of
	// 320 KiB under Graph's 4 MB cap.
	ChunkSize = 10 * 320 << 10
)

// Graph sends through Microsoft Graph for one Outlook connection in API
// mode. It is safe for concurrent use.
type Graph struct {
	connID  int64
	tokens  core.TokenSource
	baseURL string
	mailbox string // "/me" or "/users/{id}", escaped
	sender  apidriver.Sender
	http    *http.Client
	logger  *slog.Logger
}

var (
	_ core.Transport = (*Graph)(nil)
	_ core.Verifier  = (*Graph)(nil)
)

// NewGraph builds the API mode transport of an Outlook connection.
func NewGraph(conn *core.Connection, env core.DriverEnv) (*Graph, error) {
	s := conn.Settings
	if msgs := validate(s); len(msgs) > 0 {
		return nil, core.Invalid(msgs)
	}
	mailbox := "/me"
	if u := strings.TrimSpace(s.String(KeyUserID)); u != "" {
		mailbox = "/users/" + url.PathEscape(u)
	}
	logger := env.Logger
	if logger == nil {
		logger = slog.Default()
	}
	return &Graph{
		connID:  conn.ID,
		tokens:  env.Tokens,
		baseURL: apidriver.BaseURL(s, DefaultBaseURL),
		mailbox: mailbox,
		sender:  apidriver.SenderOf(s),
		http:    apidriver.HTTPClient(env),
		logger:  logger,
	}, nil
}

// BaseURL returns the Graph base URL the transport talks to.
func (g *Graph) BaseURL() string { return g.baseURL }

// from returns the sender Graph is told: from_email (with from_name, or
// the message's name), or nil when from_email is empty so that the
// signed-in mailbox (or user_id's) sends.
func (g *Graph) from(msg *core.Message) *core.Address {
	if g.sender.Email == "" {
		return nil
	}
	a := g.sender.Apply(msg.From)
	return &a
}

// Send implements core.Transport: one sendMail request, or a draft with
// its large attachments uploaded in chunks and then sent. The receipt's
// MessageID is the draft's id, or the request-id of the sendMail answer
// (Graph gives no message id for sendMail).
func (g *Graph) Send(ctx context.Context, msg *core.Message) (core.Receipt, error) {
	if msg == nil {
		return core.Receipt{}, core.Permanent(core.Errorf(core.EINVALID, "No message to send."))
	}
	from := g.from(msg)
	check := *msg
	if from != nil {
		check.From = *from
	} else if check.From.Email == "" {
		check.From.Email = "mailbox@outlook.invalid" // the signed-in mailbox sends
	}
	if err := check.Validate(); err != nil {
		return core.Receipt{}, core.Permanent(err)
	}
	m, dropped := graphMessageOf(msg, from)
	if len(dropped) > 0 {
		g.logger.Debug("outlook: Graph takes only X- headers; these were left out", "connection_id", g.connID, "headers", dropped)
	}
	p, err := planOf(m, msg.Attachments, RequestLimit, LargeAttachment)
	if err != nil {
		return core.Receipt{}, core.Permanent(err)
	}
	var (
		rc   core.Receipt
		seen []string
	)
	err = oauthdriver.WithToken(ctx, g.tokens, g.connID, func(token string) error {
		seen = append(seen, token)
		var err error
		if p.sendMail != nil {
			rc, err = g.sendMail(ctx, token, p.sendMail)
		} else {
			rc, err = g.sendDraft(ctx, token, p)
		}
		return err
	})
	return rc, apidriver.Scrub(err, seen...)
}

// sendMail posts a whole message in one request.
func (g *Graph) sendMail(ctx context.Context, token string, body []byte) (core.Receipt, error) {
	h, err := g.call(ctx, http.MethodPost, g.mailbox+"/sendMail", token, body, nil)
	if err != nil {
		return core.Receipt{}, err
	}
	return core.Receipt{MessageID: h.Get("request-id"), Response: "202 Accepted"}, nil
}

// sendDraft creates a draft, completes its attachments and sends it. A
// draft left behind by a failure is deleted (best effort).
func (g *Graph) sendDraft(ctx context.Context, token string, p plan) (core.Receipt, error) {
	var draft struct {
		ID string `json:"id"`
	}
	if _, err := g.call(ctx, http.MethodPost, g.mailbox+"/messages", token, p.draft, &draft); err != nil {
		return core.Receipt{}, err
	}
	if draft.ID == "" {
		return core.Receipt{}, core.Temporary(errors.New("graph: the new draft has no id"))
	}
	msgPath := g.mailbox + "/messages/" + url.PathEscape(draft.ID)
	err := g.completeDraft(ctx, token, msgPath, p)
	if err == nil {
		_, err = g.call(ctx, http.MethodPost, msgPath+"/send", token, nil, nil)
	}
	if err != nil {
		g.deleteDraft(ctx, token, msgPath)
		return core.Receipt{}, err
	}
	return core.Receipt{MessageID: draft.ID, Response: "202 Accepted"}, nil
}

// completeDraft adds the attachments that did not fit in the draft's
// request: small ones one request each, large ones through upload
// sessions.
func (g *Graph) completeDraft(ctx context.Context, token, msgPath string, p plan) error {
	for _, a := range p.attach {
		body, err := json.Marshal(graphAttachmentOf(a))
		if err != nil {
			return core.Permanent(fmt.Errorf("encode attachment %s: %w", a.Filename, err))
		}
		if _, err := g.call(ctx, http.MethodPost, msgPath+"/attachments", token, body, nil); err != nil {
			return err
		}
	}
	for _, a := range p.upload {
		if err := g.upload(ctx, token, msgPath, a); err != nil {
			return err
		}
	}
	return nil
}

// deleteDraft drops a draft a failed send left behind, ignoring errors.
func (g *Graph) deleteDraft(ctx context.Context, token, msgPath string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := g.call(ctx, http.MethodDelete, msgPath, token, nil, nil); err != nil {
		g.logger.Debug("outlook: could not delete a draft after a failed send", "connection_id", g.connID, "error", err)
	}
}

// Verify implements core.Verifier: it obtains an access token and reads
// the mailbox's user (GET /me or /users/{id}), sending nothing. Graph
// checks the token before the permissions, so a 403 (the token lacks
// User.Read, which sending does not need) still proves the token and is
// accepted; 401 means refused, after one refresh.
func (g *Graph) Verify(ctx context.Context) error {
	var seen []string
	err := oauthdriver.WithToken(ctx, g.tokens, g.connID, func(token string) error {
		seen = append(seen, token)
		_, err := g.call(ctx, http.MethodGet, g.mailbox+"?$select=id", token, nil, nil)
		var se *statusError
		if errors.As(err, &se) && se.status == http.StatusForbidden {
			return nil
		}
		return err
	})
	return apidriver.Scrub(err, seen...)
}

// statusError records the HTTP status of a classified Graph failure.
type statusError struct {
	status int
	err    error
}

func (e *statusError) Error() string { return e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

// call sends one authenticated Graph request to path (under the base URL)
// with a JSON body (nil: none) and decodes a 2xx answer into out (nil:
// ignored). Failures are classified: network errors, 429 and 5xx
// temporary, 401 oauthdriver.Unauthorized, other statuses permanent.
func (g *Graph) call(ctx context.Context, method, path, token string, body []byte, out any) (http.Header, error) {
	op := method + " " + strings.SplitN(path, "?", 2)[0]
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, g.baseURL+path, rd)
	if err != nil {
		return nil, core.Permanent(fmt.Errorf("graph: %s: %w", op, err))
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	status, h, data, err := g.do(req)
	if err != nil {
		return nil, core.Temporary(fmt.Errorf("graph: %s: %w", op, err))
	}
	if status/100 != 2 {
		err := &statusError{status: status, err: fmt.Errorf("graph: %s: %w", op, core.HTTPStatusError(status, errorSummary(data)))}
		if status == http.StatusUnauthorized {
			return nil, oauthdriver.Unauthorized(err)
		}
		return nil, err
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return nil, core.Temporary(fmt.Errorf("graph: %s: decode answer: %w", op, err))
		}
	}
	return h, nil
}

// upload sends a large attachment through an upload session: it opens
// the session on the draft, then PUTs the bytes in chunks to its upload
// URL, which carries its own credential (no Authorization header).
func (g *Graph) upload(ctx context.Context, token, msgPath string, a core.Attachment) error {
	body, err := json.Marshal(uploadItemOf(a))
	if err != nil {
		return core.Permanent(fmt.Errorf("encode upload session for %s: %w", a.Filename, err))
	}
	var session struct {
		UploadURL string `json:"uploadUrl"`
	}
	if _, err := g.call(ctx, http.MethodPost, msgPath+"/attachments/createUploadSession", token, body, &session); err != nil {
		return err
	}
	if session.UploadURL == "" {
		return core.Temporary(fmt.Errorf("graph: upload session for %s has no upload URL", a.Filename))
	}
	total := len(a.Data)
	for first := 0; first < total; first += ChunkSize {
		last := min(first+ChunkSize, total) - 1
		rng := fmt.Sprintf("bytes %d-%d/%d", first, last, total)
		op := fmt.Sprintf("upload %s %s", a.Filename, rng)
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, session.UploadURL, bytes.NewReader(a.Data[first:last+1]))
		if err != nil {
			return core.Permanent(fmt.Errorf("graph: %s: bad upload URL", op))
		}
		req.Header.Set("Content-Type", "application/octet-stream")
		req.Header.Set("Content-Range", rng)
		status, _, data, err := g.do(req)
		if err != nil {
			return apidriver.Scrub(core.Temporary(fmt.Errorf("graph: %s: %w", op, err)), session.UploadURL)
		}
		if status/100 != 2 {
			return core.HTTPStatusError(status, op+": "+errorSummary(data))
		}
	}
	return nil
}

// do runs req with the host's client and reads the answer (up to 1 MB).
// A transport error comes back without the request URL, which may hold
// an upload session's credential.
func (g *Graph) do(req *http.Request) (int, http.Header, []byte, error) {
	resp, err := g.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, nil, nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, nil, nil, fmt.Errorf("read answer: %w", err)
	}
	return resp.StatusCode, resp.Header, data, nil
}

// errorSummary renders Graph's error envelope as "code: message", or the
// shortened body when it is not one.
func errorSummary(data []byte) string {
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &e) == nil && e.Error.Code != "" {
		return apidriver.Summary(e.Error.Code + ": " + e.Error.Message)
	}
	return apidriver.Summary(data)
}
