package wordpress

import (
	"net/url"
	"strings"
)

// DefaultSender returns the sender wp_mail() uses when nothing sets one:
// local (WordPress uses "wordpress") @ the host of the site's home URL
// (network_home_url()), lower-cased, without a leading "www.". It
// returns "" when home has no host.
func DefaultSender(local, home string) string {
	u, err := url.Parse(strings.TrimSpace(home))
	if err != nil || u.Hostname() == "" {
		return ""
	}
	host := strings.ToLower(u.Hostname())
	host = strings.TrimPrefix(host, "www.")
	return local + "@" + host
}
