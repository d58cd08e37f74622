package wordpress

import (
	"context"
	"fmt"
)

// OAuthRedirectsOption is the option in which the bridge publishes the
// site's mail_svc_{provider}_oauth_redirect_uri filters (provider → URI).
const OAuthRedirectsOption = "mailsvc_oauth_redirect_uris"

// OAuthRedirects reads the redirect URIs that the site's PHP filters
// choose, as the bridge publishes them: the Go form of the spec's
// mail_svc_google_oauth_redirect_uri, mail_svc_microsoft_oauth_redirect_uri
// and mail_svc_zoho_oauth_redirect_uri filters.
type OAuthRedirects struct {
	Options OptionReader
}

// RedirectURI returns the URI a filter chose for provider, or "" when no
// filter overrides it (or the bridge has not run since one was added).
func (r *OAuthRedirects) RedirectURI(ctx context.Context, provider string) (string, error) {
	raw, found, err := r.Options.Option(ctx, OAuthRedirectsOption)
	if err != nil {
		return "", fmt.Errorf("read the %s option: %w", OAuthRedirectsOption, err)
	}
	if !found {
		return "", nil
	}
	arr, ok := MaybeUnserialize(raw).(*Array)
	if !ok {
		return "", nil
	}
	v, ok := arr.Get(provider)
	if !ok {
		return "", nil
	}
	uri, _ := v.(string)
	return uri, nil
}
