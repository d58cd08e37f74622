package smtp

import (
	"math/rand/v2"
	"net/textproto"
	"regexp"
	"strings"
	"testing"
)

// The patterns messageID once matched with regular expressions; the
// hand-written scanners must agree with them.
var (
	queuedAsRE = regexp.MustCompile(`(?i)\bqueued as ([A-Za-z0-9._@<>-]+)`)
	sesIDRE    = regexp.MustCompile(`(?i)^(?:\d\.\d\.\d )?ok ([0-9a-f]{16,}-[0-9a-f-]+)`)
)

func messageIDByRegexp(reply, header string) string {
	if m := queuedAsRE.FindStringSubmatch(reply); m != nil {
		return strings.Trim(m[1], "<>")
	}
	if m := sesIDRE.FindStringSubmatch(strings.TrimSpace(reply)); m != nil {
		return m[1]
	}
	return strings.Trim(header, "<>")
}

// messageID takes the queue id from Postfix, Exim-like, go-smtp and SES
// replies as the regular expressions did, and falls back to the header.
func TestMessageIDFromReply(t *testing.T) {
	replies := []string{
		"2.0.0 Ok: queued as 4XyZ1k2Q", "OK: queued as SINK1", "2.0.0 OK: QUEUED AS <abc@host>",
		"queued as ", "requeued as X", "x queued as  Y", "_queued as Z", "-queued as Z-1.2",
		"queued as ;x queued as Y2", "Ok 0100018c1a2b3c4d-5e6f7a8b-9c0d-1e2f-3a4b-5c6d7e8f9a0b-000000",
		"2.0.0 Ok 0100018C1A2B3C4D-000000", "ok 0123456789abcde-0", "ok 0123456789abcdef-", "ok 0123456789abcdef-x",
		"  Ok 0123456789abcdef0-1  ", "2.0.0  Ok 0123456789abcdef-1", "Okay 0123456789abcdef-1", "", "250 fine",
		"1.2.3 ok 0123456789abcdef-12 trailing", "ok 0123456789abcdefg-1",
	}
	rng := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"queued as ", "QUEUED AS ", "ok ", "Ok ", "2.0.0 ", "0123456789abcdef", "-", "a", "_", " ", "<", ">", "@", ".", "x;", "9"}
	for range 3000 {
		var b strings.Builder
		for range rng.IntN(8) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		replies = append(replies, b.String())
	}
	for _, r := range replies {
		if got, want := messageID(r, "<hdr@example.com>"), messageIDByRegexp(r, "<hdr@example.com>"); got != want {
			t.Errorf("messageID(%q) = %q, want %q", r, got, want)
		}
	}
}

// TestTooManyRecipients: a 552 to RCPT reads as "too many recipients"
// (temporary) only when it says so; other replies do not.
func TestTooManyRecipients(t *testing.T) {
	tests := []struct {
		code int
		msg  string
		want bool
	}{
		{552, "5.5.3 Too many recipients", true},
		{552, "Too many recipients for this message", true},
		{552, "5.2.2 Mailbox full", false},
		{550, "5.5.3 Too many recipients", false},
		{452, "4.5.3 Too many recipients", false}, // already temporary
	}
	for _, tt := range tests {
		if got := tooManyRecipients(&textproto.Error{Code: tt.code, Msg: tt.msg}); got != tt.want {
			t.Errorf("%d %s: %v, want %v", tt.code, tt.msg, got, tt.want)
		}
	}
}
