package cli

import (
	"context"
	"testing"
	"time"
)

// optionMap is a wordpress.OptionReader over a map.
type optionMap map[string]string

func (m optionMap) Option(_ context.Context, name string) (string, bool, error) {
	v, ok := m[name]
	return v, ok, nil
}

func TestSiteOptions(t *testing.T) {
	summer := time.Date(2024, 7, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		site   siteOptions
		offset int
		zone   string
		admin  string
	}{
		{"standalone", siteOptions{}, 0, "UTC", ""},
		{"IANA name", siteOptions{options: optionMap{"timezone_string": "Europe/Paris", "gmt_offset": "0", "admin_email": "owner@example.com"}}, 7200, "Europe/Paris", "owner@example.com"},
		{"half-hour offset", siteOptions{options: optionMap{"timezone_string": "", "gmt_offset": "5.5"}}, 19800, "", ""},
		{"nothing set", siteOptions{options: optionMap{}}, 0, "UTC", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc, err := tt.site.TimeZone(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if _, off := summer.In(loc).Zone(); off != tt.offset {
				t.Errorf("offset %d, want %d", off, tt.offset)
			}
			if tt.zone != "" && loc.String() != tt.zone {
				t.Errorf("zone %q, want %q", loc, tt.zone)
			}
			admin, err := tt.site.AdminEmail(context.Background())
			if err != nil || admin != tt.admin {
				t.Errorf("admin %q %v, want %q", admin, err, tt.admin)
			}
		})
	}
}
