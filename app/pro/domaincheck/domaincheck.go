// Package domaincheck is the Pro add-on's domain check: the SPF, DKIM,
// DMARC and MX records of a sending domain, read from DNS and judged
// against the providers the site's active connections use, each with a
// verdict and a fix in words. DNS is behind the Resolver port;
// adapters/pro/dns implements it with github.com/miekg/dns.
package domaincheck

import (
	"context"
	"fmt"
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// Verdicts, from best to worst.
const (
	Pass = "pass"
	Warn = "warn"
	Fail = "fail"
)

// worse returns the worse of two verdicts.
func worse(a, b string) string {
	rank := map[string]int{Pass: 0, "": 0, Warn: 1, Fail: 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// MXRecord is one MX record.
type MXRecord struct {
	Preference uint16 `json:"preference"`
	Host       string `json:"host"`
}

// Resolver looks DNS records up. A name that does not exist or has no
// record of the type is no records and no error; an error means the
// answer is unknown (timeout, SERVFAIL, refused).
type Resolver interface {
	// TXT returns the TXT records of name, each with its strings joined.
	TXT(ctx context.Context, name string) ([]string, error)
	// MX returns the MX records of name.
	MX(ctx context.Context, name string) ([]MXRecord, error)
	// CNAME returns the CNAME target of name (without the final dot), or
	// "" when name has none.
	CNAME(ctx context.Context, name string) (string, error)
}

// Connections lists the connections (app.Connections).
type Connections interface {
	// List returns a page of connections (limit 0: all), masked.
	List(ctx context.Context, offset, limit int) ([]*core.Connection, int, error)
}

// SESTokens returns the Easy DKIM tokens SES holds for a domain; ok is
// false when they are not known (sesid.Service.DomainTokens).
type SESTokens func(ctx context.Context, domain string) (tokens []string, ok bool)

// Service checks domains.
type Service struct {
	Resolver    Resolver
	Connections Connections
	// SESTokens, when set, gives the DKIM selectors of SES domains.
	SESTokens SESTokens
}

// Report is the outcome of a domain check.
type Report struct {
	Domain string `json:"domain"`
	// Verdict is the worst verdict of the sections.
	Verdict string `json:"verdict"`
	// Providers are the providers in use: those of the active connections.
	Providers []string     `json:"providers"`
	SPF       *SPFReport   `json:"spf"`
	DKIM      *DKIMReport  `json:"dkim"`
	DMARC     *DMARCReport `json:"dmarc"`
	MX        *MXReport    `json:"mx"`
}

// Check reads and judges the records of domain. An invalid domain is 422
// on the field "domain".
func (s *Service) Check(ctx context.Context, domain string) (*Report, error) {
	d, ok := NormalizeDomain(domain)
	if !ok {
		if strings.TrimSpace(domain) == "" {
			return nil, core.InvalidField("domain", "This field is required: a domain name such as example.com.")
		}
		return nil, core.InvalidField("domain", "Must be a domain name such as example.com.")
	}
	providers, err := s.providersInUse(ctx)
	if err != nil {
		return nil, err
	}
	r := &Report{Domain: d, Verdict: Pass, Providers: providerSlugs(providers)}
	r.SPF = checkSPF(ctx, s.Resolver, d, providers)
	r.DKIM = s.checkDKIM(ctx, d, providers)
	r.DMARC = checkDMARC(ctx, s.Resolver, d)
	r.MX = checkMX(ctx, s.Resolver, d)
	for _, v := range []string{r.SPF.Verdict, r.DKIM.Verdict, r.DMARC.Verdict, r.MX.Verdict} {
		r.Verdict = worse(r.Verdict, v)
	}
	return r, nil
}

// providersInUse returns the providers of the active connections, in the
// order of Providers, each once.
func (s *Service) providersInUse(ctx context.Context) ([]Provider, error) {
	if s.Connections == nil {
		return nil, nil
	}
	conns, _, err := s.Connections.List(ctx, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("domain check: list connections: %w", err)
	}
	seen := map[string]bool{}
	for _, c := range conns {
		if !c.IsActive {
			continue
		}
		if p, ok := ProviderOf(c); ok {
			seen[p.Slug] = true
		}
	}
	var out []Provider
	for _, p := range Providers {
		if seen[p.Slug] {
			out = append(out, p)
		}
	}
	return out, nil
}

func providerSlugs(ps []Provider) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.Slug)
	}
	return out
}

// NormalizeDomain checks a domain name given by a user and returns it
// lower-cased without a final dot: at least two labels, each 1 to 63
// letters, digits or hyphens not starting or ending with a hyphen, the
// last not all digits, 253 characters at most.
func NormalizeDomain(s string) (string, bool) {
	d := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(s), "."))
	if d == "" || len(d) > 253 {
		return "", false
	}
	labels := strings.Split(d, ".")
	if len(labels) < 2 {
		return "", false
	}
	for _, l := range labels {
		if !validLabel(l) {
			return "", false
		}
	}
	tld := labels[len(labels)-1]
	if strings.Trim(tld, "0123456789") == "" {
		return "", false
	}
	return d, true
}

func validLabel(l string) bool {
	if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
		return false
	}
	for _, c := range l {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
