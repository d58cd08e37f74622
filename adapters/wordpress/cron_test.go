package wordpress

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"
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

// cronEvent is one scheduled event as wp_schedule_event stores it.
func cronEvent(schedule string, interval int64) *Array {
	e := NewArray()
	_ = e.Set("schedule", schedule)
	_ = e.Set("args", NewArray())
	_ = e.Set("interval", interval)
	instances := NewArray()
	_ = instances.Set("40cd750bba9870f18aada2478b24840a", e)
	return instances
}

// cronOption is a cron option with the bridge's event due alone at 1000,
// beside wp_version_check at 2000, and the version.
func cronOption(t *testing.T) string {
	t.Helper()
	alone := NewArray()
	_ = alone.Set(CronHook, cronEvent("mailsvc_minute", 60))
	shared := NewArray()
	_ = shared.Set("wp_version_check", cronEvent("twicedaily", 43200))
	_ = shared.Set(CronHook, cronEvent("mailsvc_minute", 60))
	cron := NewArray()
	_ = cron.Set(int64(1000), alone)
	_ = cron.Set(int64(2000), shared)
	_ = cron.Set("version", int64(2))
	s, err := Serialize(cron)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestWithoutCronHook(t *testing.T) {
	raw := cronOption(t)
	out, removed, err := WithoutCronHook(raw, CronHook)
	if err != nil || removed != 2 {
		t.Fatalf("WithoutCronHook = %d, %v", removed, err)
	}
	if strings.Contains(out, CronHook) || !strings.Contains(out, "wp_version_check") {
		t.Errorf("the cron option after: %s", out)
	}
	arr := MaybeUnserialize(out).(*Array)
	if keys := fmt.Sprint(arr.Keys()); keys != "[2000 version]" {
		t.Errorf("due times after: %s, want [2000 version] (the one left empty dropped)", keys)
	}
	if again, n, err := WithoutCronHook(out, CronHook); again != out || n != 0 || err != nil {
		t.Errorf("a second pass changed %q into %q (%d, %v)", out, again, n, err)
	}
	if _, _, err := WithoutCronHook("s:3:\"abc\";", CronHook); err == nil {
		t.Error("a cron option that is not an array was accepted")
	}
}

// TestUnscheduleCronHook checks that the bridge's event leaves the cron
// option of the options table it is given, that the other events stay,
// and that another options table is untouched (which tables are a
// network's sites' is store's OptionsTables).
func TestUnscheduleCronHook(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		for _, table := range []string{"wpc_options", "wpc_2_options"} {
			mustExec(t, db, "CREATE TABLE "+table+" (option_name VARCHAR(191), option_value TEXT, autoload VARCHAR(20))")
			mustExec(t, db, "INSERT INTO "+table+" (option_name, option_value, autoload) VALUES ('cron', ?, 'yes')", cronOption(t))
		}
		cron := func(table string) string {
			var v string
			db.Raw("SELECT option_value FROM " + table + " WHERE option_name = 'cron'").Scan(&v)
			return v
		}
		if n, err := UnscheduleCronHook(ctx, db, "wpc_options", CronHook); n != 2 || err != nil {
			t.Errorf("UnscheduleCronHook(wpc_options) = %d, %v", n, err)
		}
		if v := cron("wpc_options"); strings.Contains(v, CronHook) || !strings.Contains(v, "wp_version_check") {
			t.Errorf("wpc_options cron after: %s", v)
		}
		if n, err := UnscheduleCronHook(ctx, db, "wpc_options", CronHook); n != 0 || err != nil {
			t.Errorf("a second UnscheduleCronHook(wpc_options) = %d, %v", n, err)
		}
		if v := cron("wpc_2_options"); !strings.Contains(v, CronHook) {
			t.Errorf("the other options table lost the event: %s", v)
		}
	})
}
