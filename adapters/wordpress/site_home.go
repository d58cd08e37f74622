package wordpress

import (
	"context"
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// SiteHomes finds a site's stored address, where the service sends its
// signed requests to the bridge (the hook runner, the application password
// questions): wp-config.php's WP_HOME when it is a literal, else the home
// option the site's administrators set. It never takes an address from a
// request (a Host header, or a value a page load wrote), so no visitor
// can choose where those requests go.
type SiteHomes struct {
	// Options reads the site's options (the main site's on a network).
	Options OptionReader
	// Network, when set, reads the home option of the site a context
	// names (core.SiteFrom) from that site's own options table.
	Network *Network
	// Home is WP_HOME when wp-config.php defines it as a literal.
	Home string
}

// SiteHome returns the home address of the site of ctx, without a
// trailing slash ("" when none is stored).
func (s *SiteHomes) SiteHome(ctx context.Context) (string, error) {
	if s.Network != nil {
		if blog, ok := core.SiteFrom(ctx); ok && blog != s.Network.MainSiteID() {
			v, _, err := s.Network.BlogOption(ctx, blog, "home")
			return strings.TrimRight(v, "/"), err
		}
	}
	if s.Home != "" {
		return strings.TrimRight(s.Home, "/"), nil
	}
	v, _, err := s.Options.Option(ctx, "home")
	return strings.TrimRight(v, "/"), err
}
