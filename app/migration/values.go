package migration

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Dict is an unserialized PHP array with string keys, as Site.Option
// returns it; its accessors make reading nested plugin options short.
type Dict map[string]any

// AsDict returns v as a Dict: a map[string]any, or a []any keyed "0",
// "1", …; nil for anything else.
func AsDict(v any) Dict {
	switch t := v.(type) {
	case map[string]any:
		return Dict(t)
	case Dict:
		return t
	case []any:
		d := Dict{}
		for i, x := range t {
			d[strconv.Itoa(i)] = x
		}
		return d
	}
	return nil
}

// Dict returns the nested array at key (nil when absent or not an array).
func (d Dict) Dict(key string) Dict { return AsDict(d[key]) }

// Str returns the value at key as PHP would print it ("" when absent).
func (d Dict) Str(key string) string { return PHPString(d[key]) }

// Bool returns PHP's truthiness of the value at key, with the plugins'
// string flags "yes"/"true"/"on" true and "no"/"false"/"off" false.
func (d Dict) Bool(key string) bool { return PHPBool(d[key]) }

// Int returns the value at key as an integer, def when absent or not
// numeric.
func (d Dict) Int(key string, def int64) int64 {
	switch t := d[key].(type) {
	case int64:
		return t
	case float64:
		return int64(t)
	case bool:
		if t {
			return 1
		}
		return 0
	case string:
		if n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64); err == nil {
			return n
		}
	}
	return def
}

// Keys returns the keys, sorted (numeric keys in numeric order first).
func (d Dict) Keys() []string {
	out := make([]string, 0, len(d))
	for k := range d {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		a, errA := strconv.Atoi(out[i])
		b, errB := strconv.Atoi(out[j])
		switch {
		case errA == nil && errB == nil:
			return a < b
		case errA == nil:
			return true
		case errB == nil:
			return false
		}
		return out[i] < out[j]
	})
	return out
}

// PHPString renders a scalar as PHP's string conversion does; arrays
// give "".
func PHPString(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case bool:
		if t {
			return "1"
		}
		return ""
	case int64:
		return strconv.FormatInt(t, 10)
	case int:
		return strconv.Itoa(t)
	case float64:
		return strconv.FormatFloat(t, 'f', -1, 64)
	}
	return ""
}

// PHPBool is PHP's truthiness, plus the plugins' flag words: "yes",
// "true", "on" are true; "no", "false", "off", "none" are false.
func PHPBool(v any) bool {
	switch t := v.(type) {
	case nil:
		return false
	case bool:
		return t
	case int64:
		return t != 0
	case int:
		return t != 0
	case float64:
		return t != 0
	case string:
		switch strings.ToLower(strings.TrimSpace(t)) {
		case "", "0", "no", "false", "off", "none":
			return false
		}
		return true
	case []any:
		return len(t) > 0
	case map[string]any:
		return len(t) > 0
	}
	return false
}

// PinnedIssue is the issue text for a credential a plugin takes from its
// own wp-config constant: name it and the MAILSVC_* constant that does
// the same for us.
func PinnedIssue(pluginConstant, driver, key string) string {
	return fmt.Sprintf("%s is defined in wp-config.php: the plugin took this value from it, not from its settings. Define %s_%s_%s instead, or enter the value in the connection.",
		pluginConstant, "MAILSVC", strings.ToUpper(driver), strings.ToUpper(key))
}

// LocalTime parses a site-local "2006-01-02 15:04:05" string (what
// current_time('mysql') wrote) in loc and returns it in UTC. A zero or
// unreadable value gives the zero time and false.
func LocalTime(s string, loc *time.Location) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasPrefix(s, "0000-00-00") {
		return time.Time{}, false
	}
	if loc == nil {
		loc = time.UTC
	}
	for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02 15:04:05.999999", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// ShiftedUnix converts a current_time('timestamp') number (Unix seconds
// shifted by the site's UTC offset at that moment) to UTC.
func ShiftedUnix(n int64, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	// The shifted number read as UTC is the local wall clock.
	wall := time.Unix(n, 0).UTC()
	return time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), 0, loc).UTC()
}
