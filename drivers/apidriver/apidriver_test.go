package apidriver_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
)

func TestScrub(t *testing.T) {
	const key, secret = "AKIA-KEY-123", "s3cr3t/value"
	tests := []struct {
		name      string
		err       error
		secrets   []string
		wantText  string
		wantSame  bool // the error is returned as it is
		temporary bool
	}{
		{"nil stays nil", nil, []string{key}, "", true, false},
		{"no secret in the text", core.Temporary(errors.New("dial tcp: refused")), []string{key}, "temporary failure: dial tcp: refused", true, true},
		{"one secret", core.Permanent(fmt.Errorf("GET /x?k=%s: 401", key)), []string{key}, "permanent failure: GET /x?k=" + core.Mask + ": 401", false, false},
		{"every occurrence", core.Temporary(fmt.Errorf("%s and %s", key, key)), []string{key}, "temporary failure: " + core.Mask + " and " + core.Mask, false, true},
		{"every secret when one shows", core.Temporary(fmt.Errorf("url /%s/%s", key, secret)), []string{secret, key}, "temporary failure: url /" + core.Mask + "/" + core.Mask, false, true},
		{"empty secrets are ignored", errors.New("plain text"), []string{"", ""}, "plain text", true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := apidriver.Scrub(tc.err, tc.secrets...)
			if tc.err == nil {
				if got != nil {
					t.Fatalf("Scrub(nil) = %v", got)
				}
				return
			}
			if got.Error() != tc.wantText {
				t.Errorf("text %q, want %q", got.Error(), tc.wantText)
			}
			if (got == tc.err) != tc.wantSame {
				t.Errorf("returned the same error: %v, want %v", got == tc.err, tc.wantSame)
			}
			if !errors.Is(got, tc.err) {
				t.Errorf("the scrubbed error does not wrap the original")
			}
			var de *core.DeliveryError
			if tc.temporary && (!errors.As(got, &de) || !core.IsTemporary(got)) {
				t.Errorf("the class was lost: %v", got)
			}
			for _, s := range tc.secrets {
				if s != "" && strings.Contains(got.Error(), s) {
					t.Errorf("text shows a secret: %q", got.Error())
				}
			}
		})
	}
	ctxErr := apidriver.Scrub(core.Temporary(fmt.Errorf("post %s: %w", key, context.DeadlineExceeded)), key)
	if !errors.Is(ctxErr, context.DeadlineExceeded) {
		t.Errorf("the chain was cut: %v", ctxErr)
	}
}

func TestSummary(t *testing.T) {
	long := strings.Repeat("x", 600)
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"trimmed", "  {\"errors\":[]}\n", `{"errors":[]}`},
		{"empty", "", ""},
		{"exactly the limit", strings.Repeat("y", 500), strings.Repeat("y", 500)},
		{"cut", long, strings.Repeat("x", 500) + "..."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := apidriver.Summary(tc.in); got != tc.want {
				t.Errorf("Summary(string) = %q, want %q", got, tc.want)
			}
			if got := apidriver.Summary([]byte(tc.in)); got != tc.want {
				t.Errorf("Summary([]byte) = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestSender(t *testing.T) {
	from := core.Address{Name: "Shop", Email: "shop@example.com"}
	tests := []struct {
		name     string
		settings core.Settings
		want     core.Address
	}{
		{"no override", core.Settings{}, from},
		{"email only", core.Settings{"from_email": "noreply@example.net"}, core.Address{Name: "Shop", Email: "noreply@example.net"}},
		{"name only", core.Settings{"from_name": "Net"}, core.Address{Name: "Net", Email: "shop@example.com"}},
		{"both", core.Settings{"from_email": "noreply@example.net", "from_name": "Net"}, core.Address{Name: "Net", Email: "noreply@example.net"}},
		{"empty strings", core.Settings{"from_email": "", "from_name": ""}, from},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := apidriver.SenderOf(tc.settings).Apply(from); got != tc.want {
				t.Errorf("Apply = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestBaseURL(t *testing.T) {
	const def = "https://api.example.com"
	tests := []struct {
		in   any
		want string
	}{
		{nil, def},
		{"", def},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"http://127.0.0.1:8080//", "http://127.0.0.1:8080"},
		{"https://proxy.example.com/v3/", "https://proxy.example.com/v3"},
	}
	for _, tc := range tests {
		s := core.Settings{}
		if tc.in != nil {
			s["base_url"] = tc.in
		}
		if got := apidriver.BaseURL(s, def); got != tc.want {
			t.Errorf("BaseURL(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestHTTPClient(t *testing.T) {
	host := &http.Client{}
	if got := apidriver.HTTPClient(core.DriverEnv{HTTPClient: host}); got != host {
		t.Errorf("HTTPClient did not return the host's client")
	}
	if got := apidriver.HTTPClient(core.DriverEnv{}); got != http.DefaultClient {
		t.Errorf("HTTPClient without a host client = %p, want http.DefaultClient", got)
	}
}

func TestFields(t *testing.T) {
	tests := []struct {
		field     core.Field
		wantKey   string
		wantType  string
		wantHelp  string
		wantLabel string
	}{
		{apidriver.FromEmailField("Sender address; must be verified."), "from_email", core.FieldEmail,
			"Sender address; must be verified. Empty: the message's own sender.", "From email"},
		{apidriver.APIKeyField("Server API token", "The server's token."), "api_key", core.FieldPassword,
			"The server's token.", "Server API token"},
		{apidriver.FromNameField(), "from_name", core.FieldString,
			"Sender display name. Empty: the message's own sender name.", "From name"},
		{apidriver.BaseURLField("Leave empty for the real API."), "base_url", core.FieldURL,
			"Leave empty for the real API.", "API base URL"},
	}
	for _, tc := range tests {
		f := tc.field
		wantRequired := tc.wantKey == "api_key"
		if f.Key != tc.wantKey || string(f.Type) != string(tc.wantType) || f.Help != tc.wantHelp || f.Label != tc.wantLabel || f.Required != wantRequired {
			t.Errorf("field = %+v, want key %s type %s label %q help %q, required %v", f, tc.wantKey, tc.wantType, tc.wantLabel, tc.wantHelp, wantRequired)
		}
	}
}
