package mailersend_test

import (
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/drivertest"
	"github.com/mailsvc/mailsvc/drivers/mailersend"
	"github.com/mailsvc/mailsvc/test/fakes/mailersendfake"
)

const testKey = "mlsn.0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// TestCustomHeadersOnlyWhenOn: the message's own headers go only when
// custom_headers is on (MailerSend's lower plans refuse them).
func TestCustomHeadersOnlyWhenOn(t *testing.T) {
	f := mailersendfake.New(testKey)
	defer f.Close()
	tests := []struct {
		on   any
		want int
	}{{nil, 0}, {false, 0}, {true, 2}}
	for i, tc := range tests {
		s := core.Settings{"api_key": testKey, "base_url": f.URL}
		if tc.on != nil {
			s["custom_headers"] = tc.on
		}
		_, m := drivertest.SendRecorded(t, drivertest.NewTransport(t, mailersend.Slug, s), drivertest.FullMessage(), f.Messages, i+1)
		if len(m.Headers) != tc.want {
			t.Errorf("custom_headers %v: headers %v, want %d", tc.on, m.Headers, tc.want)
		}
	}
}
