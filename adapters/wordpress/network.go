package wordpress

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"gorm.io/gorm"
)

// NetworkConfig is what wp-config.php says about a multisite network
// (MULTISITE, SUBDOMAIN_INSTALL, DOMAIN_CURRENT_SITE, PATH_CURRENT_SITE,
// SITE_ID_CURRENT_SITE, BLOG_ID_CURRENT_SITE).
type NetworkConfig struct {
	SubdomainInstall bool
	Domain           string
	Path             string
	NetworkID        int64
	MainSiteID       int64
}

// BlogPrefix is wpdb::get_blog_prefix() on a network: the base prefix
// for the main site (blog 0 or 1), base + id + "_" for the others.
func BlogPrefix(base string, blogID int64) string {
	if blogID <= 1 {
		return base
	}
	return base + strconv.FormatInt(blogID, 10) + "_"
}

// NetworkSite is a row of {base}blogs: one site of the network.
type NetworkSite struct {
	ID        int64  `json:"id"`
	NetworkID int64  `json:"network_id"`
	Domain    string `json:"domain"`
	Path      string `json:"path"`
	Public    bool   `json:"public"`
	Archived  bool   `json:"archived"`
	Spam      bool   `json:"spam"`
	Deleted   bool   `json:"deleted"`
}

// Network reads a multisite network's own tables ({base}blogs, {base}site
// and {base}sitemeta) and each site's options ({base}N_options). Users
// and their meta are the base tables, shared by every site. It is safe
// for concurrent use.
type Network struct {
	db   *gorm.DB
	base string
	cfg  NetworkConfig
}

// NewNetwork returns the network whose tables carry the base prefix base.
func NewNetwork(db *gorm.DB, base string, cfg NetworkConfig) (*Network, error) {
	if err := ValidatePrefix(base); err != nil {
		return nil, err
	}
	if cfg.NetworkID <= 0 {
		cfg.NetworkID = 1
	}
	if cfg.MainSiteID <= 0 {
		cfg.MainSiteID = 1
	}
	if cfg.Path == "" {
		cfg.Path = "/"
	}
	return &Network{db: db, base: base, cfg: cfg}, nil
}

// Config returns the network's wp-config.php settings.
func (n *Network) Config() NetworkConfig { return n.cfg }

// BasePrefix returns the base prefix.
func (n *Network) BasePrefix() string { return n.base }

// MainSiteID returns BLOG_ID_CURRENT_SITE.
func (n *Network) MainSiteID() int64 { return n.cfg.MainSiteID }

// Option implements OptionReader over {base}sitemeta:
// get_network_option() of the network (SITE_ID_CURRENT_SITE), where
// WordPress keeps a network's salts, siteurl, site_admins and
// using_application_passwords.
func (n *Network) Option(ctx context.Context, name string) (string, bool, error) {
	return rowValue(n.db.WithContext(ctx),
		"SELECT meta_value FROM "+n.base+"sitemeta WHERE meta_key = ? AND site_id = ? ORDER BY meta_id ASC LIMIT 1",
		[]any{name, n.cfg.NetworkID}, "network option %q", name)
}

// BlogOption is get_blog_option(): the raw option_value of name in the
// site's own options table.
func (n *Network) BlogOption(ctx context.Context, blogID int64, name string) (string, bool, error) {
	return rowValue(n.db.WithContext(ctx),
		"SELECT option_value FROM "+BlogPrefix(n.base, blogID)+"options WHERE option_name = ? LIMIT 1",
		[]any{name}, "option %q of site %d", name, blogID)
}

// SuperAdmins is get_super_admins(): the logins of the network option
// site_admins (default "admin" when the option is missing).
func (n *Network) SuperAdmins(ctx context.Context) ([]string, error) {
	raw, found, err := n.Option(ctx, "site_admins")
	if err != nil {
		return nil, err
	}
	if !found {
		return []string{"admin"}, nil
	}
	arr, ok := MaybeUnserialize(raw).(*Array)
	if !ok {
		return nil, nil
	}
	out := make([]string, 0, arr.Len())
	for i := 0; i < arr.Len(); i++ {
		_, v := arr.At(i)
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out, nil
}

// IsSuperAdmin is is_super_admin() for a login: in site_admins, compared
// strictly.
func (n *Network) IsSuperAdmin(ctx context.Context, login string) (bool, error) {
	admins, err := n.SuperAdmins(ctx)
	if err != nil {
		return false, err
	}
	for _, a := range admins {
		if a == login {
			return true, nil
		}
	}
	return false, nil
}

const siteColumns = "blog_id, site_id, domain, path, public, archived, spam, deleted"

func scanSite(r interface{ Scan(...any) error }) (*NetworkSite, error) {
	var s NetworkSite
	var public, archived, spam, deleted int64
	if err := r.Scan(&s.ID, &s.NetworkID, &s.Domain, &s.Path, &public, &archived, &spam, &deleted); err != nil {
		return nil, err
	}
	s.Public, s.Archived, s.Spam, s.Deleted = public == 1, archived == 1, spam == 1, deleted == 1
	return &s, nil
}

// Sites lists the network's sites by id.
func (n *Network) Sites(ctx context.Context) ([]NetworkSite, error) {
	rows, err := n.db.WithContext(ctx).Raw(
		"SELECT "+siteColumns+" FROM "+n.base+"blogs WHERE site_id = ? ORDER BY blog_id", n.cfg.NetworkID,
	).Rows()
	if err != nil {
		return nil, fmt.Errorf("list sites: %w", err)
	}
	defer rows.Close()
	var out []NetworkSite
	for rows.Next() {
		s, err := scanSite(rows)
		if err != nil {
			return nil, fmt.Errorf("list sites: %w", err)
		}
		out = append(out, *s)
	}
	return out, rows.Err()
}

// Site returns the site with blog id id, nil when there is none.
func (n *Network) Site(ctx context.Context, id int64) (*NetworkSite, error) {
	s, err := scanSite(n.db.WithContext(ctx).Raw(
		"SELECT "+siteColumns+" FROM "+n.base+"blogs WHERE blog_id = ? AND site_id = ?", id, n.cfg.NetworkID,
	).Row())
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read site %d: %w", id, err)
	}
	return s, nil
}

// NormalizeHost is what ms-load.php does to HTTP_HOST: lower case, and
// the default ports :80 and :443 removed.
func NormalizeHost(host string) string {
	host = strings.ToLower(strings.TrimSpace(host))
	for _, p := range []string{":80", ":443"} {
		host = strings.TrimSuffix(host, p)
	}
	return host
}

// pathCandidates is the list of paths get_site_by_path() tries for a
// request path: the first segments of the path (at most segments of
// them), longest first, then "/".
func pathCandidates(path string, segments int) []string {
	var parts []string
	for _, p := range strings.Split(strings.Trim(path, "/"), "/") {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) > segments {
		parts = parts[:segments]
	}
	var out []string
	for i := len(parts); i > 0; i-- {
		out = append(out, "/"+strings.ToLower(strings.Join(parts[:i], "/"))+"/")
	}
	return append(out, "/")
}

// SiteByPath is get_site_by_path() as ms-load.php calls it for a request:
// the site whose domain is host (or host without "www.") and whose path is
// the longest that starts the request path. On a subdirectory network a
// host that names no site (the service reached over loopback) is read as
// the network's own domain. It returns nil when no site matches.
func (n *Network) SiteByPath(ctx context.Context, host, path string) (*NetworkSite, error) {
	host = NormalizeHost(host)
	segments := 1
	if !n.cfg.SubdomainInstall {
		segments = strings.Count(n.cfg.Path, "/")
	}
	paths := pathCandidates(path, segments)
	domains := []string{host}
	if h, ok := strings.CutPrefix(host, "www."); ok {
		domains = append(domains, h)
	}
	s, err := n.siteBy(ctx, domains, paths)
	if err != nil || s != nil {
		return s, err
	}
	if !n.cfg.SubdomainInstall && n.cfg.Domain != "" {
		return n.siteBy(ctx, []string{NormalizeHost(n.cfg.Domain)}, paths)
	}
	return nil, nil
}

// siteBy is get_site_by_path()'s query: the site of one of the domains
// with the longest of the paths, the longest domain first.
func (n *Network) siteBy(ctx context.Context, domains, paths []string) (*NetworkSite, error) {
	args := []any{n.cfg.NetworkID}
	for _, d := range domains {
		args = append(args, d)
	}
	for _, p := range paths {
		args = append(args, p)
	}
	marks := func(k int) string { return strings.TrimSuffix(strings.Repeat("?,", k), ",") }
	s, err := scanSite(n.db.WithContext(ctx).Raw(
		"SELECT "+siteColumns+" FROM "+n.base+"blogs WHERE site_id = ? AND deleted = 0 AND domain IN ("+marks(len(domains))+
			") AND path IN ("+marks(len(paths))+") ORDER BY LENGTH(domain) DESC, LENGTH(path) DESC LIMIT 1", args...,
	).Row())
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("find the site of %v%v: %w", domains, paths, err)
	}
	return s, nil
}

// SiteForRequest is SiteByPath for the HTTP layer: the site's id and
// path, the main site ("/" path of the network) when none matches.
func (n *Network) SiteForRequest(ctx context.Context, host, path string) (int64, string, error) {
	s, err := n.SiteByPath(ctx, host, path)
	if err != nil {
		return 0, "", err
	}
	if s == nil {
		return n.cfg.MainSiteID, n.cfg.Path, nil
	}
	return s.ID, s.Path, nil
}
