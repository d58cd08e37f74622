package core

import "context"

// Host-side hooks that only the host (WordPress, through the bridge) runs:
// the service has no Go event of these names.
const (
	// HookDelivered fires once a message queued by wp_mail() is delivered
	// (the provider accepted it): log id, connection id, provider message id.
	HookDelivered = "mail_svc_delivered"
	// HookWPMailFailed is WordPress's own wp_mail_failed, fired once a
	// message queued by wp_mail() has failed for good.
	HookWPMailFailed = "wp_mail_failed"
)

// Bits of a log's host hook flags (the bridge sets them when it queues a
// message, from the site's listeners at that moment): which host hooks
// the message's final outcome fires.
const (
	HostHookFlagDelivered    = 1
	HostHookFlagWPMailFailed = 2
)

// HostHook is one event for the host's hooks: the bridge runs it in
// WordPress as do_action(Name, Args...). Args must encode as JSON (they
// reach PHP as decoded JSON, objects as associative arrays).
type HostHook struct {
	Name string
	Args []any
}

// HostHooks carries events to the host's hooks through the outbox that
// the bridge drains. Events that belong with a change (a log's outcome,
// a provider event) travel with it (LogOutcome.HostHooks,
// LogEvent.HostHooks) and are recorded in its transaction; Record is for
// events that change nothing else.
type HostHooks interface {
	// Listens reports whether the host has a callback on the hook name:
	// events nobody would receive are not recorded. It never blocks on
	// the host and answers false when it cannot tell.
	Listens(ctx context.Context, name string) bool
	// Record writes hooks to the outbox in one transaction, committed on
	// return. Not idempotent: a retry after an unknown outcome may record
	// an event twice.
	Record(ctx context.Context, hooks []HostHook) error
}

// OutcomeHostHooks returns the host hooks to record with a log's final
// outcome, in the transaction that records it.
type OutcomeHostHooks func(out LogOutcome) []HostHook
