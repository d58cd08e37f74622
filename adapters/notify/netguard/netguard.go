// Package netguard is the server-side request forgery guard of the alert
// channels: an HTTP client that only reaches public addresses, and the
// check of a URL a user typed.
//
// The client (NewClient) checks the address of every connection it opens,
// in net.Dialer.Control, that is after DNS resolution and for every
// address tried, so a name that resolves (or rebinds) to a refused
// address cannot slip through, and redirects are checked the same way.
// Refused: every range of IANA's IPv4 and IPv6 Special-Purpose Address
// Registries (loopback, link-local where cloud metadata services live,
// private and unique-local, shared CGNAT space, documentation,
// benchmarking, IETF protocol assignments, 6to4 relay, discard-only,
// ORCHID, SRv6, reserved 240.0.0.0/4 and broadcast), multicast, and every
// IPv6 address outside global unicast 2000::/3. An address that embeds an
// IPv4 address (IPv4-mapped ::ffff:0:0/96, IPv4-compatible ::/96, NAT64
// 64:ff9b::/96 and 64:ff9b:1::/48, 6to4 2002::/16, Teredo 2001::/32) is
// refused whatever it carries: on a network with a NAT64 gateway
// http://[64:ff9b::a9fe:a9fe]/ reaches 169.254.169.254, and no webhook
// receiver needs such an address. Only http and https are spoken, and a
// guarded client uses no proxy (a proxy would connect on its behalf,
// unchecked).
//
// CheckURL is the save-time check. Where it runs is a decision worth
// stating, because a channel type's Validate (core.ChannelType.Validate)
// only sees the settings and not MAILSVC_ALLOW_PRIVATE_WEBHOOKS:
//
//   - the channel types' Validate call CheckURL(raw, true): scheme http or
//     https and a host, so a malformed URL is a 422 on its field
//     whatever the flag says;
//   - the host (app/alerts, which cannot import this package) is given a
//     func(string) error wired in cmd as
//     func(u string) error { return netguard.CheckURL(u, allowPrivate) }
//     and applies it to every field of type core.FieldURL of the channel
//     type, so a literal private address or "localhost" is a 422 on the
//     field when the flag is off;
//   - whatever was saved, the client made by NewClient(allowPrivate, ...)
//     refuses at connect time, so a name that only resolves to a private
//     address fails the send with a permanent error wrapping ErrRefused.
//
// allowPrivate true (MAILSVC_ALLOW_PRIVATE_WEBHOOKS, for intranets and
// tests) lifts the address checks; the scheme check stays.
package netguard

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// ErrRefused is in the chain of every error that refuses an address or a
// scheme. Retrying cannot help: callers classify it as permanent.
var ErrRefused = errors.New("refused by the private address guard")

// maxRedirects is how many redirects a guarded client follows.
const maxRedirects = 5

// specialRange is a range the guard refuses, with the kind of address it
// holds in words.
type specialRange struct {
	prefix netip.Prefix
	kind   string
}

// specialRanges are the refused ranges, the most specific of nested ones
// first so that the kind named is the most precise. Sources: IANA IPv4
// and IPv6 Special-Purpose Address Registries, the IPv4 multicast and
// IPv6 multicast registries, and the deprecated embeddings of RFC 4291.
var specialRanges = func() []specialRange {
	table := []struct{ cidr, kind string }{
		// IPv4 Special-Purpose Address Registry.
		{"0.0.0.0/8", "unspecified (this network)"},
		{"10.0.0.0/8", "private"},
		{"100.64.0.0/10", "shared (CGNAT)"},
		{"127.0.0.0/8", "loopback"},
		{"169.254.0.0/16", "link-local"},
		{"172.16.0.0/12", "private"},
		{"192.0.0.0/24", "IETF protocol assignment"},
		{"192.0.2.0/24", "documentation"},
		{"192.31.196.0/24", "AS112 service"},
		{"192.52.193.0/24", "AMT relay"},
		{"192.88.99.0/24", "6to4 relay anycast"},
		{"192.168.0.0/16", "private"},
		{"192.175.48.0/24", "AS112 service"},
		{"198.18.0.0/15", "benchmarking"},
		{"198.51.100.0/24", "documentation"},
		{"203.0.113.0/24", "documentation"},
		{"224.0.0.0/4", "multicast"},
		{"255.255.255.255/32", "broadcast"},
		{"240.0.0.0/4", "reserved"},
		// IPv6 Special-Purpose Address Registry and the embeddings of an
		// IPv4 address.
		{"::/128", "unspecified"},
		{"::1/128", "loopback"},
		{"::ffff:0:0/96", "IPv4-mapped"},
		{"::/96", "IPv4-compatible"},
		{"64:ff9b::/96", "NAT64"},
		{"64:ff9b:1::/48", "NAT64 (local use)"},
		{"100::/64", "discard-only"},
		{"100:0:0:1::/64", "dummy"},
		{"2001::/32", "Teredo"},
		{"2001:2::/48", "benchmarking"},
		{"2001:10::/28", "ORCHID"},
		{"2001:20::/28", "ORCHIDv2"},
		{"2001::/23", "IETF protocol assignment"},
		{"2001:db8::/32", "documentation"},
		{"2002::/16", "6to4"},
		{"2620:4f:8000::/48", "AS112 service"},
		{"3fff::/20", "documentation"},
		{"5f00::/16", "SRv6"},
		{"fc00::/7", "private (unique local)"},
		{"fe80::/10", "link-local"},
		{"fec0::/10", "site-local"},
		{"ff00::/8", "multicast"},
	}
	out := make([]specialRange, len(table))
	for i, r := range table {
		out[i] = specialRange{prefix: netip.MustParsePrefix(r.cidr), kind: r.kind}
	}
	return out
}()

// globalUnicast is the only IPv6 space allocated for public addresses;
// anything outside it is reserved by the IETF.
var globalUnicast = netip.MustParsePrefix("2000::/3")

// Refused reports whether ip is an address the guard refuses, and in words
// what kind of address it is ("" when it is allowed).
func Refused(ip netip.Addr) (bool, string) {
	if !ip.IsValid() {
		return true, "invalid"
	}
	ip = ip.WithZone("")
	for _, r := range specialRanges {
		if r.prefix.Contains(ip) {
			return true, r.kind
		}
	}
	if ip.Is6() && !globalUnicast.Contains(ip) {
		return true, "reserved"
	}
	return false, ""
}

// refusedError says which address was refused and why.
func refusedError(host, kind string) error {
	return fmt.Errorf("%s is in a refused range (%s): %w", host, kind, ErrRefused)
}

// URLError is a URL that CheckURL refused. Its text is a validation
// message for the field that holds the URL; it never repeats the URL.
type URLError struct {
	Msg     string
	refused bool
}

// Error returns the validation message.
func (e *URLError) Error() string { return e.Msg }

// Unwrap returns ErrRefused when the scheme or the address was refused.
func (e *URLError) Unwrap() error {
	if e.refused {
		return ErrRefused
	}
	return nil
}

const privateHint = " (set MAILSVC_ALLOW_PRIVATE_WEBHOOKS to allow local and private addresses)."

// CheckURL checks a URL a user typed: scheme http or https, a host, and,
// unless allowPrivate, no host that is a refused literal IP address or the
// name localhost (or a name under .localhost). It resolves nothing: names
// are checked when the client connects. The error's text is fit to be a
// field's validation message and never repeats the URL; it is a *URLError.
func CheckURL(raw string, allowPrivate bool) error {
	return checkURL(raw, allowPrivate, Refused)
}

// checkURL is CheckURL with the address policy given.
func checkURL(raw string, allowPrivate bool, isRefused func(netip.Addr) (bool, string)) error {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return &URLError{Msg: "Must be a valid URL."}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return &URLError{Msg: "Must be an http or https URL.", refused: true}
	}
	host := u.Hostname()
	if host == "" {
		return &URLError{Msg: "Must include a host name."}
	}
	if allowPrivate {
		return nil
	}
	name := strings.TrimSuffix(strings.ToLower(host), ".")
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return &URLError{Msg: "Must not point to loopback addresses" + privateHint, refused: true}
	}
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		if bad, kind := isRefused(ip); bad {
			return &URLError{Msg: "Must not point to " + kind + " addresses" + privateHint, refused: true}
		}
	}
	return nil
}

// NewClient returns an HTTP client for URLs users typed, with the given
// overall timeout per request. Unless allowPrivate, it refuses to connect
// to the addresses Refused names and to follow redirects there; in every
// case it speaks only http and https and follows at most 5 redirects.
func NewClient(allowPrivate bool, timeout time.Duration) *http.Client {
	return newClient(allowPrivate, timeout, Refused)
}

// newClient is NewClient with the address policy given.
func newClient(allowPrivate bool, timeout time.Duration, isRefused func(netip.Addr) (bool, string)) *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if !allowPrivate {
		dialer.Control = func(_, address string, _ syscall.RawConn) error {
			return checkDial(address, isRefused)
		}
		tr.Proxy = nil
	}
	tr.DialContext = dialer.DialContext
	return &http.Client{
		Transport: schemeGuard{next: tr},
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return fmt.Errorf("stopped after %d redirects", maxRedirects)
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("redirect to a non-http URL: %w", ErrRefused)
			}
			if !allowPrivate {
				if err := checkURL(req.URL.String(), false, isRefused); err != nil {
					return fmt.Errorf("redirect refused: %w", ErrRefused)
				}
			}
			return nil
		},
	}
}

// checkDial refuses a connection to a refused address. It runs in the
// dialer's Control, after name resolution, for each address tried.
func checkDial(address string, isRefused func(netip.Addr) (bool, string)) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("dial %s: %w", address, ErrRefused)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("dial %s: not an IP address: %w", address, ErrRefused)
	}
	if bad, kind := isRefused(ip); bad {
		return refusedError(ip.String(), kind)
	}
	return nil
}

// schemeGuard refuses requests whose scheme is not http or https before
// they reach the transport.
type schemeGuard struct{ next http.RoundTripper }

// RoundTrip implements http.RoundTripper.
func (g schemeGuard) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, fmt.Errorf("only http and https URLs are allowed: %w", ErrRefused)
	}
	return g.next.RoundTrip(req)
}
