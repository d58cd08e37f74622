package core

import "sync"

// Hook names of the spec's Events part. Filters transform a value; events
// (actions) notify.
const (
	HookTestEmailSent          = "mail_svc_test_email_sent"
	HookWebhookReceived        = "mail_svc_pro_webhook_received"
	HookWebhookSES             = "mail_svc_pro_webhook_ses"
	HookAPIDebug               = "mail_svc_api_debug"
	HookRESTCapability         = "mail_svc_rest_capability"
	HookSensitiveKeys          = "mail_svc_sensitive_keys"
	HookLogRetentionDays       = "mail_svc_log_retention_days"
	HookGoogleRedirectURI      = "mail_svc_google_oauth_redirect_uri"
	HookMicrosoftRedirectURI   = "mail_svc_microsoft_oauth_redirect_uri"
	HookZohoRedirectURI        = "mail_svc_zoho_oauth_redirect_uri"
	HookAPIDebugResponseEnable = "mail_svc_api_debug_response_enabled"
	// HookLogRedactPatterns filters the []string of site-specific
	// patterns whose matches the redacted log_body mode replaces with
	// [redacted] (see app/logbody); the WordPress bridge publishes the
	// PHP filter of the same name.
	HookLogRedactPatterns = "mail_svc_log_redact_patterns"
)

// Filter transforms a hook's value; args are the hook's extra arguments.
type Filter func(value any, args ...any) any

// Action is called when an event fires.
type Action func(args ...any)

// Hooks holds the registered filters and actions: the Go form of the
// spec's host-side hooks. The zero value is ready to use and safe for
// concurrent use.
type Hooks struct {
	mu      sync.RWMutex
	filters map[string][]Filter
	actions map[string][]Action
}

// AddFilter registers f on the named filter; filters run in the order added.
func (h *Hooks) AddFilter(name string, f Filter) {
	h.mu.Lock()
	defer h.mu.Unlock()
	addTo(&h.filters, name, f)
}

// addTo appends v to the list of name in *m, making the map on first
// use.
func addTo[T any](m *map[string][]T, name string, v T) {
	if *m == nil {
		*m = map[string][]T{}
	}
	(*m)[name] = append((*m)[name], v)
}

// ApplyFilters passes value through every filter registered on name and
// returns the result. A nil *Hooks returns value unchanged.
func (h *Hooks) ApplyFilters(name string, value any, args ...any) any {
	if h == nil {
		return value
	}
	h.mu.RLock()
	fs := h.filters[name]
	h.mu.RUnlock()
	for _, f := range fs {
		value = f(value, args...)
	}
	return value
}

// AddAction registers a on the named event.
func (h *Hooks) AddAction(name string, a Action) {
	h.mu.Lock()
	defer h.mu.Unlock()
	addTo(&h.actions, name, a)
}

// HasAction reports whether any action is registered on name, so a caller
// can skip building an event's payload that nobody would receive.
func (h *Hooks) HasAction(name string) bool {
	if h == nil {
		return false
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.actions[name]) > 0
}

// DoAction fires the named event with args. A nil *Hooks does nothing.
func (h *Hooks) DoAction(name string, args ...any) {
	if h == nil {
		return
	}
	h.mu.RLock()
	as := h.actions[name]
	h.mu.RUnlock()
	for _, a := range as {
		a(args...)
	}
}
