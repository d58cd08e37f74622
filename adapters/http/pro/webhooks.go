package pro

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/gorilla/mux"

	api "github.com/mailsvc/mailsvc/adapters/http"
	"github.com/mailsvc/mailsvc/app/pro/webhooks"
	"github.com/mailsvc/mailsvc/core"
)

// WebhookReceiver is what the public webhook route needs
// (app/pro/webhooks.Service).
type WebhookReceiver interface {
	Receive(ctx context.Context, provider string, req webhooks.Request) (*webhooks.Result, error)
}

// registerWebhookRoutes registers the public POST
// /pro/webhooks/{provider}: no authentication and no licence, every call
// verified by the secret in the provider's connections; GET for the
// providers that notify so (Elastic Email), and HEAD, answered 200 with
// nothing read, for those that check a URL so before they call it
// (Mandrill). None when m.Webhooks is nil.
func (m *Module) registerWebhookRoutes(rt *api.Routes) {
	if m.Webhooks == nil {
		return
	}
	receive := func(w http.ResponseWriter, r *http.Request) error {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, webhooks.MaxBody))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				return core.Errorf(core.EBADREQUEST, "The request body is larger than %d bytes.", webhooks.MaxBody)
			}
			return core.Errorf(core.EBADREQUEST, "The request body could not be read.")
		}
		res, err := m.Webhooks.Receive(r.Context(), mux.Vars(r)["provider"],
			webhooks.Request{Method: r.Method, Query: r.URL.Query(), Header: r.Header, Body: body})
		if err != nil {
			return err
		}
		writeJSON(w, res)
		return nil
	}
	rt.Public("POST", "/pro/webhooks/{provider}", receive)
	rt.Public("GET", "/pro/webhooks/{provider}", receive)
	rt.Public("HEAD", "/pro/webhooks/{provider}", func(w http.ResponseWriter, _ *http.Request) error {
		w.WriteHeader(http.StatusOK)
		return nil
	})
}
