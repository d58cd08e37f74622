package pro

import (
	"context"
	"net/http"

	api "github.com/mailsvc/mailsvc/adapters/http"
	"github.com/mailsvc/mailsvc/app/oauth"
	"github.com/mailsvc/mailsvc/core"
)

// OneClickService is what the one-click OAuth routes need
// (app/oauth.OneClick).
type OneClickService interface {
	Authorize(ctx context.Context, in oauth.OneClickInput) (string, error)
	Callback(ctx context.Context, provider string, in oauth.CallbackInput) string
}

// OneClickFeature is the licensed feature of the one-click authorize
// routes.
const OneClickFeature = "connections.oneclick.save"

// maxCallbackForm bounds the form_post body of a callback.
const maxCallbackForm = 64 << 10

// registerOneClickRoutes registers the spec's "Pro: one-click OAuth"
// routes: per provider, authorize (manage_options and the feature
// connections.oneclick.save) and the public callback, as GET and as
// POST (Microsoft's response_mode=form_post). The callbacks are
// authenticated by their state, as the manual flow's are.
func (m *Module) registerOneClickRoutes(rt *api.Routes) {
	if m.OneClick == nil {
		return
	}
	for _, provider := range []string{core.ProviderGoogle, core.ProviderMicrosoft} {
		base := "/pro/oauth/" + provider + "/one-click"
		rt.Private("GET", base+"/authorize", m.RequireFeature(OneClickFeature, func(w http.ResponseWriter, r *http.Request) error {
			to, err := m.OneClick.Authorize(r.Context(), oauth.OneClickInput{
				User:           api.UserFrom(r.Context()),
				Provider:       provider,
				ConnectionID:   r.URL.Query().Get("connection_id"),
				RequestBaseURL: rt.BaseURL(r),
			})
			if err != nil {
				return err
			}
			w.Header().Set("Cache-Control", "no-store")
			http.Redirect(w, r, to, http.StatusFound)
			return nil
		}))
		callback := func(w http.ResponseWriter, r *http.Request) error {
			var in oauth.CallbackInput
			readable := true
			if r.Method == http.MethodPost {
				r.Body = http.MaxBytesReader(w, r.Body, maxCallbackForm)
				readable = r.ParseForm() == nil
			}
			// A form that cannot be read (malformed, too large) has no
			// state: the browser goes back to the admin page with the
			// error flag, as with any other bad callback.
			if readable {
				in.Code, in.State = r.FormValue("code"), r.FormValue("state")
				in.Error, in.ErrorDescription = r.FormValue("error"), r.FormValue("error_description")
			}
			rt.CompleteOAuth(w, r, m.OneClick, provider, in)
			return nil
		}
		rt.Public("GET", base+"/callback", callback)
		rt.Public("POST", base+"/callback", callback)
	}
}
