package wordpress

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// FiltersOption is the option in which the bridge publishes what the
// site's mail_svc_rest_capability, mail_svc_sensitive_keys,
// mail_svc_log_retention_days and mail_svc_api_debug_response_enabled
// filters return, and wp_get_environment_type() (see the bridge's
// mailsvc_bridge_sync_filters). A key is present only while a filter
// changes that value (the environment type: while it is not production).
const FiltersOption = "mailsvc_filters"

// DefaultFiltersRefresh is how long the service keeps what it read from
// FiltersOption before reading it again.
const DefaultFiltersRefresh = 30 * time.Second

// FilterResults are the values the site's filters chose, as the bridge
// published them. A zero field means that no filter changes the value.
type FilterResults struct {
	// RESTCapability replaces the capability every route, the SMTP
	// listener and the screens require.
	RESTCapability string
	// SensitiveKeys are the setting keys the sensitive-keys filter
	// returns (they add to the built-in and configured ones).
	SensitiveKeys []string
	// LogRetentionDays replaces the log_retention_days setting; 0 keeps
	// logs forever.
	LogRetentionDays *int64
	// APIDebugResponseEnabled replaces MAIL_SVC_DEBUG_ATTACH_API_DEBUG.
	APIDebugResponseEnabled *bool
	// EnvironmentType is what wp_get_environment_type() returns, published
	// only when it is not "production" (the staging guard reads it).
	EnvironmentType string
	// ApplicationPasswords are what WordPress's application password
	// filters decide (app_passwords_unavailable,
	// app_passwords_unavailable_for, app_password_errors).
	ApplicationPasswords ApplicationPasswordRules
}

// PublishedFilters applies the site's PHP filters to the service: it reads
// FiltersOption at most once per Refresh (a cached periodic re-read, so a
// change the bridge publishes takes effect within Refresh) and registers Go
// filters on the spec's hooks that return the published values. It is safe
// for concurrent use.
//
// The capability filter fails closed: where the bridge runs, an option
// that is missing, not an array, or holds a rest_capability that is not a
// non-empty string (or is still FiltersPending) answers "do_not_allow" and
// is read again at the next check, not after Refresh. On a network
// (Network set) the capability is read from the options of the request's
// site (core.SiteFrom of the context the REST server passes), which the
// bridge on that site writes; the other filters stay the main site's.
type PublishedFilters struct {
	// Options are the site's options (on a network: the main site's).
	Options OptionReader
	// Network, when set, reads each site's own FiltersOption for the
	// capability of a request to that site.
	Network *Network
	// Refresh is the re-read period; 0 means DefaultFiltersRefresh.
	Refresh time.Duration
	// Logger receives read failures and refusals; nil means
	// slog.Default().
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu    sync.Mutex
	sites map[int64]*filtersEntry // by site id; 0 is Options
	// bridgeSeen is set once the site showed that the bridge runs there:
	// from then on a missing option refuses.
	bridgeSeen bool
}

// filtersEntry is what was last read of one site's FiltersOption.
type filtersEntry struct {
	results   FilterResults
	refusal   string    // why the capability is refused; "" when it is not
	attempted time.Time // the last read, successful or not
	read      bool      // results hold a successful read
	logged    string    // the refusal last logged
}

// retryUnread is how soon a failed first read is tried again. An option
// that refuses the capability is read again at the next check.
const retryUnread = time.Second

// FiltersPending is the key of FiltersOption that `mailsvc wp install`
// writes before the bridge's first page load: the bridge is installed but
// has not evaluated the site's filters yet, so the capability is refused
// until it has.
const FiltersPending = "pending"

// bridgeOptions are options the bridge writes on every page load beside
// FiltersOption: finding one shows the bridge runs on the site.
var bridgeOptions = []string{FiltersOption, "mailsvc_host_hooks", "mailsvc_log_redact_patterns", "mailsvc_oauth_redirect_uris"}

// Results returns the published values of the site's (the main site's)
// option, reading it again when the last read is older than Refresh. ok
// is false while the option has never been read successfully (the
// database is unreachable; tried again after a second); a later failure
// keeps the previous values until the next Refresh. The other values of an
// option that refuses the capability still apply.
func (p *PublishedFilters) Results(ctx context.Context) (results FilterResults, ok bool) {
	e := p.entry(ctx, 0)
	return e.results, e.read
}

// capability returns what the capability filter answers for a request
// with ctx: the published capability ("" for none) or refused.
func (p *PublishedFilters) capability(ctx context.Context) (capability string, refused bool) {
	e := p.entry(ctx, p.siteOf(ctx))
	if !e.read || e.refusal != "" {
		return "", true
	}
	return e.results.RESTCapability, false
}

// entry returns the site's entry, read again when it is due. Site 0 is
// Options; any other is the network site's own options.
func (p *PublishedFilters) entry(ctx context.Context, site int64) filtersEntry {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sites == nil {
		p.sites = map[int64]*filtersEntry{}
	}
	e := p.sites[site]
	if e == nil {
		e = &filtersEntry{}
		p.sites[site] = e
	}
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	refresh := p.Refresh
	if refresh <= 0 {
		refresh = DefaultFiltersRefresh
	}
	switch {
	case !e.read:
		refresh = retryUnread
	case e.refusal != "":
		// Read again at once: a page load may have published it since.
		// Only an authenticated request gets this far.
		refresh = 0
	}
	if !e.attempted.IsZero() && now().Sub(e.attempted) < refresh {
		return *e
	}
	e.attempted = now()
	var options OptionReader = p.Options
	where := "the site"
	if site != 0 {
		options = blogOptions{p.Network, site}
		where = fmt.Sprintf("site %d", site)
	}
	r, state, err := readFilters(ctx, options)
	if err == nil && state == filtersMissing && !p.bridgeSeen {
		p.bridgeSeen, err = p.bridgeRuns(ctx)
	}
	log := p.Logger
	if log == nil {
		log = slog.Default()
	}
	if err != nil {
		log.Warn("cannot read the site's published filters", "site", where, "err", err)
		return *e
	}
	refusal := ""
	switch state {
	case filtersUsable:
		p.bridgeSeen = true
	case filtersPending:
		p.bridgeSeen = true
		refusal = fmt.Sprintf("the bridge has not run on %s since `mailsvc wp install`: load any page of the site so that it publishes the %s option", where, FiltersOption)
	case filtersMalformed:
		p.bridgeSeen = true
		refusal = fmt.Sprintf("the %s option of %s is malformed (not the array the bridge writes, or a rest_capability that is not a capability name): load any page of the site so that the bridge writes it again", FiltersOption, where)
	case filtersMissing:
		if p.bridgeSeen {
			refusal = fmt.Sprintf("the %s option of %s is missing though the bridge runs on the site: load any page of the site so that the bridge publishes it again", FiltersOption, where)
		}
	}
	if refusal != "" {
		if refusal != e.logged {
			log.Warn("the REST capability is refused (403 on every route there; SMTP AUTH too for the main site) until the bridge publishes the site's filters", "site", where, "reason", refusal)
		}
	} else if e.logged != "" {
		log.Info("the site's published filters are readable again", "site", where)
	}
	e.results, e.refusal, e.read, e.logged = r, refusal, true, refusal
	return *e
}

// bridgeRuns reports whether the site shows that the bridge runs there:
// one of bridgeOptions exists in Options (on a network, the main site's,
// where the must-use bridge runs as on every site).
func (p *PublishedFilters) bridgeRuns(ctx context.Context) (bool, error) {
	for _, name := range bridgeOptions {
		_, found, err := p.Options.Option(ctx, name)
		if err != nil {
			return false, fmt.Errorf("read the %s option: %w", name, err)
		}
		if found {
			return true, nil
		}
	}
	return false, nil
}

// blogOptions reads one network site's own options.
type blogOptions struct {
	n    *Network
	site int64
}

func (b blogOptions) Option(ctx context.Context, name string) (string, bool, error) {
	return b.n.BlogOption(ctx, b.site, name)
}

// filtersState is what readFilters found.
type filtersState int

const (
	filtersUsable    filtersState = iota
	filtersMissing                // no option
	filtersPending                // written by `mailsvc wp install`, not by the bridge yet
	filtersMalformed              // not an array, or a rest_capability that is not a non-empty string
)

// ReadFilterResults reads and decodes FiltersOption. A missing or
// malformed option, or a malformed value in it, is no override (the
// capability filter of PublishedFilters refuses on a missing or malformed
// option, or a malformed rest_capability).
func ReadFilterResults(ctx context.Context, options OptionReader) (FilterResults, error) {
	r, _, err := readFilters(ctx, options)
	return r, err
}

// readFilters reads and decodes FiltersOption and says whether it can be
// trusted.
func readFilters(ctx context.Context, options OptionReader) (FilterResults, filtersState, error) {
	var r FilterResults
	raw, found, err := options.Option(ctx, FiltersOption)
	if err != nil {
		return r, filtersMissing, fmt.Errorf("read the %s option: %w", FiltersOption, err)
	}
	if !found {
		return r, filtersMissing, nil
	}
	arr, ok := MaybeUnserialize(raw).(*Array)
	if !ok {
		return r, filtersMalformed, nil
	}
	state := filtersUsable
	if _, ok := arr.Get(FiltersPending); ok {
		state = filtersPending
	}
	if v, ok := arr.Get("rest_capability"); ok {
		if s, ok := v.(string); ok && strings.TrimSpace(s) != "" {
			r.RESTCapability = strings.TrimSpace(s)
		} else {
			state = filtersMalformed
		}
	}
	if v, ok := arr.Get("sensitive_keys"); ok {
		if keys, ok := v.(*Array); ok {
			for i := 0; i < keys.Len(); i++ {
				_, k := keys.At(i)
				if s, ok := k.(string); ok && strings.TrimSpace(s) != "" {
					r.SensitiveKeys = append(r.SensitiveKeys, strings.TrimSpace(s))
				}
			}
		}
	}
	if v, ok := arr.Get("log_retention_days"); ok {
		if n, ok := core.AsInt(v); ok && n >= 0 {
			r.LogRetentionDays = &n
		}
	}
	if v, ok := arr.Get("environment_type"); ok {
		if s, ok := v.(string); ok {
			r.EnvironmentType = strings.ToLower(strings.TrimSpace(s))
		}
	}
	if v, ok := arr.Get("api_debug_response_enabled"); ok {
		if b, ok := v.(bool); ok {
			r.APIDebugResponseEnabled = &b
		}
	}
	r.ApplicationPasswords = readApplicationPasswordRules(arr)
	return r, state, nil
}

// readApplicationPasswordRules reads what the bridge published of the
// application password filters. A value of the wrong type refuses: it
// is never read as "no rule".
func readApplicationPasswordRules(arr *Array) ApplicationPasswordRules {
	var r ApplicationPasswordRules
	if v, ok := arr.Get("app_passwords_unavailable"); ok {
		b, isBool := v.(bool)
		r.Unavailable = b || !isBool
	}
	if v, ok := arr.Get("app_passwords_unavailable_for"); ok {
		ids, isArray := v.(*Array)
		if !isArray {
			r.Unavailable = true
		}
		for i := 0; isArray && i < ids.Len(); i++ {
			_, id := ids.At(i)
			if n, ok := core.AsInt(id); ok {
				r.UnavailableFor = append(r.UnavailableFor, n)
			} else {
				r.Unavailable = true
			}
		}
	}
	if v, ok := arr.Get("app_password_errors"); ok {
		b, isBool := v.(bool)
		r.AskWordPress = b || !isBool
	}
	return r
}

// ApplicationPasswordRules implements ApplicationPasswordPolicy from the
// values the site of ctx published (each site's own on a network):
// unknown (ok false) until its option was read once. Where the option is
// refused (missing while the bridge runs, malformed, pending) no rule is
// returned, and the capability filter refuses every request there.
func (p *PublishedFilters) ApplicationPasswordRules(ctx context.Context) (ApplicationPasswordRules, bool) {
	e := p.entry(ctx, p.siteOf(ctx))
	return e.results.ApplicationPasswords, e.read
}

// siteOf is the site whose options govern a request with ctx: its own on
// a network, else 0 (Options).
func (p *PublishedFilters) siteOf(ctx context.Context) int64 {
	if p.Network != nil {
		if id, ok := core.SiteFrom(ctx); ok {
			return id
		}
	}
	return 0
}

// readTimeout bounds one read of the option from a filter.
const readTimeout = 5 * time.Second

// current is Results for a filter, which has no context of its own.
func (p *PublishedFilters) current() (FilterResults, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	return p.Results(ctx)
}

// requestContext returns the context.Context among a filter's arguments
// (the REST server passes the request's, which carries its site), else
// context.Background(); either bounded by readTimeout.
func requestContext(args []any) (context.Context, context.CancelFunc) {
	for _, a := range args {
		if ctx, ok := a.(context.Context); ok {
			return context.WithTimeout(ctx, readTimeout)
		}
	}
	return context.WithTimeout(context.Background(), readTimeout)
}

// Register adds the Go filters that return the published values to h:
// each returns its input unchanged when no PHP filter changes the value.
// Until the option has been read once, and while it refuses (see
// PublishedFilters), the capability filter answers "do_not_allow", which
// no user holds: a site that narrowed access by a filter is never opened
// up by an unreachable database or a deleted or overwritten option. The
// capability filter reads the site of a context.Context among its
// arguments (the REST server's request context).
func (p *PublishedFilters) Register(h *core.Hooks) {
	h.AddFilter(core.HookRESTCapability, func(v any, args ...any) any {
		ctx, cancel := requestContext(args)
		defer cancel()
		c, refused := p.capability(ctx)
		switch {
		case refused:
			return "do_not_allow"
		case c != "":
			return c
		}
		return v
	})
	h.AddFilter(core.HookSensitiveKeys, func(v any, _ ...any) any {
		keys, _ := v.([]string)
		r, _ := p.current()
		if len(r.SensitiveKeys) == 0 {
			return v
		}
		out := append([]string(nil), keys...)
		for _, k := range r.SensitiveKeys {
			if !core.IsSensitiveKey(k, out) {
				out = append(out, k)
			}
		}
		return out
	})
	h.AddFilter(core.HookLogRetentionDays, func(v any, _ ...any) any {
		if r, _ := p.current(); r.LogRetentionDays != nil {
			return *r.LogRetentionDays
		}
		return v
	})
	h.AddFilter(core.HookAPIDebugResponseEnable, func(v any, _ ...any) any {
		if r, _ := p.current(); r.APIDebugResponseEnabled != nil {
			return *r.APIDebugResponseEnabled
		}
		return v
	})
}
