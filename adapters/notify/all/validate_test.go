package all

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/core"
)

// TestSettingsValidation checks each type's schema and rules: the fields
// a bad setting is reported on (a 422 validation_error at the HTTP edge).
func TestSettingsValidation(t *testing.T) {
	const token = "123456:AAHsecretsecretsecret"
	tests := []struct {
		name       string
		slug       string
		settings   core.Settings
		wantFields []string // nil: valid
	}{
		{"telegram ok numeric", "telegram", core.Settings{"bot_token": token, "chat_id": "-1001234567890"}, nil},
		{"telegram ok channel", "telegram", core.Settings{"bot_token": token, "chat_id": "@mailsvc_alerts"}, nil},
		{"telegram missing", "telegram", core.Settings{}, []string{"bot_token", "chat_id"}},
		{"telegram bad token and chat", "telegram", core.Settings{"bot_token": "not a token", "chat_id": "alerts"}, []string{"bot_token", "chat_id"}},
		{"telegram unknown key", "telegram", core.Settings{"bot_token": token, "chat_id": "1", "foo": "x"}, []string{"foo"}},
		{"slack ok", "slack", core.Settings{"webhook_url": "https://hooks.slack.com/services/T/B/x"}, nil},
		{"slack missing", "slack", core.Settings{}, []string{"webhook_url"}},
		{"slack not http", "slack", core.Settings{"webhook_url": "ftp://hooks.slack.com/x"}, []string{"webhook_url"}},
		{"slack no host", "slack", core.Settings{"webhook_url": "https:///services/x"}, []string{"webhook_url"}},
		{"slack private allowed by the type", "slack", core.Settings{"webhook_url": "http://127.0.0.1:9/x"}, nil},
		{"discord ok", "discord", core.Settings{"webhook_url": "https://discord.com/api/webhooks/1/abc"}, nil},
		{"discord bad", "discord", core.Settings{"webhook_url": "discord.com/api/webhooks/1/abc"}, []string{"webhook_url"}},
		{"teams ok", "teams", core.Settings{"webhook_url": "https://prod-00.westus.logic.azure.com/workflows/x"}, nil},
		{"teams number", "teams", core.Settings{"webhook_url": 5}, []string{"webhook_url"}},
		{"webhook ok with secret", "webhook", core.Settings{"url": "https://example.com/hook", "secret": "s3cret"}, nil},
		{"webhook ok without secret", "webhook", core.Settings{"url": "https://example.com/hook"}, nil},
		{"webhook missing url", "webhook", core.Settings{"secret": "s3cret"}, []string{"url"}},
		{"webhook javascript url", "webhook", core.Settings{"url": "javascript:alert(1)"}, []string{"url"}},
		{"email ok", "email", core.Settings{"to": "a@example.com, b@example.com", "connection_id": 2}, nil},
		{"email missing", "email", core.Settings{}, []string{"connection_id", "to"}},
		{"email bad address", "email", core.Settings{"to": "a@example.com, nope", "connection_id": 2}, []string{"to"}},
		{"email only commas", "email", core.Settings{"to": " , ", "connection_id": 2}, []string{"to"}},
		{"email bad connection", "email", core.Settings{"to": "a@example.com", "connection_id": 0}, []string{"connection_id"}},
		{"twilio ok", "twilio", core.Settings{"account_sid": "AC0123456789abcdef0123456789abcdef", "auth_token": "f00dfeedf00dfeedf00dfeedf00dfeed", "from": "+15005550006", "to": "+447700900123"}, nil},
		{"twilio missing", "twilio", core.Settings{}, []string{"account_sid", "auth_token", "from", "to"}},
		{"twilio bad numbers", "twilio", core.Settings{"account_sid": "AC0123456789abcdef0123456789abcdef", "auth_token": "f00dfeedf00dfeedf00dfeedf00dfeed", "from": "0123", "to": "447700900123"}, []string{"from", "to"}},
		{"email connection not a number", "email", core.Settings{"to": "a@example.com", "connection_id": "two"}, []string{"connection_id"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct, ok := core.LookupChannelType(tt.slug)
			if !ok {
				t.Fatalf("%s not registered", tt.slug)
			}
			err := ct.ValidateSettings(tt.settings)
			if tt.wantFields == nil {
				if err != nil {
					t.Fatalf("ValidateSettings = %v, want valid", err)
				}
				return
			}
			if core.ErrorCode(err) != core.EINVALID {
				t.Fatalf("ValidateSettings = %v, want %s", err, core.EINVALID)
			}
			var got []string
			for k := range core.ErrorFields(err) {
				got = append(got, k)
			}
			sort.Strings(got)
			if !reflect.DeepEqual(got, tt.wantFields) {
				t.Errorf("fields = %v, want %v (%v)", got, tt.wantFields, err)
			}
			if s, ok := tt.settings["bot_token"].(string); ok && s != "" && strings.Contains(err.Error(), s) {
				t.Errorf("error %q shows the bot token", err)
			}
		})
	}
}
