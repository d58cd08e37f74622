package servicetest

import (
	"bytes"
	"net/mail"
	"testing"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
)

// SubjectsAtSink counts the messages sink received by subject, failing
// the test on a message that does not parse.
func SubjectsAtSink(tb testing.TB, sink *smtpsink.Sink) map[string]int {
	tb.Helper()
	out := map[string]int{}
	for _, m := range sink.Messages() {
		msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
		if err != nil {
			tb.Fatalf("a message at the sink does not parse: %v", err)
		}
		out[msg.Header.Get("Subject")]++
	}
	return out
}
