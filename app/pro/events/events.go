// Package events is the Pro add-on's provider events: what a provider's
// webhook said happened to a message it accepted (LogEvent, written by
// app/pro/webhooks, kept by adapters/pro/store), and the free service's
// two uses of them, joined by cmd/mailsvc/pro: an uncertain attempt
// resolved by an event received meanwhile (Uncertain, a
// delivery.ProviderEvents) and a log's events in a personal data export
// (PersonalData, an app.LogItemExporter).
package events

import (
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Provider event names of a LogEvent: what a provider's webhook said
// happened to a message it accepted.
const (
	EventDelivered    = "delivered"    // the receiving server accepted it
	EventBounced      = "bounced"      // the receiving server refused it
	EventComplained   = "complained"   // the recipient reported it as spam
	EventDeferred     = "deferred"     // the provider is still trying
	EventOpened       = "opened"       // the recipient opened it
	EventClicked      = "clicked"      // the recipient followed a link
	EventDropped      = "dropped"      // the provider did not send it at all
	EventUnsubscribed = "unsubscribed" // the recipient unsubscribed through the provider
	EventOther        = "other"        // anything else the provider reports
)

// LogEvent is one provider event about a sent message, appended to the
// log's event history (the Pro webhook receiver writes them).
type LogEvent struct {
	ID       int64  `json:"id"`
	LogID    int64  `json:"log_id"`
	Provider string `json:"provider"`
	// Event is one of the Event* names.
	Event string `json:"event"`
	// At is when the provider says the event happened.
	At time.Time `json:"at"`
	// Detail holds the event's facts worth keeping (recipient, reason,
	// bounce type, the provider's own event name), never a secret.
	Detail map[string]any `json:"detail"`
	// HostHooks are recorded in the host hook outbox in the transaction
	// that records the event.
	HostHooks []core.HostHook `json:"-"`
}
