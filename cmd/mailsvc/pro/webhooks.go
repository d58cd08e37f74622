package pro

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	httppro "github.com/mailsvc/mailsvc/adapters/http/pro"
	prostore "github.com/mailsvc/mailsvc/adapters/pro/store"
	"github.com/mailsvc/mailsvc/app/pro/suppression"
	"github.com/mailsvc/mailsvc/app/pro/webhooks"
	"github.com/mailsvc/mailsvc/cmd/mailsvc/cli"
)

// snsTimeout bounds one certificate download or subscription
// confirmation.
const snsTimeout = 15 * time.Second

// Test-only overrides of the SNS client (docs/pro.md): a CA bundle
// trusted instead of the system roots, and an address every SNS host is
// dialed at. Production leaves both unset.
const (
	envSNSCAFile   = "MAILSVC_SNS_CA_FILE"
	envSNSDialAddr = "MAILSVC_SNS_DIAL_ADDR"
)

// joinWebhooks gives m the provider webhook receiver, the suppression
// list routes and the log events route, and makes delivery check the
// suppression list before every queued send.
func joinWebhooks(env *cli.ServeEnv, m *httppro.Module) error {
	client, err := snsClient(env)
	if err != nil {
		return err
	}
	store := prostore.New(env.DB)
	list := &suppression.Service{Store: store.Suppressions()}
	env.Delivery.Suppressions = list
	m.Suppressions = list
	m.LogEvents = store.Events()
	m.Webhooks = &webhooks.Service{Connections: env.Connections, Store: store.Events(), Suppressions: list,
		SNS: &webhooks.SNSVerifier{Client: client}, Hooks: env.Hooks, HostHooks: env.HostHooks, Logger: env.Logger}
	return nil
}

// snsClient is the client of SNS certificate downloads and subscription
// confirmations (the receiver only lets it reach https
// sns.<region>.amazonaws.com URLs).
func snsClient(env *cli.ServeEnv) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if env.HTTPClient != nil {
		if t, ok := env.HTTPClient.Transport.(*http.Transport); ok {
			tr = t.Clone()
		}
	}
	if f := os.Getenv(envSNSCAFile); f != "" {
		pem, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", envSNSCAFile, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no PEM certificate in %s", envSNSCAFile, f)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		env.Logger.Warn("SNS certificates are checked against a test CA (" + envSNSCAFile + ")")
	}
	if addr := os.Getenv(envSNSDialAddr); addr != "" {
		tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{Timeout: snsTimeout}).DialContext(ctx, network, addr)
		}
		env.Logger.Warn("SNS hosts are dialed at a test address (" + envSNSDialAddr + ")")
	}
	return &http.Client{Timeout: snsTimeout, Transport: tr}, nil
}
