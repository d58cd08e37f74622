package all

import (
	"testing"

	"github.com/mailsvc/mailsvc/core"
)

func TestEveryTypeRegisteredWithSecretsSensitive(t *testing.T) {
	tests := []struct {
		slug      string
		sensitive []string
	}{
		{"telegram", []string{"bot_token"}},
		{"slack", []string{"webhook_url"}},
		{"discord", []string{"webhook_url"}},
		{"teams", []string{"webhook_url"}},
		{"webhook", []string{"url", "secret"}},
		{"email", nil},
		{"twilio", []string{"auth_token"}},
	}
	for _, tt := range tests {
		ct, ok := core.LookupChannelType(tt.slug)
		if !ok {
			t.Errorf("%s is not registered", tt.slug)
			continue
		}
		for _, key := range tt.sensitive {
			if f := ct.Field(key); f == nil || !f.Sensitive {
				t.Errorf("%s.%s is not a sensitive field", tt.slug, key)
			}
		}
	}
	if n := len(core.ChannelTypes()); n != len(tests) {
		t.Errorf("%d channel types registered, want %d", n, len(tests))
	}
}
