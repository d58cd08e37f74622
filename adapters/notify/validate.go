package notify

import (
	"regexp"
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// PatternRule is one setting that must match a pattern once trimmed of
// spaces, and the message shown under it when it does not.
type PatternRule struct {
	Key     string
	Pattern *regexp.Regexp
	Message string
}

// ValidatePatterns checks the settings against rules and returns the
// failing keys with their messages (an empty map when all match).
func ValidatePatterns(s core.Settings, rules ...PatternRule) map[string]string {
	fields := map[string]string{}
	for _, r := range rules {
		if !r.Pattern.MatchString(strings.TrimSpace(s.String(r.Key))) {
			fields[r.Key] = r.Message
		}
	}
	return fields
}
