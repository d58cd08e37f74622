package core

import (
	"net/netip"
	"net/url"
	"sort"
	"strings"
)

// AllowCustomEndpointsConstant is the constant that lifts the provider
// host check of endpoint fields (Field.Hosts): tests and on-premise
// gateways set it to true.
const AllowCustomEndpointsConstant = "MAILSVC_ALLOW_CUSTOM_ENDPOINTS"

// CheckEndpoint checks the URL raw of an endpoint field against the
// provider's hosts and returns "" when it is allowed, else a validation
// message for the field (which never repeats the URL).
//
// A pattern is a host name, an IP literal (IPv6 in brackets) or a name
// in which a "*" label stands for exactly one DNS label
// ("email.*.amazonaws.com" takes email.us-east-1.amazonaws.com, not
// email.a.b.amazonaws.com). The URL must be https unless the pattern
// starts with "http://" (the EC2 instance metadata service speaks only
// plain HTTP), and any port must be the scheme's default.
func CheckEndpoint(raw string, hosts []string) string {
	msg := "Must be a URL on one of the provider's own endpoints (" + strings.Join(endpointNames(hosts), ", ") +
		"); set " + AllowCustomEndpointsConstant + "=true to allow another."
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" {
		return msg
	}
	scheme := strings.ToLower(u.Scheme)
	host := canonicalHost(u.Hostname())
	for _, pattern := range hosts {
		want, name := "https", pattern
		if rest, ok := strings.CutPrefix(pattern, "http://"); ok {
			want, name = "http", rest
		}
		if scheme != want || !defaultPort(scheme, u.Port()) {
			continue
		}
		if hostMatches(canonicalHost(strings.Trim(name, "[]")), host) {
			return ""
		}
	}
	return msg
}

// endpointNames returns the patterns as a message names them: each with
// its scheme.
func endpointNames(hosts []string) []string {
	out := make([]string, len(hosts))
	for i, h := range hosts {
		if !strings.HasPrefix(h, "http://") {
			h = "https://" + h
		}
		out[i] = h
	}
	return out
}

// canonicalHost lower-cases a host name without its final dot, and
// writes an IP address in its canonical form.
func canonicalHost(h string) string {
	if ip, err := netip.ParseAddr(h); err == nil {
		return ip.WithZone("").String()
	}
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

func defaultPort(scheme, port string) bool {
	return port == "" || (scheme == "https" && port == "443") || (scheme == "http" && port == "80")
}

// hostMatches reports whether host matches pattern, label by label, a
// "*" label matching any one non-empty label.
func hostMatches(pattern, host string) bool {
	if pattern == host {
		return true
	}
	if !strings.Contains(pattern, "*") {
		return false
	}
	pl, hl := strings.Split(pattern, "."), strings.Split(host, ".")
	if len(pl) != len(hl) {
		return false
	}
	for i := range pl {
		if hl[i] == "" {
			return false
		}
		if pl[i] != "*" && pl[i] != hl[i] {
			return false
		}
	}
	return true
}

// CheckEndpoints checks every endpoint field (one with Hosts) that has a
// value in s, except the keys exempt says (nil: none), and returns field
// → message for those that are not on the provider's hosts; empty when
// all are.
func (d *Driver) CheckEndpoints(s Settings, exempt func(key string) bool) map[string]string {
	fields := map[string]string{}
	for _, f := range d.Fields {
		if len(f.Hosts) == 0 || (exempt != nil && exempt(f.Key)) {
			continue
		}
		if v := s.String(f.Key); v != "" {
			if msg := CheckEndpoint(v, f.Hosts); msg != "" {
				fields[f.Key] = msg
			}
		}
	}
	return fields
}

// EndpointProblem returns, for the fields CheckEndpoints refuses, one
// sentence fit for a connection's settings_error or an import's skip
// reason; "" when there are none.
func EndpointProblem(fields map[string]string) string {
	if len(fields) == 0 {
		return ""
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return "The endpoint setting " + strings.Join(keys, ", ") + " is off the provider's own hosts: change it, or set " +
		AllowCustomEndpointsConstant + "=true to allow custom endpoints."
}
