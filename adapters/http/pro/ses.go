package pro

import (
	"context"
	"net/http"

	api "github.com/mailsvc/mailsvc/adapters/http"
	"github.com/mailsvc/mailsvc/app/pro/sesid"
)

// FeatureSESIdentities is the licensed feature of the SES identity routes.
const FeatureSESIdentities = "connections.ses.identity_management"

// SESService is what the SES identity routes need (app/pro/sesid.Service).
type SESService interface {
	Identities(ctx context.Context, connectionID int64) ([]sesid.Identity, error)
	ValidSenders(ctx context.Context, connectionID int64) (*sesid.Senders, error)
	Act(ctx context.Context, connectionID int64, action, identity string) (*sesid.ActionResult, error)
	Stats(ctx context.Context, connectionID int64) (*sesid.Stats, error)
	CredentialSources(ctx context.Context, connectionID int64) (*sesid.CredentialSources, error)
}

// sesRequest is the body of every SES identity route.
type sesRequest struct {
	ConnectionID int64  `json:"connection_id"`
	Action       string `json:"action"`
	Identity     string `json:"identity"`
}

// registerSESRoutes registers the spec's "Pro: identity management for the
// ses driver" routes, behind the feature connections.ses.identity_management;
// none when m.SES is nil.
func (m *Module) registerSESRoutes(rt *api.Routes) {
	if m.SES == nil {
		return
	}
	route := func(path string, h func(r *http.Request, in sesRequest) (any, error)) {
		rt.Private("POST", path, m.RequireFeature(FeatureSESIdentities, func(w http.ResponseWriter, r *http.Request) error {
			var in sesRequest
			if err := rt.DecodeJSON(w, r, &in); err != nil {
				return err
			}
			out, err := h(r, in)
			if err != nil {
				return err
			}
			writeJSON(w, out)
			return nil
		}))
	}
	route("/pro/ses/identities", func(r *http.Request, in sesRequest) (any, error) {
		list, err := m.SES.Identities(r.Context(), in.ConnectionID)
		if err != nil {
			return nil, err
		}
		return map[string]any{"connection_id": in.ConnectionID, "identities": list}, nil
	})
	route("/pro/ses/valid-senders", func(r *http.Request, in sesRequest) (any, error) {
		return m.SES.ValidSenders(r.Context(), in.ConnectionID)
	})
	route("/pro/ses/identities/action", func(r *http.Request, in sesRequest) (any, error) {
		return m.SES.Act(r.Context(), in.ConnectionID, in.Action, in.Identity)
	})
	route("/pro/ses/stats", func(r *http.Request, in sesRequest) (any, error) {
		return m.SES.Stats(r.Context(), in.ConnectionID)
	})
	route("/pro/ses/credential-sources", func(r *http.Request, in sesRequest) (any, error) {
		return m.SES.CredentialSources(r.Context(), in.ConnectionID)
	})
}
