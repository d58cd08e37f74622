package events

import (
	"context"
	"fmt"
	"time"

	"github.com/mailsvc/mailsvc/app/delivery"
)

// Uncertain gives the delivery engine the provider events it resolves an
// uncertain attempt with (a delivery.ProviderEvents, set as
// delivery.Options.Events by the Pro add-on).
type Uncertain struct {
	Store Finder
}

// LatestEventSince implements delivery.ProviderEvents: of the log's
// events that happened at or after since, the one recorded last, refused
// when it says the provider bounced or dropped the message, with the
// message id its detail carries.
func (u *Uncertain) LatestEventSince(ctx context.Context, logID int64, since time.Time) (delivery.ProviderEvent, bool, error) {
	evs, err := u.Store.FindLogEvents(ctx, logID)
	if err != nil {
		return delivery.ProviderEvent{}, false, fmt.Errorf("read the provider events of log %d: %w", logID, err)
	}
	for i := len(evs) - 1; i >= 0; i-- {
		ev := evs[i]
		if ev.At.Before(since) {
			continue
		}
		id, _ := ev.Detail["message_id"].(string)
		return delivery.ProviderEvent{Kind: ev.Event, At: ev.At, MessageID: id,
			Refused: ev.Event == EventBounced || ev.Event == EventDropped}, true, nil
	}
	return delivery.ProviderEvent{}, false, nil
}
