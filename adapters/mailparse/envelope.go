package mailparse

import (
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// ApplyEnvelope makes msg's recipients the envelope recipients rcpts (RCPT
// TO, or sendmail's arguments): To, Cc and Bcc keep only the addresses
// that rcpts holds, and every envelope recipient that no header names is
// added to Bcc, so it receives the message without appearing in it.
// Addresses compare case-insensitively. A header recipient that is not in
// the envelope is dropped, since core.Message has no separate envelope.
func ApplyEnvelope(msg *core.Message, rcpts []core.Address) {
	want := make(map[string]bool, len(rcpts))
	for _, r := range rcpts {
		want[strings.ToLower(r.Email)] = true
	}
	seen := map[string]bool{}
	keep := func(list []core.Address) []core.Address {
		var out []core.Address
		for _, a := range list {
			k := strings.ToLower(a.Email)
			if want[k] && !seen[k] {
				seen[k] = true
				out = append(out, a)
			}
		}
		return out
	}
	msg.To, msg.Cc, msg.Bcc = keep(msg.To), keep(msg.Cc), keep(msg.Bcc)
	for _, r := range rcpts {
		k := strings.ToLower(r.Email)
		if !seen[k] {
			seen[k] = true
			msg.Bcc = append(msg.Bcc, r)
		}
	}
}
