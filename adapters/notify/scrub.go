package notify

import "github.com/mailsvc/mailsvc/core"

// Scrub returns err so that its text never shows any of the non-empty
// secrets, its chain (and so its class) kept: it is core.Scrub.
func Scrub(err error, secrets ...string) error { return core.Scrub(err, secrets...) }

// ScrubText returns text with core.Mask in place of every non-empty
// secret it holds: it is core.ScrubText.
func ScrubText(text string, secrets ...string) string { return core.ScrubText(text, secrets...) }
