// Package network is what the service does for a WordPress multisite
// network: the network settings (quota defaults, what happens over quota,
// whether sites may override), each site's quota and override permission,
// the per-site view of volume and quota use, and the quota check the
// delivery workers make before a site's message is sent.
package network

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Settings scopes of {prefix}mailsvc_settings.
const (
	// ScopeNetwork holds the network settings.
	ScopeNetwork = "network"
	// scopeSitePrefix + the site id holds one site's settings.
	scopeSitePrefix = "network_site:"
)

// Site is one site of the network as WordPress lists it ({base}blogs).
type Site struct {
	ID     int64
	Domain string
	Path   string
}

// SiteLister lists the network's sites.
type SiteLister interface {
	NetworkSites(ctx context.Context) ([]Site, error)
}

// LogCounter counts each site's logs created since a time, and the failed
// ones among them.
type LogCounter interface {
	SiteLogCounts(ctx context.Context, from time.Time) (map[int64]core.SiteLogCount, error)
}

// ConnectionChecker finds a connection (core.ENOTFOUND when there is none).
type ConnectionChecker interface {
	FindConnectionByID(ctx context.Context, id int64) (*core.Connection, error)
}

// Settings are the network settings (GET/PUT /network/settings).
type Settings struct {
	// QuotaDay and QuotaMonth are every site's default limits: messages
	// per UTC day and per UTC month; 0 is no limit.
	QuotaDay   int64 `json:"quota_day"`
	QuotaMonth int64 `json:"quota_month"`
	// OverQuota is what happens to a site's message past its quota:
	// core.OverQuotaWait (it waits in the queue for the next period) or
	// core.OverQuotaFail.
	OverQuota string `json:"over_quota"`
	// AllowSiteOverrides lets the sites marked overrides_allowed manage
	// connections and settings of their own.
	AllowSiteOverrides bool `json:"allow_site_overrides"`
}

// SiteSettings are one site's own settings; nil quotas follow the
// network's defaults.
type SiteSettings struct {
	QuotaDay         *int64 `json:"quota_day"`
	QuotaMonth       *int64 `json:"quota_month"`
	OverridesAllowed bool   `json:"overrides_allowed"`
	// DefaultConnectionID and FallbackConnectionID are the site's own
	// connections, used while it may override (nil: the network's).
	DefaultConnectionID  *int64 `json:"default_connection_id"`
	FallbackConnectionID *int64 `json:"fallback_connection_id"`
	// FromEmail and FromName are the site's own sender (nil: the
	// network's).
	FromEmail *string `json:"from_email"`
	FromName  *string `json:"from_name"`
}

// SiteView is one site in GET /network/sites: where it is, its volume
// and failures over the last 30 days, its quota use, and whether it may
// override the network's connections and settings.
type SiteView struct {
	ID               int64      `json:"id"`
	Domain           string     `json:"domain"`
	Path             string     `json:"path"`
	Volume           int64      `json:"volume"`
	Failures         int64      `json:"failures"`
	Quota            QuotaView  `json:"quota"`
	OverridesAllowed bool       `json:"overrides_allowed"`
	Settings         SiteConfig `json:"settings"`
}

// SiteConfig is what is set for a site itself (null: the network's).
type SiteConfig struct {
	QuotaDay             *int64 `json:"quota_day"`
	QuotaMonth           *int64 `json:"quota_month"`
	DefaultConnectionID  *int64 `json:"default_connection_id"`
	FallbackConnectionID *int64 `json:"fallback_connection_id"`
}

// QuotaView is a site's quota and its use in the current day and month.
type QuotaView struct {
	Day       int64 `json:"day"`
	DayUsed   int64 `json:"day_used"`
	Month     int64 `json:"month"`
	MonthUsed int64 `json:"month_used"`
}

// VolumeDays is the window of a site's volume and failures.
const VolumeDays = 30

// Service is the network's service. Set its fields before use.
type Service struct {
	// Connections checks that a site's own connections exist; nil
	// checks nothing.
	Connections ConnectionChecker
	Sites       SiteLister
	Settings    core.SettingsStore
	Quotas      core.SiteQuotaStore
	Logs        LogCounter
	Alerts      core.Alerter
	// NetworkName names the network in alerts.
	NetworkName string
	Logger      *slog.Logger
	// Now is the clock (tests); nil is time.Now.
	Now func() time.Time

	mu     sync.Mutex
	cached *cachedSettings
	owners *cachedOwners
}

type cachedSettings struct {
	at    time.Time
	net   Settings
	sites map[int64]SiteSettings
}

// settingsTTL is how long the quota check reuses the settings it read.
const settingsTTL = time.Second

func (s *Service) now() time.Time { return core.NowFrom(s.Now).UTC() }

func (s *Service) logger() *slog.Logger { return core.LoggerOr(s.Logger) }

// NetworkSettings returns the network settings, defaults filled in.
func (s *Service) NetworkSettings(ctx context.Context) (Settings, error) {
	m, err := s.Settings.LoadSettings(ctx, ScopeNetwork)
	if err != nil {
		return decodeNetworkSettings(nil), fmt.Errorf("load network settings: %w", err)
	}
	return decodeNetworkSettings(m), nil
}

// quotaValue validates a quota field of a patch: a whole number ≥ 0, or
// null when nullable.
func quotaValue(v any, nullable bool) (any, string) {
	if v == nil {
		if nullable {
			return nil, ""
		}
		return nil, "Must be a whole number of 0 or more (0: no limit)."
	}
	n, ok := core.AsInt(v)
	if !ok || n < 0 {
		return nil, "Must be a whole number of 0 or more (0: no limit)."
	}
	return n, ""
}

// UpdateNetworkSettings validates and stores a partial update of the
// network settings and returns them all. Unknown fields are refused.
func (s *Service) UpdateNetworkSettings(ctx context.Context, patch map[string]any) (Settings, error) {
	values := map[string]any{}
	fields := map[string]string{}
	for k, v := range patch {
		switch k {
		case "quota_day", "quota_month":
			n, msg := quotaValue(v, false)
			if msg != "" {
				fields[k] = msg
				continue
			}
			values[k] = n
		case "over_quota":
			if str, ok := v.(string); !ok || (str != core.OverQuotaWait && str != core.OverQuotaFail) {
				fields[k] = `Must be "wait" or "fail".`
				continue
			}
			values[k] = v
		case "allow_site_overrides":
			if _, ok := v.(bool); !ok {
				fields[k] = "Must be true or false."
				continue
			}
			values[k] = v
		default:
			fields[k] = "Unknown network setting."
		}
	}
	if err := core.Invalid(fields); err != nil {
		return Settings{}, err
	}
	if len(values) > 0 {
		if err := s.Settings.SaveSettings(ctx, ScopeNetwork, values); err != nil {
			return Settings{}, fmt.Errorf("save network settings: %w", err)
		}
		s.forget()
	}
	return s.NetworkSettings(ctx)
}

func siteScope(id int64) string { return scopeSitePrefix + strconv.FormatInt(id, 10) }

// SiteSettings returns a site's own settings.
func (s *Service) SiteSettings(ctx context.Context, id int64) (SiteSettings, error) {
	m, err := s.Settings.LoadSettings(ctx, siteScope(id))
	if err != nil {
		return SiteSettings{}, fmt.Errorf("load settings of site %d: %w", id, err)
	}
	return siteSettingsOf(m), nil
}

// ScopesLoader reads the settings of many scopes in one query
// (store.SettingsService.LoadSettingsScopes): every scope starting with prefix.
type ScopesLoader interface {
	LoadSettingsScopes(ctx context.Context, prefix string) (map[string]map[string]any, error)
}

// allSiteSettings returns the stored settings of every site that has
// any, by site id: in one read when the settings store can
// (ScopesLoader), else one read per site of sites.
func (s *Service) allSiteSettings(ctx context.Context, sites []Site) (map[int64]map[string]any, error) {
	out := map[int64]map[string]any{}
	if l, ok := s.Settings.(ScopesLoader); ok {
		scopes, err := l.LoadSettingsScopes(ctx, scopeSitePrefix)
		if err != nil {
			return nil, fmt.Errorf("load the sites' settings: %w", err)
		}
		for scope, m := range scopes {
			if id, err := strconv.ParseInt(scope[len(scopeSitePrefix):], 10, 64); err == nil {
				out[id] = m
			}
		}
		return out, nil
	}
	for _, site := range sites {
		m, err := s.Settings.LoadSettings(ctx, siteScope(site.ID))
		if err != nil {
			return nil, fmt.Errorf("load settings of site %d: %w", site.ID, err)
		}
		out[site.ID] = m
	}
	return out, nil
}

// ConnectionSites returns the connections that sites created for
// themselves (OwnsConnection), each with its site; every other
// connection is the network's. It reads all the sites' settings at once.
func (s *Service) ConnectionSites(ctx context.Context) (map[int64]int64, error) {
	sites, err := s.Sites.NetworkSites(ctx)
	if err != nil {
		return nil, fmt.Errorf("list sites: %w", err)
	}
	all, err := s.allSiteSettings(ctx, sites)
	if err != nil {
		return nil, err
	}
	out := map[int64]int64{}
	for site, m := range all {
		for _, id := range ownConnectionsOf(m) {
			out[id] = site
		}
	}
	return out, nil
}

// siteSettingsOf reads a site's own settings from its stored keys.
func siteSettingsOf(m map[string]any) SiteSettings {
	var st SiteSettings
	if n, ok := core.AsInt(m["quota_day"]); ok {
		st.QuotaDay = &n
	}
	if n, ok := core.AsInt(m["quota_month"]); ok {
		st.QuotaMonth = &n
	}
	st.OverridesAllowed, _ = siteOverridesAllowed.Decode(m).(bool)
	if n, ok := core.AsInt(m["default_connection_id"]); ok {
		st.DefaultConnectionID = &n
	}
	if n, ok := core.AsInt(m["fallback_connection_id"]); ok {
		st.FallbackConnectionID = &n
	}
	if v, ok := m["from_email"].(string); ok {
		st.FromEmail = &v
	}
	if v, ok := m["from_name"].(string); ok {
		st.FromName = &v
	}
	return st
}

// site returns the network's site id, or a not-found error.
func (s *Service) site(ctx context.Context, id int64) (*Site, error) {
	sites, err := s.Sites.NetworkSites(ctx)
	if err != nil {
		return nil, fmt.Errorf("list sites: %w", err)
	}
	for i := range sites {
		if sites[i].ID == id {
			return &sites[i], nil
		}
	}
	return nil, core.Errorf(core.ENOTFOUND, "Site %d not found.", id)
}

// UpdateSite validates and stores a partial update of a site's settings
// (quota_day, quota_month: a number, or null for the network's default;
// overrides_allowed) and returns the site.
func (s *Service) UpdateSite(ctx context.Context, id int64, patch map[string]any) (*SiteView, error) {
	if _, err := s.site(ctx, id); err != nil {
		return nil, err
	}
	values := map[string]any{}
	fields := map[string]string{}
	for k, v := range patch {
		switch k {
		case "quota_day", "quota_month":
			n, msg := quotaValue(v, true)
			if msg != "" {
				fields[k] = msg
				continue
			}
			values[k] = n
		case "overrides_allowed":
			if _, ok := v.(bool); !ok {
				fields[k] = "Must be true or false."
				continue
			}
			values[k] = v
		case "default_connection_id", "fallback_connection_id":
			conn, msg := s.connectionValue(ctx, id, v)
			if msg != "" {
				fields[k] = msg
				continue
			}
			values[k] = conn
		default:
			fields[k] = "Unknown site setting."
		}
	}
	if err := core.Invalid(fields); err != nil {
		return nil, err
	}
	if len(values) > 0 {
		if err := s.Settings.SaveSettings(ctx, siteScope(id), values); err != nil {
			return nil, fmt.Errorf("save settings of site %d: %w", id, err)
		}
		s.forget()
	}
	views, err := s.ListSites(ctx)
	if err != nil {
		return nil, err
	}
	for i := range views {
		if views[i].ID == id {
			return &views[i], nil
		}
	}
	return nil, core.Errorf(core.ENOTFOUND, "Site %d not found.", id)
}

// limits returns a site's effective quotas.
func limits(net Settings, site SiteSettings) (day, month int64) {
	day, month = net.QuotaDay, net.QuotaMonth
	if site.QuotaDay != nil {
		day = *site.QuotaDay
	}
	if site.QuotaMonth != nil {
		month = *site.QuotaMonth
	}
	return day, month
}

// ListSites returns every site of the network with its volume, failures,
// quota use and override permission.
func (s *Service) ListSites(ctx context.Context) ([]SiteView, error) {
	sites, err := s.Sites.NetworkSites(ctx)
	if err != nil {
		return nil, fmt.Errorf("list sites: %w", err)
	}
	net, err := s.NetworkSettings(ctx)
	if err != nil {
		return nil, err
	}
	now := s.now()
	day, month := core.QuotaPeriods(now)
	dayUse, err := s.Quotas.SiteQuotaUsage(ctx, day)
	if err != nil {
		return nil, err
	}
	monthUse, err := s.Quotas.SiteQuotaUsage(ctx, month)
	if err != nil {
		return nil, err
	}
	counts, err := s.Logs.SiteLogCounts(ctx, now.AddDate(0, 0, -VolumeDays))
	if err != nil {
		return nil, err
	}
	all, err := s.allSiteSettings(ctx, sites)
	if err != nil {
		return nil, err
	}
	out := make([]SiteView, 0, len(sites))
	for _, site := range sites {
		st := siteSettingsOf(all[site.ID])
		d, m := limits(net, st)
		out = append(out, SiteView{
			ID: site.ID, Domain: site.Domain, Path: site.Path,
			Volume: counts[site.ID].Total, Failures: counts[site.ID].Failed,
			Quota:            QuotaView{Day: d, DayUsed: dayUse[site.ID], Month: m, MonthUsed: monthUse[site.ID]},
			OverridesAllowed: net.AllowSiteOverrides && st.OverridesAllowed,
			Settings: SiteConfig{QuotaDay: st.QuotaDay, QuotaMonth: st.QuotaMonth,
				DefaultConnectionID: st.DefaultConnectionID, FallbackConnectionID: st.FallbackConnectionID},
		})
	}
	return out, nil
}

// OverridesAllowed reports whether a site may manage connections and
// settings of its own: the network allows overrides and the site is
// marked overrides_allowed.
func (s *Service) OverridesAllowed(ctx context.Context, id int64) (bool, error) {
	net, site, err := s.settingsFor(ctx, id)
	if err != nil {
		return false, err
	}
	return net.AllowSiteOverrides && site.OverridesAllowed, nil
}

// forget drops the cached settings and connection owners after an
// update.
func (s *Service) forget() {
	s.mu.Lock()
	s.cached = nil
	s.owners = nil
	s.mu.Unlock()
}

// settingsFor returns the network settings and a site's, read at most
// settingsTTL ago.
func (s *Service) settingsFor(ctx context.Context, id int64) (Settings, SiteSettings, error) {
	now := time.Now()
	s.mu.Lock()
	c := s.cached
	if c == nil || now.Sub(c.at) > settingsTTL {
		c = &cachedSettings{at: now, sites: map[int64]SiteSettings{}}
		s.cached = c
	}
	net := c.net
	site, haveSite := c.sites[id]
	fresh := c.net.OverQuota != ""
	s.mu.Unlock()
	var err error
	if !fresh {
		if net, err = s.NetworkSettings(ctx); err != nil {
			return net, site, err
		}
	}
	if !haveSite {
		if site, err = s.SiteSettings(ctx, id); err != nil {
			return net, site, err
		}
	}
	s.mu.Lock()
	c.net = net
	c.sites[id] = site
	s.mu.Unlock()
	return net, site, nil
}

// connectionValue validates a connection field of site's own settings:
// the id of an existing connection the site may use (ConnectionUsable:
// the network's or the site's own; another site's is answered as a
// missing one), or null for the network's.
func (s *Service) connectionValue(ctx context.Context, site int64, v any) (any, string) {
	if v == nil {
		return nil, ""
	}
	id, ok := core.AsInt(v)
	if !ok || id < 1 {
		return nil, "Must be a connection id, or null for the network's."
	}
	if s.Connections != nil {
		if _, err := s.Connections.FindConnectionByID(ctx, id); core.ErrorCode(err) == core.ENOTFOUND {
			return nil, core.NoSuchConnection(id)
		} else if err != nil {
			return nil, "The connection could not be checked."
		}
	}
	usable, err := s.ConnectionUsable(ctx, site, id)
	if err != nil {
		return nil, "The connection could not be checked."
	}
	if !usable {
		return nil, core.NoSuchConnection(id)
	}
	return id, ""
}

// OverridableSettings are the free settings a site that may override
// sets for itself.
var OverridableSettings = []string{"default_connection_id", "fallback_connection_id", "from_email", "from_name"}

// SiteOverrides returns the free settings a site set for itself, while it
// may override the network's (none otherwise); absent keys follow the
// network.
func (s *Service) SiteOverrides(ctx context.Context, site int64) (core.SiteOverrides, error) {
	net, own, err := s.settingsFor(ctx, site)
	if err != nil || !net.AllowSiteOverrides || !own.OverridesAllowed {
		return core.SiteOverrides{}, err
	}
	return core.SiteOverrides{
		DefaultConnectionID:  own.DefaultConnectionID,
		FallbackConnectionID: own.FallbackConnectionID,
		FromEmail:            own.FromEmail,
		FromName:             own.FromName,
	}, nil
}

// UpdateSiteOverrides stores settings a site sets for itself
// (OverridableSettings; null goes back to the network's). Other fields
// are the network's: a validation error.
func (s *Service) UpdateSiteOverrides(ctx context.Context, site int64, patch map[string]any) error {
	values := map[string]any{}
	fields := map[string]string{}
	for k, v := range patch {
		switch k {
		case "default_connection_id", "fallback_connection_id":
			id, msg := s.connectionValue(ctx, site, v)
			if msg != "" {
				fields[k] = msg
				continue
			}
			values[k] = id
		case "from_email":
			str, ok := v.(string)
			switch {
			case v == nil:
				values[k] = nil
			case !ok || (str != "" && !core.SearchIsAddress(str)):
				fields[k] = "Must be an email address, or null for the network's."
			default:
				values[k] = str
			}
		case "from_name":
			str, ok := v.(string)
			switch {
			case v == nil:
				values[k] = nil
			case !ok || len(str) > 191:
				fields[k] = "Must be a name of at most 191 characters, or null for the network's."
			default:
				values[k] = str
			}
		default:
			fields[k] = "A network setting: only a network administrator changes it, on the main site."
		}
	}
	if err := core.Invalid(fields); err != nil {
		return err
	}
	if len(values) == 0 {
		return nil
	}
	if err := s.Settings.SaveSettings(ctx, siteScope(site), values); err != nil {
		return fmt.Errorf("save settings of site %d: %w", site, err)
	}
	s.forget()
	return nil
}

// ownConnectionsKey lists, in a site's settings, the connections the
// site's administrators created while the site could override.
const ownConnectionsKey = "own_connections"

// OwnsConnection reports whether a site's administrators created the
// connection (they may change or delete only those).
func (s *Service) OwnsConnection(ctx context.Context, site, id int64) (bool, error) {
	ids, err := s.ownConnections(ctx, site)
	if err != nil {
		return false, err
	}
	for _, v := range ids {
		if v == id {
			return true, nil
		}
	}
	return false, nil
}

// AddOwnConnection records that a site's administrator created the
// connection.
func (s *Service) AddOwnConnection(ctx context.Context, site, id int64) error {
	ids, err := s.ownConnections(ctx, site)
	if err != nil {
		return err
	}
	if err := s.Settings.SaveSettings(ctx, siteScope(site), map[string]any{ownConnectionsKey: append(ids, id)}); err != nil {
		return fmt.Errorf("record the connection of site %d: %w", site, err)
	}
	s.forget()
	return nil
}

func (s *Service) ownConnections(ctx context.Context, site int64) ([]int64, error) {
	m, err := s.Settings.LoadSettings(ctx, siteScope(site))
	if err != nil {
		return nil, fmt.Errorf("load settings of site %d: %w", site, err)
	}
	return ownConnectionsOf(m), nil
}

// ownConnectionsOf reads the connections a site created from its stored
// settings.
func ownConnectionsOf(m map[string]any) []int64 {
	if ids, ok := m[ownConnectionsKey].([]int64); ok {
		return ids // as saved, not yet through JSON
	}
	list, _ := m[ownConnectionsKey].([]any)
	out := make([]int64, 0, len(list))
	for _, v := range list {
		if n, ok := core.AsInt(v); ok {
			out = append(out, n)
		}
	}
	return out
}
