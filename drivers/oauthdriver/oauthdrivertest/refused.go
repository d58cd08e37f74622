package oauthdrivertest

import (
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/core"
)

// CheckRefused fails the test unless err is a permanent error whose text
// shows none of tokens (access tokens, or prefixes of them).
func CheckRefused(t *testing.T, err error, tokens ...string) {
	t.Helper()
	if err == nil || core.IsTemporary(err) {
		t.Fatalf("err = %v, want a permanent error", err)
	}
	for _, tok := range tokens {
		if strings.Contains(err.Error(), tok) {
			t.Fatalf("error %q shows a token", err)
		}
	}
}
