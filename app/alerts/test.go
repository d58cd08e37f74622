package alerts

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// EventTest is the event of a test alert.
const EventTest = "test"

// TestInput names the channel a test alert goes to: a stored channel (ID),
// an unsaved one (Channel), or a stored one with unsaved edits (both).
type TestInput struct {
	ID      *int64
	Channel *ChannelInput
}

// TestResult is the outcome of a test send. A channel that refuses the
// alert is a result with Success false, not an error.
type TestResult struct {
	Success bool `json:"success"`
	// Message is the channel's answer in words (or what went wrong).
	Message string `json:"message"`
	// Error is the reason of a failure, "" on success.
	Error string `json:"error,omitempty"`
}

// Test sends a test alert through a channel now, bounded by TestTimeout,
// and reports the channel's answer. Test alerts are never folded. An
// unknown id is ENOTFOUND, an invalid unsaved body EINVALID. Secrets of
// the channel never appear in the result.
func (s *Channels) Test(ctx context.Context, in TestInput) (*TestResult, error) {
	var stored *core.NotificationChannel
	if in.ID != nil {
		c, err := s.Store.FindNotificationChannelByID(ctx, *in.ID)
		if err != nil {
			return nil, fmt.Errorf("get notification channel %d: %w", *in.ID, err)
		}
		stored = c
	}
	var ch *core.NotificationChannel
	switch {
	case in.Channel != nil:
		c, err := s.build(stored, *in.Channel)
		if err != nil {
			return nil, err
		}
		ch = s.effective(c)
	case stored != nil:
		ch = s.effective(stored)
	default:
		return nil, core.InvalidField("id", "Give the id of a channel or a channel to test.")
	}
	if err := s.checkConnection(ctx, ch); err != nil {
		return nil, err
	}
	a := core.Alert{
		Event:   EventTest,
		Title:   "mailsvc test alert",
		Message: fmt.Sprintf("This is a test alert for the channel %q. If you can read it, the channel works.", ch.Name),
		Site:    s.Site,
		At:      time.Now().UTC(),
		Test:    true,
	}
	timeout := s.TestTimeout
	if timeout <= 0 {
		timeout = DefaultTestTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	answer, err := notify(ctx, ch, s.Env, a)
	if err != nil {
		reason := redact(err.Error(), ch)
		if errors.Is(err, context.DeadlineExceeded) {
			reason = fmt.Sprintf("The channel did not answer within %s.", timeout)
		}
		return &TestResult{Success: false, Message: "The channel refused the test alert.", Error: reason}, nil
	}
	if answer == "" {
		answer = "The test alert was sent."
	}
	return &TestResult{Success: true, Message: redact(answer, ch)}, nil
}

// notify builds ch's Notifier from env and sends a through it.
func notify(ctx context.Context, ch *core.NotificationChannel, env core.NotifierEnv, a core.Alert) (string, error) {
	t, ok := core.LookupChannelType(ch.Type)
	if !ok {
		return "", core.Permanent(fmt.Errorf("channel type %q is not available in this build", ch.Type))
	}
	n, err := t.New(ch, env)
	if err != nil {
		return "", core.Permanent(fmt.Errorf("set up channel: %w", err))
	}
	return n.Notify(ctx, a)
}
