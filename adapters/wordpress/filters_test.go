package wordpress

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// optionStore is an OptionReader over a map that counts its reads and can
// be made to fail.
type optionStore struct {
	values map[string]string
	err    error
	reads  int
}

func (o *optionStore) Option(_ context.Context, name string) (string, bool, error) {
	o.reads++
	if o.err != nil {
		return "", false, o.err
	}
	v, ok := o.values[name]
	return v, ok, nil
}

func TestReadFilterResults(t *testing.T) {
	zero, thirty, on := int64(0), int64(30), true
	tests := []struct {
		name  string
		value string // "" leaves the option out
		want  FilterResults
	}{
		{"no option", "", FilterResults{}},
		{"not an array", `s:3:"abc";`, FilterResults{}},
		{"every filter, as update_option stores PHP's array",
			`a:4:{s:15:"rest_capability";s:11:"manage_mail";s:14:"sensitive_keys";a:2:{i:0;s:9:"client_id";i:1;s:3:" x ";}s:18:"log_retention_days";i:0;s:26:"api_debug_response_enabled";b:1;}`,
			FilterResults{RESTCapability: "manage_mail", SensitiveKeys: []string{"client_id", "x"}, LogRetentionDays: &zero, APIDebugResponseEnabled: &on}},
		{"retention as a numeric string", `a:1:{s:18:"log_retention_days";s:2:"30";}`, FilterResults{}},
		{"retention as an integer", `a:1:{s:18:"log_retention_days";i:30;}`, FilterResults{LogRetentionDays: &thirty}},
		{"the environment type", `a:1:{s:16:"environment_type";s:7:"Staging";}`, FilterResults{EnvironmentType: "staging"}},
		{"an environment type that is not a string", `a:1:{s:16:"environment_type";i:1;}`, FilterResults{}},
		{"negative retention and malformed values are no override",
			`a:4:{s:15:"rest_capability";a:0:{}s:14:"sensitive_keys";s:3:"abc";s:18:"log_retention_days";i:-1;s:26:"api_debug_response_enabled";s:1:"1";}`,
			FilterResults{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := &optionStore{values: map[string]string{}}
			if tt.value != "" {
				o.values[FiltersOption] = tt.value
			}
			got, err := ReadFilterResults(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestPublishedFiltersApply: the Go filters return the published values,
// leave a value alone that no PHP filter changes, re-read the option only
// after Refresh, and refuse every capability while the option was never
// readable.
func TestPublishedFiltersApply(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	o := &optionStore{values: map[string]string{}, err: errors.New("database is down")}
	p := &PublishedFilters{Options: o, Refresh: time.Minute, Now: func() time.Time { return now }, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	h := &core.Hooks{}
	p.Register(h)

	if got := h.ApplyFilters(core.HookRESTCapability, "manage_options", "/wp-json/mailsvc/v1/settings"); got != "do_not_allow" {
		t.Fatalf("capability with an unreadable option = %v, want do_not_allow", got)
	}

	o.err = nil
	if got := h.ApplyFilters(core.HookRESTCapability, "manage_options"); got != "do_not_allow" {
		t.Fatalf("capability right after a failed first read = %v, want do_not_allow until the retry", got)
	}
	now = now.Add(time.Second)
	if got := h.ApplyFilters(core.HookRESTCapability, "manage_options"); got != "manage_options" {
		t.Fatalf("capability without filters = %v", got)
	}
	if got := h.ApplyFilters(core.HookSensitiveKeys, []string{"region"}); !reflect.DeepEqual(got, []string{"region"}) {
		t.Fatalf("sensitive keys without filters = %v", got)
	}
	if got := h.ApplyFilters(core.HookLogRetentionDays, int64(90)); got != int64(90) {
		t.Fatalf("retention without filters = %v", got)
	}
	if got := h.ApplyFilters(core.HookAPIDebugResponseEnable, false); got != false {
		t.Fatalf("api debug without filters = %v", got)
	}

	o.values[FiltersOption] = `a:4:{s:15:"rest_capability";s:11:"manage_mail";s:14:"sensitive_keys";a:2:{i:0;s:9:"client_id";i:1;s:6:"REGION";}s:18:"log_retention_days";i:0;s:26:"api_debug_response_enabled";b:1;}`
	if got := h.ApplyFilters(core.HookRESTCapability, "manage_options"); got != "manage_options" {
		t.Fatalf("capability before Refresh passed = %v, want the cached manage_options", got)
	}
	reads := o.reads
	now = now.Add(time.Minute)
	if got := h.ApplyFilters(core.HookRESTCapability, "manage_options"); got != "manage_mail" {
		t.Fatalf("capability after Refresh = %v, want manage_mail", got)
	}
	if got := h.ApplyFilters(core.HookSensitiveKeys, []string{"region"}); !reflect.DeepEqual(got, []string{"region", "client_id"}) {
		t.Fatalf("sensitive keys = %v, want the configured ones plus client_id", got)
	}
	if got := h.ApplyFilters(core.HookLogRetentionDays, int64(90)); got != int64(0) {
		t.Fatalf("retention = %v, want 0", got)
	}
	if got := h.ApplyFilters(core.HookAPIDebugResponseEnable, false); got != true {
		t.Fatalf("api debug = %v, want true", got)
	}
	if o.reads != reads+1 {
		t.Fatalf("four filters within Refresh read the option %d times, want once", o.reads-reads)
	}

	// A failure after a successful read keeps the last values, and is not
	// retried before the next Refresh.
	o.err = errors.New("connection reset")
	now = now.Add(time.Minute)
	reads = o.reads
	for i := 0; i < 3; i++ {
		if got := h.ApplyFilters(core.HookRESTCapability, "manage_options"); got != "manage_mail" {
			t.Fatalf("capability after a failed re-read = %v, want the last published manage_mail", got)
		}
	}
	if o.reads != reads+1 {
		t.Fatalf("a failing database was read %d times within Refresh, want once", o.reads-reads)
	}
}

// TestPublishedFiltersFailClosed: where the bridge runs, the capability
// filter refuses an option that is missing (never published since `mailsvc
// wp install`, or deleted later), not an array, or whose rest_capability
// is not a capability name, with a log line that says how to publish it
// again; it reads such an option again at the next check, not after Refresh.
// A site without the bridge (nothing of it in the options) publishes no
// filter, and the capability is the default.
func TestPublishedFiltersFailClosed(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var logged strings.Builder
	o := &optionStore{values: map[string]string{}}
	p := &PublishedFilters{Options: o, Refresh: time.Minute, Now: func() time.Time { return now }, Logger: slog.New(slog.NewTextHandler(&logged, nil))}
	h := &core.Hooks{}
	p.Register(h)
	capability := func() any {
		now = now.Add(time.Second)
		return h.ApplyFilters(core.HookRESTCapability, "manage_options", "/wp-json/mailsvc/v1/settings", context.Background())
	}

	if got := capability(); got != "manage_options" {
		t.Fatalf("no bridge on the site: capability = %v, want the default", got)
	}
	now = now.Add(time.Minute)
	o.values[FiltersOption] = `a:1:{s:7:"pending";b:1;}` // as `mailsvc wp install` writes it
	if got := capability(); got != "do_not_allow" {
		t.Fatalf("installed, the bridge never ran: capability = %v, want do_not_allow", got)
	}
	if !strings.Contains(logged.String(), "load any page of the site") {
		t.Errorf("the refusal's log line does not say what to do:\n%s", logged.String())
	}
	for name, value := range map[string]string{
		"missing":                               "",
		"not an array":                          `s:11:"manage_mail";`,
		"a rest_capability that is an array":    `a:1:{s:15:"rest_capability";a:0:{}}`,
		"a rest_capability that is a number":    `a:1:{s:15:"rest_capability";i:5;}`,
		"an empty rest_capability":              `a:1:{s:15:"rest_capability";s:0:"";}`,
		"not PHP's serialization at all":        `{"rest_capability":"manage_mail"}`,
		"published, then deleted with the rest": "",
	} {
		o.values = map[string]string{"mailsvc_host_hooks": `a:0:{}`}
		if name == "published, then deleted with the rest" {
			o.values = map[string]string{}
		}
		if value != "" {
			o.values[FiltersOption] = value
		}
		now = now.Add(time.Minute) // a change is read within Refresh
		if got := capability(); got != "do_not_allow" {
			t.Errorf("%s: capability = %v, want do_not_allow", name, got)
		}
		o.values[FiltersOption] = `a:1:{s:15:"rest_capability";s:11:"manage_mail";}`
		if got := capability(); got != "manage_mail" {
			t.Errorf("%s, then published: capability = %v at the next check, want manage_mail", name, got)
		}
	}
}
