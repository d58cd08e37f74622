package analytics

import (
	"context"
	"fmt"
	"sort"

	"github.com/mailsvc/mailsvc/app/pro/events"
	"github.com/mailsvc/mailsvc/core"
)

// ProviderFigures is one provider's deliverability over the period, from
// its webhook events. Accepted counts the messages its connections
// delivered (the provider accepted them), from the outcome roll-ups.
// Delivered, Bounced and Complained count the messages the provider
// reported so (0 when it reported none); Opened and Clicked are null when
// the provider reported no open (or click) at all in the period (tracking
// off, or not offered), else the messages opened (clicked). Events counts
// every event per kind. Rates are percentages of Accepted, null when
// Accepted is 0 or the count is null.
type ProviderFigures struct {
	Provider      string           `json:"provider"`
	Accepted      int64            `json:"accepted"`
	Delivered     int64            `json:"delivered"`
	Bounced       int64            `json:"bounced"`
	Complained    int64            `json:"complained"`
	Opened        *int64           `json:"opened"`
	Clicked       *int64           `json:"clicked"`
	DeliveredRate *float64         `json:"delivered_rate"`
	BounceRate    *float64         `json:"bounce_rate"`
	ComplaintRate *float64         `json:"complaint_rate"`
	OpenRate      *float64         `json:"open_rate"`
	ClickRate     *float64         `json:"click_rate"`
	Events        map[string]int64 `json:"events"`
}

// Deliverability is GET /pro/analytics/deliverability.
type Deliverability struct {
	TimeZone string `json:"timezone"`
	Period   Period `json:"period"`
	// Providers lists every provider that reported an event in the
	// period, by name.
	Providers []ProviderFigures `json:"providers"`
}

// Deliverability returns, per provider that reported events over q, the
// messages delivered, bounced, complained about, opened and clicked, from
// the provider webhook events, against the messages the provider accepted.
func (s *Service) Deliverability(ctx context.Context, q RangeQuery) (*Deliverability, error) {
	p, loc, err := s.resolve(ctx, q)
	if err != nil {
		return nil, err
	}
	if s.Events == nil || s.Rollups == nil {
		return nil, core.Errorf(core.EUNAVAILABLE, "Deliverability is not available.")
	}
	p = p.Aligned(loc)
	counts, err := s.Events.EventCounts(ctx, p.From.UTC(), p.To.UTC())
	if err != nil {
		return nil, fmt.Errorf("read provider events: %w", err)
	}
	byProvider := map[string]*ProviderFigures{}
	for _, c := range counts {
		f := byProvider[c.Provider]
		if f == nil {
			f = &ProviderFigures{Provider: c.Provider, Events: map[string]int64{}}
			byProvider[c.Provider] = f
		}
		f.Events[c.Event] += c.Events
		n := c.Messages
		switch c.Event {
		case events.EventDelivered:
			f.Delivered += n
		case events.EventBounced:
			f.Bounced += n
		case events.EventComplained:
			f.Complained += n
		case events.EventOpened:
			f.Opened = &n
		case events.EventClicked:
			f.Clicked = &n
		}
	}
	out := &Deliverability{TimeZone: loc.String(), Period: p, Providers: []ProviderFigures{}}
	if len(byProvider) == 0 {
		return out, nil
	}
	stored, err := s.connections(ctx)
	if err != nil {
		return nil, err
	}
	buckets, err := s.Rollups.OutcomeTotals(ctx, p.From.UTC(), p.To.UTC())
	if err != nil {
		return nil, fmt.Errorf("read outcome roll-ups: %w", err)
	}
	for _, b := range buckets {
		if c := stored[b.ConnectionID]; c != nil && b.Status == core.StatusDelivered {
			if f := byProvider[c.Driver]; f != nil {
				f.Accepted += b.Count
			}
		}
	}
	for _, f := range byProvider {
		f.DeliveredRate = percent(f.Delivered, f.Accepted)
		f.BounceRate = percent(f.Bounced, f.Accepted)
		f.ComplaintRate = percent(f.Complained, f.Accepted)
		if f.Opened != nil {
			f.OpenRate = percent(*f.Opened, f.Accepted)
		}
		if f.Clicked != nil {
			f.ClickRate = percent(*f.Clicked, f.Accepted)
		}
		out.Providers = append(out.Providers, *f)
	}
	sort.Slice(out.Providers, func(i, j int) bool { return out.Providers[i].Provider < out.Providers[j].Provider })
	return out, nil
}
