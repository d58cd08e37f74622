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
type PublishedFilters struct {
	Options OptionReader
	// Refresh is the re-read period; 0 means DefaultFiltersRefresh.
	Refresh time.Duration
	// Logger receives read failures; nil means slog.Default().
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu        sync.Mutex
	results   FilterResults
	attempted time.Time // the last read, successful or not
	read      bool      // results hold a successful read
}

// retryUnread is how soon a failed first read is tried again.
const retryUnread = time.Second

// Results returns the published values, reading the option again when the
// last read is older than Refresh. ok is false while the option has never
// been read successfully (the database is unreachable; tried again after a
// second); a later failure keeps the previous values until the next
// Refresh.
func (p *PublishedFilters) Results(ctx context.Context) (results FilterResults, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now
	if p.Now != nil {
		now = p.Now
	}
	refresh := p.Refresh
	if refresh <= 0 {
		refresh = DefaultFiltersRefresh
	}
	if !p.read {
		refresh = retryUnread
	}
	if !p.attempted.IsZero() && now().Sub(p.attempted) < refresh {
		return p.results, p.read
	}
	p.attempted = now()
	r, err := ReadFilterResults(ctx, p.Options)
	if err != nil {
		log := p.Logger
		if log == nil {
			log = slog.Default()
		}
		log.Warn("cannot read the site's published filters", "err", err)
		return p.results, p.read
	}
	p.results, p.read = r, true
	return r, true
}

// ReadFilterResults reads and decodes FiltersOption. A missing or
// malformed option, or a malformed value in it, is no override.
func ReadFilterResults(ctx context.Context, options OptionReader) (FilterResults, error) {
	var r FilterResults
	raw, found, err := options.Option(ctx, FiltersOption)
	if err != nil {
		return r, fmt.Errorf("read the %s option: %w", FiltersOption, err)
	}
	if !found {
		return r, nil
	}
	arr, ok := MaybeUnserialize(raw).(*Array)
	if !ok {
		return r, nil
	}
	if v, ok := arr.Get("rest_capability"); ok {
		if s, ok := v.(string); ok {
			r.RESTCapability = strings.TrimSpace(s)
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
	return r, nil
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
// published values: unknown (ok false) until the option was read once.
func (p *PublishedFilters) ApplicationPasswordRules(ctx context.Context) (ApplicationPasswordRules, bool) {
	r, ok := p.Results(ctx)
	return r.ApplicationPasswords, ok
}

// readTimeout bounds one read of the option from a filter.
const readTimeout = 5 * time.Second

// current is Results for a filter, which has no context of its own.
func (p *PublishedFilters) current() (FilterResults, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	return p.Results(ctx)
}

// Register adds the Go filters that return the published values to h:
// each returns its input unchanged when no PHP filter changes the value.
// Until the option has been read once the capability filter answers
// "do_not_allow", which no user holds: a site that narrowed access by a
// filter is never opened up by an unreachable database.
func (p *PublishedFilters) Register(h *core.Hooks) {
	h.AddFilter(core.HookRESTCapability, func(v any, _ ...any) any {
		r, ok := p.current()
		switch {
		case !ok:
			return "do_not_allow"
		case r.RESTCapability != "":
			return r.RESTCapability
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
