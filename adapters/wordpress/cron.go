package wordpress

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
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

// CronHook is the event the bridge schedules every minute
// (mailsvc_bridge_schedule_hooks) to run the service's hooks.
const CronHook = "mailsvc_bridge_run_hooks"

// WithoutCronHook returns the cron option raw (serialized) without any
// event of hook, dropping a due time left with no event, and how many
// events it removed. It returns raw unchanged when there are none.
func WithoutCronHook(raw, hook string) (string, int, error) {
	arr, ok := MaybeUnserialize(raw).(*Array)
	if !ok {
		return raw, 0, fmt.Errorf("the cron option is not an array")
	}
	out, removed := NewArray(), 0
	for i := range arr.Len() {
		k, v := arr.At(i)
		events, ok := v.(*Array)
		if _, due := k.(int64); !ok || !due {
			_ = out.Set(k, v) // "version", or what WordPress keeps beside
			continue
		}
		if e, has := events.Get(hook); has {
			if instances, ok := e.(*Array); ok {
				removed += instances.Len()
			} else {
				removed++
			}
			kept := NewArray()
			for j := range events.Len() {
				if ek, ev := events.At(j); ek != hook {
					_ = kept.Set(ek, ev)
				}
			}
			if kept.Len() == 0 {
				continue
			}
			events = kept
		}
		_ = out.Set(k, events)
	}
	if removed == 0 {
		return raw, 0, nil
	}
	s, err := Serialize(out)
	if err != nil {
		return raw, 0, err
	}
	return s, removed, nil
}

// UnscheduleCronHook removes every event of hook from the cron option of
// the options table (a full table name): what wp_clear_scheduled_hook
// does, for a command that runs no PHP. The update is made only if the
// option is still the value read (WordPress may write it meanwhile), and
// tried again from a fresh read when it was not. It returns how many
// events it removed.
func UnscheduleCronHook(ctx context.Context, db *gorm.DB, table, hook string) (int, error) {
	for range 5 {
		var rows []string
		err := db.WithContext(ctx).Raw("SELECT option_value FROM `" + table + "` WHERE option_name = 'cron' LIMIT 1").Scan(&rows).Error
		if err != nil {
			return 0, fmt.Errorf("read the cron option of %s: %w", table, err)
		}
		if len(rows) == 0 {
			return 0, nil
		}
		updated, removed, err := WithoutCronHook(rows[0], hook)
		if err != nil {
			return 0, fmt.Errorf("the cron option of %s: %w", table, err)
		}
		if removed == 0 {
			return 0, nil
		}
		res := db.WithContext(ctx).Exec("UPDATE `"+table+"` SET option_value = ? WHERE option_name = 'cron' AND option_value = ?", updated, rows[0])
		if res.Error != nil {
			return 0, fmt.Errorf("write the cron option of %s: %w", table, res.Error)
		}
		if res.RowsAffected > 0 {
			return removed, nil
		}
	}
	return 0, fmt.Errorf("the cron option of %s kept changing: %s is still scheduled", table, hook)
}
