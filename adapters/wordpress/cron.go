package wordpress

import (
	"context"
	"fmt"
	"time"
)

// CronSchedule reads WP-cron's schedule from the site's cron option (an
// array of due timestamp => events, plus "version").
type CronSchedule struct {
	Options OptionReader
}

// NextCronEvent returns the earliest due time in the cron option; false
// when nothing is scheduled (or the option is missing).
func (c CronSchedule) NextCronEvent(ctx context.Context) (time.Time, bool, error) {
	raw, found, err := c.Options.Option(ctx, "cron")
	if err != nil {
		return time.Time{}, false, fmt.Errorf("read the cron option: %w", err)
	}
	if !found {
		return time.Time{}, false, nil
	}
	arr, ok := MaybeUnserialize(raw).(*Array)
	if !ok {
		return time.Time{}, false, fmt.Errorf("the cron option is not an array")
	}
	var earliest int64
	for _, k := range arr.Keys() {
		if ts, ok := k.(int64); ok && (earliest == 0 || ts < earliest) {
			earliest = ts
		}
	}
	if earliest == 0 {
		return time.Time{}, false, nil
	}
	return time.Unix(earliest, 0).UTC(), true, nil
}
