package apidriver

import (
	"context"
	"fmt"
	"net/http"

	"github.com/mailsvc/mailsvc/core"
)

// JSONTransport is what the transports of the JSON API drivers hold
// alike: the client of the provider's API and the sender override.
// JSONDriver.New builds it; a driver's transport embeds it.
type JSONTransport struct {
	Client JSONAPI
	Sender Sender
	// MaxMessageBytes is the provider's size cap of a message (its
	// bodies, headers and attachments, before any encoding); 0: none.
	MaxMessageBytes int
	// VerifyRead is the path of the authenticated GET that Verify makes
	// (JSONDriver.VerifyRead).
	VerifyRead string
}

// Verify implements core.Verifier with a GET of VerifyRead, an
// authenticated read that sends nothing (see JSONAPI.Verify). A
// transport without one fails for good, making no call.
func (t *JSONTransport) Verify(ctx context.Context) error {
	if t.VerifyRead == "" {
		return core.Permanent(fmt.Errorf("%s: verify: the driver names no credentials check", t.Client.Name))
	}
	return t.Client.Verify(ctx, http.MethodGet, t.VerifyRead, nil, nil)
}

// CheckSize fails a message over MaxMessageBytes for good, before any
// call: the provider would refuse it whatever the retry.
func (t *JSONTransport) CheckSize(msg *core.Message) error {
	if t.MaxMessageBytes <= 0 {
		return nil
	}
	if n := MessageSize(msg); n > t.MaxMessageBytes {
		return core.Permanent(fmt.Errorf("%s: send: the message is %d bytes, over the provider's %d-byte limit", t.Client.Name, n, t.MaxMessageBytes))
	}
	return nil
}

// Post is a driver's send call: msg refused for good over
// MaxMessageBytes (CheckSize), else body, the provider's request built
// of it, posted to path, a 2xx answer decoded into out (see
// JSONAPI.Call).
func (t *JSONTransport) Post(ctx context.Context, msg *core.Message, path string, body, out any) (*Response, error) {
	return t.PostWithHeader(ctx, msg, path, nil, body, out)
}

// PostWithHeader is Post with header's fields added to the request (an
// idempotency key, IdempotencyHeader).
func (t *JSONTransport) PostWithHeader(ctx context.Context, msg *core.Message, path string, header http.Header, body, out any) (*Response, error) {
	if err := t.CheckSize(msg); err != nil {
		return nil, err
	}
	return t.Client.Call(ctx, "send", http.MethodPost, path, header, body, out)
}

// MessageSize is the size of a message's content before any encoding:
// subject, bodies, headers and attachments.
func MessageSize(msg *core.Message) int {
	n := len(msg.Subject) + len(msg.Text) + len(msg.HTML)
	for _, h := range msg.Headers {
		n += len(h.Name) + len(h.Value)
	}
	for _, a := range msg.Attachments {
		n += len(a.Data)
	}
	return n
}

// BaseURL returns the API base URL the transport talks to.
func (t *JSONTransport) BaseURL() string { return t.Client.BaseURL }

// Each returns f of every address of list in the provider's own form,
// nil for none.
func Each[T any](list []core.Address, f func(core.Address) T) []T {
	if len(list) == 0 {
		return nil
	}
	out := make([]T, 0, len(list))
	for _, a := range list {
		out = append(out, f(a))
	}
	return out
}

// First returns f of the first address of list, nil for none: the one
// Reply-To of a provider that takes one.
func First[T any](list []core.Address, f func(core.Address) T) *T {
	if len(list) == 0 {
		return nil
	}
	v := f(list[0])
	return &v
}
