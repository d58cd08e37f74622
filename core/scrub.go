package core

import "strings"

// Scrub returns err so that its text never shows any of the non-empty
// secrets: when its text holds one, err is wrapped in an error whose text
// shows Mask in place of every secret and whose chain (and so its
// temporary or permanent class) is err's. A nil err stays nil.
func Scrub(err error, secrets ...string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	for _, s := range secrets {
		if s != "" && strings.Contains(msg, s) {
			return &scrubbedError{err: err, secrets: secrets}
		}
	}
	return err
}

// ScrubText returns text with Mask in place of every non-empty secret it
// holds.
func ScrubText(text string, secrets ...string) string {
	for _, s := range secrets {
		if s != "" {
			text = strings.ReplaceAll(text, s, Mask)
		}
	}
	return text
}

// scrubbedError hides secrets in the text of the error it wraps, keeping
// its chain intact.
type scrubbedError struct {
	err     error
	secrets []string
}

func (e *scrubbedError) Error() string { return ScrubText(e.err.Error(), e.secrets...) }

func (e *scrubbedError) Unwrap() error { return e.err }
