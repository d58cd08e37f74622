package wordpress

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"reflect"
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
