package apidriver_test

import (
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/apidriver"
)

// TestIdempotencyKey: a key is the Message-ID in the provider's
// characters and a digest, within the provider's length; the same
// message and recipients make the same key, while other recipients (a
// part), a resend by hand or another Message-ID make another; a message
// without a Message-ID has none.
func TestIdempotencyKey(t *testing.T) {
	lettersOnly := func(r rune) rune {
		if r >= 'a' && r <= 'z' {
			return r
		}
		return -1
	}
	base := func() *core.Message {
		return &core.Message{From: core.Address{Email: "f@example.com"}, Subject: "s",
			To: []core.Address{{Email: "a@example.com"}, {Email: "b@example.com"}}}
	}
	first := apidriver.IdempotencyKey(base().WithMessageID("<abc.1@x.example>"), lettersOnly, 64)
	tests := []struct {
		name     string
		msg      func() *core.Message
		maxLen   int
		wantLen  int    // 0: no check
		wantHead string // the key's start
		sameAs   bool   // the key equals first's
	}{
		{name: "the same message again", msg: func() *core.Message { return base().WithMessageID("<abc.1@x.example>") },
			maxLen: 64, wantHead: "abcxexample_", sameAs: true},
		{name: "recipients in another case", msg: func() *core.Message {
			m := base().WithMessageID("<abc.1@x.example>")
			m.To[0].Email = "A@Example.com"
			return m
		}, maxLen: 64, sameAs: true},
		{name: "a part of it", msg: func() *core.Message {
			m := base().WithMessageID("<abc.1@x.example>")
			m.Envelope = m.To[:1]
			return m
		}, maxLen: 64, wantHead: "abcxexample_"},
		{name: "resent by hand", msg: func() *core.Message {
			m := base().WithMessageID("<abc.1@x.example>")
			m.Resends = 1
			return m
		}, maxLen: 64, wantHead: "abcxexample_"},
		{name: "another Message-ID", msg: func() *core.Message { return base().WithMessageID("<abd.1@x.example>") }, maxLen: 64},
		{name: "a long Message-ID is cut to the length", msg: func() *core.Message {
			return base().WithMessageID("<" + strings.Repeat("z", 300) + "@x.example>")
		}, maxLen: 40, wantLen: 40, wantHead: "zzzz"},
	}
	for _, tc := range tests {
		key := apidriver.IdempotencyKey(tc.msg(), lettersOnly, tc.maxLen)
		if (key == first) != tc.sameAs {
			t.Errorf("%s: key %q, first %q: same %v, want %v", tc.name, key, first, key == first, tc.sameAs)
		}
		if !strings.HasPrefix(key, tc.wantHead) || len(key) > tc.maxLen || (tc.wantLen > 0 && len(key) != tc.wantLen) {
			t.Errorf("%s: key %q (%d bytes), want it to start %q within %d bytes", tc.name, key, len(key), tc.wantHead, tc.maxLen)
		}
	}
	if key := apidriver.IdempotencyKey(base(), lettersOnly, 64); key != "" {
		t.Errorf("a message without a Message-ID has the key %q, want none", key)
	}
	if h := apidriver.IdempotencyHeader(base(), lettersOnly, 64); h != nil {
		t.Errorf("a message without a Message-ID has the header %v, want none", h)
	}
}
