package dashboard

import (
	"context"
	"fmt"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// SuppressedStats counts the WordPress core emails the email controls
// stopped over the dashboard's range (calendar days in the site's time
// zone, as the bridge counts them).
type SuppressedStats struct {
	Suppressed int64 `json:"suppressed"`
	// ByKind has every kind of core.EmailControlKinds, 0 included.
	ByKind map[string]int64 `json:"by_kind"`
}

// suppressed reads the email control counts over the days of [from, to)
// in loc; nil without a counter.
func (s *Service) suppressed(ctx context.Context, from, to time.Time, loc *time.Location) (*SuppressedStats, error) {
	if s.EmailControls == nil {
		return nil, nil
	}
	first, last := core.EmailControlDays(from, to, loc)
	counts, err := s.EmailControls.EmailControlCounts(ctx, first, last)
	if err != nil {
		return nil, fmt.Errorf("email control counts: %w", err)
	}
	out := &SuppressedStats{ByKind: make(map[string]int64, len(core.EmailControlKinds))}
	for _, k := range core.EmailControlKinds {
		out.ByKind[k.Kind] = counts[k.Kind]
		out.Suppressed += counts[k.Kind]
	}
	return out, nil
}
