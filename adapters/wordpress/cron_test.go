package wordpress

import (
	"context"
	"testing"
	"time"
)

// cronOptions is an OptionReader over a map.
type cronOptions map[string]string

func (m cronOptions) Option(_ context.Context, name string) (string, bool, error) {
	v, ok := m[name]
	return v, ok, nil
}

func TestNextCronEvent(t *testing.T) {
	for _, tt := range []struct {
		name, option string
		set          bool
		want         int64
		ok, err      bool
	}{
		{"earliest of several", `a:3:{i:1700000300;a:0:{}i:1700000100;a:0:{}s:7:"version";i:2;}`, true, 1700000100, true, false},
		{"only the version", `a:1:{s:7:"version";i:2;}`, true, 0, false, false},
		{"no option", "", false, 0, false, false},
		{"not an array", `s:3:"abc";`, true, 0, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opts := cronOptions{}
			if tt.set {
				opts["cron"] = tt.option
			}
			got, ok, err := CronSchedule{Options: opts}.NextCronEvent(context.Background())
			if (err != nil) != tt.err || ok != tt.ok || ok && !got.Equal(time.Unix(tt.want, 0)) {
				t.Errorf("= %v, %v, %v; want %d, %v, error %v", got, ok, err, tt.want, tt.ok, tt.err)
			}
		})
	}
}
