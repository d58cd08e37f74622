package sparkpost_test

import (
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/drivertest"
	"github.com/mailsvc/mailsvc/drivers/sparkpost"
)

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
