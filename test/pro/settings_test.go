package protest

import (
	"bytes"
	"testing"
)

func TestProSettingsThroughTheBinary(t *testing.T) {
	_, call := start(t, t.TempDir())
	tests := []struct {
		name, method, body string
		status             int
		contains           []string
	}{
		{"defaults", "GET", "", 200, []string{`"max_retries":3`, `"plugin_exclusions_enabled":false`, `"excluded_plugins":[]`, `"disabled_log_sources":[]`}},
		{"update", "PUT", `{"max_retries":0,"plugin_exclusions_enabled":true,"excluded_plugins":["woocommerce","woocommerce"],"disabled_log_sources":["sendmail"]}`, 200,
			[]string{`"max_retries":0`, `"plugin_exclusions_enabled":true`, `"excluded_plugins":["woocommerce"]`, `"disabled_log_sources":["sendmail"]`}},
		{"malformed", "PUT", `{"max_retries":1`, 400, []string{`"code":"bad_request"`}},
		{"out of range", "PUT", `{"max_retries":11}`, 422, []string{`"code":"validation_error"`, `"max_retries":`}},
		{"unknown key", "PUT", `{"max_retry":1}`, 422, []string{`"max_retry":"Unknown setting."`}},
		{"bad list", "PUT", `{"disabled_log_sources":"sendmail"}`, 422, []string{`"disabled_log_sources":`}},
		{"kept after refusals", "GET", "", 200, []string{`"max_retries":0`, `"excluded_plugins":["woocommerce"]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(tt.method, "/pro/settings", tt.body)
			if r.Status != tt.status {
				t.Fatalf("%d %s, want %d", r.Status, r.Body, tt.status)
			}
			for _, c := range tt.contains {
				if !bytes.Contains(r.Body, []byte(c)) {
					t.Errorf("%s does not contain %s", r.Body, c)
				}
			}
		})
	}
}
