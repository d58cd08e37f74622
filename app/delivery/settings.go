package delivery

import (
	"context"
	"fmt"
	"time"

	"github.com/mailsvc/mailsvc/app/logbody"
	"github.com/mailsvc/mailsvc/core"
)

// settings is the snapshot of the free settings one batch works with.
type settings struct {
	fromEmail, fromName string
	defaultConn         *int64
	fallbackConn        *int64
	simulate            bool
	logEmails           bool
	retentionDays       int64
	// maxRetries is the retry limit in force (Options.MaxRetries, or the
	// Policy's); unlogged the sources whose delivered messages are not
	// kept.
	maxRetries int
	unlogged   map[string]bool
	// body is what the log keeps of a final message's body.
	body logbody.Policy
	// uncertainGrace is how long an uncertain attempt waits for its
	// lookup (uncertain_grace_minutes).
	uncertainGrace time.Duration
}

// loadSettings reads the free settings, decoded once
// (core.DecodeGeneralSettings), into the snapshot a batch works with.
func (s *engine) loadSettings(ctx context.Context) (settings, error) {
	m, err := s.o.Settings.Get(ctx)
	if err != nil {
		return settings{}, fmt.Errorf("load settings: %w", err)
	}
	g := core.DecodeGeneralSettings(m)
	out := settings{
		fromEmail:      g.FromEmail,
		fromName:       g.FromName,
		simulate:       g.SimulationEnabled,
		logEmails:      g.LogEmails,
		retentionDays:  g.LogRetentionDays,
		body:           logbody.PolicyFrom(g),
		uncertainGrace: time.Duration(g.UncertainGraceMinutes) * time.Minute,
	}
	if id := g.DefaultConnectionID; id > 0 {
		out.defaultConn = &id
	}
	if id := g.FallbackConnectionID; id > 0 {
		out.fallbackConn = &id
	}
	if err := s.applyPolicy(ctx, &out); err != nil {
		return settings{}, err
	}
	return out, nil
}

// applyFrom fills a missing From from the from_email/from_name settings.
func applyFrom(msg *core.Message, st settings) {
	if msg.From.Email == "" {
		msg.From.Email = st.fromEmail
		if msg.From.Name == "" {
			msg.From.Name = st.fromName
		}
	}
}
