package mailgun

import (
	"context"
	"fmt"
	"strings"

	mg "github.com/mailgun/mailgun-go/v4"
	"github.com/mailgun/mailgun-go/v4/events"
	"github.com/mailsvc/mailsvc/core"
)

var _ core.Finder = (*Transport)(nil)

// Find implements core.Finder with the Events API, GET
// /v3/{domain}/events filtered by message-id: Mailgun holds the message
// when it logged any event for its Message-ID other than "rejected".
// The receipt's MessageID is the Message-ID without brackets, which
// Mailgun's events and webhooks carry. Events appear within minutes of
// the send, well inside the default grace.
func (t *Transport) Find(ctx context.Context, msg *core.Message) (core.Receipt, bool, error) {
	id := strings.Trim(msg.MessageID(), "<> ")
	if id == "" {
		return core.Receipt{}, false, nil
	}
	it := t.sdk().ListEvents(&mg.ListEventOptions{Filter: map[string]string{"message-id": id}, Limit: 25})
	var page []mg.Event
	if !it.Next(ctx, &page) {
		if err := it.Err(); err != nil {
			return core.Receipt{}, false, t.scrub(fmt.Errorf("mailgun: look up message %s: %w", id, classify(err)))
		}
		return core.Receipt{}, false, nil
	}
	for _, ev := range page {
		if name := ev.GetName(); name != events.EventRejected {
			return core.Receipt{MessageID: id, Response: "Mailgun event " + name}, true, nil
		}
	}
	return core.Receipt{}, false, nil
}
