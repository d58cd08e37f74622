// Package dns is mailsvc's DNS client: TXT, MX and CNAME lookups through
// one recursive resolver with github.com/miekg/dns, for the Pro domain
// check. The resolver is MAILSVC_DNS_RESOLVER (host:port), else the first
// nameserver of /etc/resolv.conf.
package dns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/mailsvc/mailsvc/app/pro/domaincheck"
)

// DefaultTimeout bounds one query, retries over TCP included.
const DefaultTimeout = 5 * time.Second

// ResolvConf is where the system's resolver is read from.
const ResolvConf = "/etc/resolv.conf"

// Resolver queries one DNS server. It implements domaincheck.Resolver and
// is safe for concurrent use.
type Resolver struct {
	// Server is the resolver's host:port.
	Server  string
	Timeout time.Duration
}

var _ domaincheck.Resolver = (*Resolver)(nil)

// New returns a Resolver for server (host or host:port; port 53 when
// none is given), or for the system's first resolver when server is "".
func New(server string) (*Resolver, error) {
	if server == "" {
		s, err := SystemServer(ResolvConf)
		if err != nil {
			return nil, err
		}
		server = s
	}
	addr, err := normalizeServer(server)
	if err != nil {
		return nil, err
	}
	return &Resolver{Server: addr, Timeout: DefaultTimeout}, nil
}

// SystemServer returns the first nameserver of a resolv.conf file as
// host:port.
func SystemServer(path string) (string, error) {
	cfg, err := mdns.ClientConfigFromFile(path)
	if err != nil {
		return "", fmt.Errorf("read the system resolver from %s: %w", path, err)
	}
	if len(cfg.Servers) == 0 {
		return "", fmt.Errorf("%s lists no nameserver", path)
	}
	return net.JoinHostPort(cfg.Servers[0], cfg.Port), nil
}

func normalizeServer(s string) (string, error) {
	s = strings.TrimSpace(s)
	if host, port, err := net.SplitHostPort(s); err == nil {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || host == "" || strings.ContainsAny(host, " /") {
			return "", fmt.Errorf("DNS resolver %q is not host:port", s)
		}
		return s, nil
	}
	if ip := net.ParseIP(strings.Trim(s, "[]")); ip != nil {
		return net.JoinHostPort(ip.String(), "53"), nil
	}
	if s != "" && !strings.ContainsAny(s, " /:") {
		return net.JoinHostPort(s, "53"), nil
	}
	return "", fmt.Errorf("DNS resolver %q is not host:port", s)
}

// ErrServer is a resolver that answered with a failure (SERVFAIL,
// REFUSED, ...).
var ErrServer = errors.New("the DNS server answered with a failure")

// query asks one question; NXDOMAIN is an empty answer.
func (r *Resolver) query(ctx context.Context, name string, qtype uint16) ([]mdns.RR, error) {
	m := new(mdns.Msg)
	m.SetQuestion(mdns.Fqdn(name), qtype)
	m.RecursionDesired = true
	m.SetEdns0(4096, false)
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := &mdns.Client{Net: "udp", Timeout: timeout}
	in, _, err := c.ExchangeContext(ctx, m, r.Server)
	if err == nil && in.Truncated {
		c.Net = "tcp"
		in, _, err = c.ExchangeContext(ctx, m, r.Server)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", mdns.TypeToString[qtype], name, err)
	}
	switch in.Rcode {
	case mdns.RcodeSuccess, mdns.RcodeNameError:
		return in.Answer, nil
	}
	return nil, fmt.Errorf("%s %s: %w (%s)", mdns.TypeToString[qtype], name, ErrServer, mdns.RcodeToString[in.Rcode])
}

// TXT implements domaincheck.Resolver: each record's strings joined.
func (r *Resolver) TXT(ctx context.Context, name string) ([]string, error) {
	rrs, err := r.query(ctx, name, mdns.TypeTXT)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, rr := range rrs {
		if t, ok := rr.(*mdns.TXT); ok {
			out = append(out, strings.Join(t.Txt, ""))
		}
	}
	return out, nil
}

// MX implements domaincheck.Resolver.
func (r *Resolver) MX(ctx context.Context, name string) ([]domaincheck.MXRecord, error) {
	rrs, err := r.query(ctx, name, mdns.TypeMX)
	if err != nil {
		return nil, err
	}
	var out []domaincheck.MXRecord
	for _, rr := range rrs {
		if mx, ok := rr.(*mdns.MX); ok {
			host := strings.TrimSuffix(mx.Mx, ".")
			if host == "" {
				host = "."
			}
			out = append(out, domaincheck.MXRecord{Preference: mx.Preference, Host: host})
		}
	}
	return out, nil
}

// CNAME implements domaincheck.Resolver.
func (r *Resolver) CNAME(ctx context.Context, name string) (string, error) {
	rrs, err := r.query(ctx, name, mdns.TypeCNAME)
	if err != nil {
		return "", err
	}
	want := mdns.Fqdn(strings.ToLower(name))
	for _, rr := range rrs {
		if c, ok := rr.(*mdns.CNAME); ok && strings.EqualFold(c.Hdr.Name, want) {
			return strings.TrimSuffix(c.Target, "."), nil
		}
	}
	return "", nil
}
