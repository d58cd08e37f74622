package sparkpost_test

import (
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/drivertest"
	"github.com/mailsvc/mailsvc/drivers/sparkpost"
	"github.com/mailsvc/mailsvc/test/fakes/sparkpostfake"
)

const testKey = "0123456789abcdef0123456789abcdef01234567"

var harness = drivertest.Harness{
	Slug:     sparkpost.Slug,
	Key:      testKey,
	WrongKey: "ffffffffffffffffffffffffffffffffffffffff",
	// An inline image is named by its Content-ID.
	AttachmentName: func(a core.Attachment) string {
		if a.Inline {
			return a.ContentID
		}
		return a.Filename
	},
	AttachmentsByName: true,
	DefaultBaseURL:    sparkpost.BaseURLUS,
	MaxMessageBytes:   sparkpost.MaxMessageBytes,
	APIKeyConstant:    "MAILSVC_SPARKPOST_API_KEY",
	UnknownKey:        "domain",
	Defaulted:         []string{"region"},
	SchemaCases: []drivertest.SchemaCase{
		{Name: "eu region", Settings: core.Settings{"api_key": "k", "region": "eu"}},
		{Name: "unknown region", Settings: core.Settings{"api_key": "k", "region": "ap"}, WantFields: []string{"region"}},
	},
}

func TestConformance(t *testing.T) { drivertest.RunJSONAPI(t, harness, sparkpostfake.New) }

// TestRegionChoosesTheAPI: region eu talks to the EU API, base_url
// overrides the region.
func TestRegionChoosesTheAPI(t *testing.T) {
	tests := []struct {
		settings core.Settings
		want     string
	}{
		{core.Settings{"api_key": "k"}, sparkpost.BaseURLUS},
		{core.Settings{"api_key": "k", "region": "us"}, sparkpost.BaseURLUS},
		{core.Settings{"api_key": "k", "region": "eu"}, sparkpost.BaseURLEU},
		{core.Settings{"api_key": "k", "region": "eu", "base_url": "https://api.sparkpost.com/"}, sparkpost.BaseURLUS},
	}
	for _, tc := range tests {
		tr := drivertest.NewTransport(t, sparkpost.Slug, tc.settings).(interface{ BaseURL() string })
		if tr.BaseURL() != tc.want {
			t.Errorf("%v: BaseURL %q, want %q", tc.settings, tr.BaseURL(), tc.want)
		}
	}
}
