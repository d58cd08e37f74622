package wordpress

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SiteLocation returns the site's time zone as WordPress computes
// wp_timezone(): the option timezone_string when it names a zone, else a
// fixed zone of gmt_offset hours (fractions allowed, "5.5" is +05:30),
// else UTC.
func SiteLocation(ctx context.Context, options OptionReader) (*time.Location, error) {
	name, found, err := options.Option(ctx, "timezone_string")
	if err != nil {
		return nil, fmt.Errorf("read the site's time zone: %w", err)
	}
	if found && strings.TrimSpace(name) != "" {
		if loc, err := time.LoadLocation(strings.TrimSpace(name)); err == nil {
			return loc, nil
		}
	}
	off, found, err := options.Option(ctx, "gmt_offset")
	if err != nil {
		return nil, fmt.Errorf("read the site's UTC offset: %w", err)
	}
	if !found || strings.TrimSpace(off) == "" {
		return time.UTC, nil
	}
	hours, err := strconv.ParseFloat(strings.TrimSpace(off), 64)
	if err != nil || hours == 0 {
		return time.UTC, nil
	}
	secs := int(hours * 3600)
	sign := "+"
	if secs < 0 {
		sign = "-"
	}
	abs := secs
	if abs < 0 {
		abs = -abs
	}
	return time.FixedZone(fmt.Sprintf("UTC%s%02d:%02d", sign, abs/3600, abs%3600/60), secs), nil
}
