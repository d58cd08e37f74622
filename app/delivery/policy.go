package delivery

import (
	"context"
	"fmt"
)

// Policy is what an add-on (Pro) changes in how messages are delivered
// and kept. The Service reads it with the free settings: once per batch,
// per SendNow, and at most once a second for Enqueue.
type Policy struct {
	// MaxRetries replaces Options.MaxRetries: how many times a
	// temporary failure is retried on one connection after the first
	// attempt. 0 means no retry (one attempt); a negative value too.
	MaxRetries int
	// UnloggedSources are message sources (core.Log.Source: a plugin
	// slug, "sendmail", "smtp", "test", ...) whose messages are delivered
	// but not kept in the log: once delivered, their row is deleted, as
	// the log_emails=false setting does for every message. A message that
	// fails for good is kept, so the failure can be seen and resent.
	UnloggedSources []string
}

// PolicySource gives the current delivery Policy. It is called on the
// delivery path, so an implementation should answer from a short cache
// (the Pro settings cache theirs for at most a second) rather than read
// its store every time. An error leaves the batch to its lease, as an
// unreadable free settings scope does.
type PolicySource interface {
	DeliveryPolicy(ctx context.Context) (Policy, error)
}

// applyPolicy overlays the add-on policy (when Options.Policy is set) on a
// settings snapshot.
func (s *engine) applyPolicy(ctx context.Context, st *settings) error {
	st.maxRetries = s.o.MaxRetries
	if s.o.Policy == nil {
		return nil
	}
	p, err := s.o.Policy.DeliveryPolicy(ctx)
	if err != nil {
		return fmt.Errorf("load delivery policy: %w", err)
	}
	st.maxRetries = max(p.MaxRetries, 0)
	if len(p.UnloggedSources) > 0 {
		st.unlogged = make(map[string]bool, len(p.UnloggedSources))
		for _, src := range p.UnloggedSources {
			st.unlogged[src] = true
		}
	}
	return nil
}

// keepDelivered reports whether a delivered message from source stays in
// the log.
func (st settings) keepDelivered(source string) bool {
	return st.logEmails && !st.unlogged[source]
}
