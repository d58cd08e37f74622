package app

import (
	"context"
	"fmt"

	"github.com/mailsvc/mailsvc/core"
)

// EmailControls reads and switches the email controls: which WordPress
// core emails the bridge stops (settings scope core.ScopeEmailControls)
// and how many of each it stopped (core.EmailControlCounter).
type EmailControls struct {
	Store  core.SettingsStore
	Counts core.EmailControlCounter
}

// EmailControl is one kind of WordPress core email with its switch and
// the number of its emails stopped so far.
type EmailControl struct {
	core.EmailControlKind
	Enabled bool `json:"enabled"`
	// Count is how many emails of this kind were stopped, over all time.
	Count int64 `json:"count"`
}

// EmailControlsState is GET /settings/email-controls: every kind in the
// Settings screen's order, and the sum of their counts.
type EmailControlsState struct {
	Controls   []EmailControl `json:"controls"`
	Suppressed int64          `json:"suppressed"`
}

// Get returns every kind with its switch (true unless stored false) and
// its count.
func (s *EmailControls) Get(ctx context.Context) (*EmailControlsState, error) {
	stored, err := s.Store.LoadSettings(ctx, core.ScopeEmailControls)
	if err != nil {
		return nil, fmt.Errorf("load email controls: %w", err)
	}
	counts := map[string]int64{}
	if s.Counts != nil {
		if counts, err = s.Counts.EmailControlCounts(ctx, "", ""); err != nil {
			return nil, fmt.Errorf("email control counts: %w", err)
		}
	}
	out := &EmailControlsState{Controls: make([]EmailControl, 0, len(core.EmailControlKinds))}
	for _, k := range core.EmailControlKinds {
		def := k.Setting()
		enabled, _ := def.Decode(stored).(bool)
		c := EmailControl{EmailControlKind: k, Enabled: enabled, Count: counts[k.Kind]}
		out.Controls = append(out.Controls, c)
		out.Suppressed += c.Count
	}
	return out, nil
}

// Update switches the kinds named in patch (kind → true to send, false
// to stop) and returns the new state. An unknown kind or a value that is
// not a boolean fails validation, and nothing is stored.
func (s *EmailControls) Update(ctx context.Context, patch map[string]any) (*EmailControlsState, error) {
	fields := map[string]string{}
	values := make(map[string]any, len(patch))
	for k, v := range patch {
		b, isBool := v.(bool)
		switch {
		case !core.EmailControlKnown(k):
			fields[k] = "Unknown email kind."
		case !isBool:
			fields[k] = "Must be true or false."
		default:
			values[k] = b
		}
	}
	if err := saveValidSettings(ctx, s.Store, core.ScopeEmailControls, "email controls", fields, values); err != nil {
		return nil, err
	}
	return s.Get(ctx)
}
