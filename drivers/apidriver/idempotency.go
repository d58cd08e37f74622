package apidriver

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// IdempotencyKeyHeader is the request header in which the providers
// that send a request once (Resend, Emailit) take its idempotency key.
const IdempotencyKeyHeader = "Idempotency-Key"

// KeyChars is a provider's rule for the characters of an idempotency
// key, in strings.Map's form: each rune of the Message-ID is kept,
// replaced, or dropped (a negative rune).
type KeyChars func(r rune) rune

// IdempotencyKey is the idempotency key of msg (a message, or the part
// of a message split over the recipient caps that its Envelope names):
// its Message-ID in the characters chars allows, "_", then a digest of
// the part's recipients and of the message's manual resends
// (core.Message.Resends), at most maxLen bytes in all. So the resend of
// an uncertain attempt, which carries the same Message-ID, has the same
// key and the provider sends it once; each part of a split message,
// and a message resent by hand, has its own and is sent. Empty when msg
// has no Message-ID.
func IdempotencyKey(msg *core.Message, chars KeyChars, maxLen int) string {
	msg = msg.ForEnvelope()
	id := msg.MessageID()
	if id == "" {
		return ""
	}
	h := sha256.New()
	for _, a := range msg.Recipients() {
		h.Write([]byte(strings.ToLower(a.Email) + "\n"))
	}
	if msg.Resends > 0 {
		// Absent for a first sending, so its key stays what it was
		// before resends were counted.
		fmt.Fprintf(h, "resend %d\n", msg.Resends)
	}
	digest := hex.EncodeToString(h.Sum(nil))[:16]
	key := strings.Map(chars, id)
	return key[:min(len(key), maxLen-len(digest)-1)] + "_" + digest
}

// IdempotencyHeader is the request header carrying msg's IdempotencyKey,
// nil when msg has no Message-ID.
func IdempotencyHeader(msg *core.Message, chars KeyChars, maxLen int) http.Header {
	key := IdempotencyKey(msg, chars, maxLen)
	if key == "" {
		return nil
	}
	return http.Header{IdempotencyKeyHeader: {key}}
}
