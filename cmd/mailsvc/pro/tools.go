package pro

import (
	"fmt"
	"net/http"
	"os"
	"time"

	httppro "github.com/mailsvc/mailsvc/adapters/http/pro"
	"github.com/mailsvc/mailsvc/adapters/pro/dns"
	adaptersesid "github.com/mailsvc/mailsvc/adapters/pro/sesid"
	"github.com/mailsvc/mailsvc/app/pro/domaincheck"
	"github.com/mailsvc/mailsvc/app/pro/sesid"
	"github.com/mailsvc/mailsvc/cmd/mailsvc/cli"
)

// sesTimeout bounds one call of the SES identity API.
const sesTimeout = 30 * time.Second

// joinIdentityTools gives m the SES identity management and the domain
// check: sesv2 with the connections' effective settings, and DNS through
// MAILSVC_DNS_RESOLVER (else the system's resolver).
func joinIdentityTools(env *cli.ServeEnv, m *httppro.Module) error {
	hc := &http.Client{Timeout: sesTimeout}
	if env.HTTPClient != nil {
		hc.Transport = env.HTTPClient.Transport
	}
	ses := &sesid.Service{Connections: env.Connections, Stored: env.DB.Connections(), Dial: adaptersesid.Dialer(hc),
		Pins: env.Constants.Pins, LookupEnv: os.LookupEnv}
	m.SES = ses

	server := env.Constants.String("MAILSVC_DNS_RESOLVER")
	resolver, err := dns.New(server)
	if err != nil && server != "" {
		return fmt.Errorf("MAILSVC_DNS_RESOLVER: %w", err)
	}
	if err != nil {
		env.Logger.Warn("the domain check has no DNS resolver: set MAILSVC_DNS_RESOLVER", "error", err)
		resolver = &dns.Resolver{Server: "127.0.0.1:53", Timeout: dns.DefaultTimeout}
	}
	m.DomainCheck = &domaincheck.Service{Resolver: resolver, Connections: env.Connections, SESTokens: ses.DomainTokens}
	return nil
}
