package core

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// Settings is a connection's settings: key → JSON value (string, int64,
// float64, bool or nil).
type Settings map[string]any

// Clone returns a shallow copy of s.
func (s Settings) Clone() Settings {
	out := make(Settings, len(s))
	for k, v := range s {
		out[k] = v
	}
	return out
}

// String returns the value of key as a string ("" when absent). Numbers and
// booleans are formatted.
func (s Settings) String(key string) string {
	switch v := s[key].(type) {
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case nil:
		return ""
	default:
		if n, ok := AsInt(v); ok {
			return strconv.FormatInt(n, 10)
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// Int returns the value of key as an integer, or def when absent or not a
// whole number. Numeric strings count.
func (s Settings) Int(key string, def int64) int64 {
	if n, ok := AsInt(s[key]); ok {
		return n
	}
	if str, ok := s[key].(string); ok {
		if n, err := strconv.ParseInt(str, 10, 64); err == nil {
			return n
		}
	}
	return def
}

// Bool returns the value of key as a boolean, or def when absent. The
// strings "true", "1", "yes", "on" count as true, as constants are written.
func (s Settings) Bool(key string, def bool) bool {
	switch v := s[key].(type) {
	case bool:
		return v
	case string:
		switch v {
		case "true", "1", "yes", "on":
			return true
		case "false", "0", "no", "off", "":
			return false
		}
	default:
		if n, ok := AsInt(v); ok {
			return n != 0
		}
	}
	return def
}

// AsInt converts a JSON-decoded number (float64, json.Number) or a Go
// integer to int64, reporting false when v is not a whole number.
func AsInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int64:
		return n, true
	case int32:
		return int64(n), true
	case float64:
		if n != math.Trunc(n) || math.IsInf(n, 0) || math.Abs(n) > 1<<53 {
			return 0, false
		}
		return int64(n), true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

// Strings returns the value of key as a list of strings: a JSON list's
// string elements, or a comma-separated string split and trimmed (as a
// constant is written); nil when absent.
func (s Settings) Strings(key string) []string {
	var out []string
	switch v := s[key].(type) {
	case []any:
		for _, e := range v {
			if str, ok := e.(string); ok && str != "" {
				out = append(out, str)
			}
		}
	case []string:
		out = append(out, v...)
	case string:
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}
