// Package fleet is the operator's view of a fleet: several independent
// WordPress sites served by one service, each with its own database,
// read side by side (docs/fleet.md).
package fleet

import (
	"context"
	"fmt"
	"time"

	"github.com/mailsvc/mailsvc/app/dashboard"
	"github.com/mailsvc/mailsvc/core"
)

// Window is how far back the view counts delivered and failed messages.
const Window = 24 * time.Hour

// Site states of SiteView.Status.
const (
	// StatusServing is a site whose database answers.
	StatusServing = "serving"
	// StatusDown is a site that is not served now (its database is
	// unreachable, or it is starting): SiteView.Problem says why.
	StatusDown = "down"
)

// AttentionReader reads what needs a site owner's attention
// (dashboard.Service.Attention).
type AttentionReader interface {
	Attention(ctx context.Context) (*dashboard.Attention, error)
}

// QueueCounter counts a site's pending messages by status
// (store.LogService.PendingCounts).
type QueueCounter interface {
	PendingCounts(ctx context.Context) (core.QueueStats, error)
}

// OutcomeReader reads a site's outcome roll-up over [from, to)
// (store.LogService.OutcomeBuckets).
type OutcomeReader interface {
	OutcomeBuckets(ctx context.Context, from, to time.Time) ([]core.OutcomeBucket, error)
}

// ConnectionLister lists a site's connections (core.ConnectionStore).
type ConnectionLister interface {
	FindConnections(ctx context.Context, f core.ConnectionFilter) ([]*core.Connection, int, error)
}

// Site is one site of the fleet as the view reads it: what names it, and
// its readers while it is served (all nil while it is down).
type Site struct {
	Name     string
	HomeURL  string
	WPConfig string
	// Problem says why the site is not served now; "" when it is.
	Problem     string
	Attention   AttentionReader
	Queue       QueueCounter
	Outcomes    OutcomeReader
	Connections ConnectionLister
}

// QueueView is a site's queue now.
type QueueView struct {
	// Queued counts the messages waiting to be sent, Retrying those of
	// them that were tried and wait for another attempt.
	Queued   int `json:"queued"`
	Sending  int `json:"sending"`
	Retrying int `json:"retrying"`
}

// ConnectionsView is the health of a site's connections.
type ConnectionsView struct {
	// Total counts the site's connections; Failing lists the active ones
	// whose health is failing (the secrets of their errors masked).
	Total   int                           `json:"total"`
	Failing []dashboard.FailingConnection `json:"failing"`
}

// SiteView is one site in GET /fleet/sites and `mailsvc fleet`.
type SiteView struct {
	Name     string `json:"name"`
	HomeURL  string `json:"home_url"`
	WPConfig string `json:"wp_config"`
	// Status is StatusServing or StatusDown; Problem says why a site is
	// down, or which of its counts could not be read.
	Status  string    `json:"status"`
	Problem string    `json:"problem,omitempty"`
	Queue   QueueView `json:"queue"`
	// Delivered24h and Failed24h count the last Window: messages
	// delivered (the outcome roll-up), and messages created then that
	// failed for good and are still failed (up to 1000).
	Delivered24h int64           `json:"delivered_24h"`
	Failed24h    int             `json:"failed_24h"`
	Connections  ConnectionsView `json:"connections"`
	// Held counts the mail held back and waiting for a person: the
	// messages the staging guard captured and those the flood guard
	// holds (dashboard.Attention.Held).
	Held int `json:"held"`
}

// Service reads the operator's view of every site.
type Service struct {
	// Sites returns the fleet's sites as they are now, in order.
	Sites func() []Site
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// View returns every site's view, in the fleet's order. A site that is
// down, or whose counts cannot be read, is listed with its problem: one
// site never hides the others.
func (s *Service) View(ctx context.Context) []SiteView {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	sites := s.Sites()
	out := make([]SiteView, 0, len(sites))
	for _, site := range sites {
		v := SiteView{Name: site.Name, HomeURL: site.HomeURL, WPConfig: site.WPConfig, Status: StatusServing,
			Connections: ConnectionsView{Failing: []dashboard.FailingConnection{}}}
		if site.Problem != "" || site.Attention == nil {
			v.Status, v.Problem = StatusDown, site.Problem
			if v.Problem == "" {
				v.Problem = "The site is starting."
			}
			out = append(out, v)
			continue
		}
		if err := view(ctx, site, &v, now()); err != nil {
			v.Problem = err.Error()
		}
		out = append(out, v)
	}
	return out
}

// view fills v with the site's counts.
func view(ctx context.Context, site Site, v *SiteView, now time.Time) error {
	a, err := site.Attention.Attention(ctx)
	if err != nil {
		return fmt.Errorf("attention: %w", err)
	}
	v.Queue.Retrying, v.Failed24h = a.Retrying, a.Failed24h
	// Held mail: captured by the staging guard or held by the flood guard.
	v.Held = a.Held
	v.Connections.Failing = a.FailingConnections
	q, err := site.Queue.PendingCounts(ctx)
	if err != nil {
		return fmt.Errorf("queue counts: %w", err)
	}
	v.Queue.Queued, v.Queue.Sending = q.Queued, q.Sending
	buckets, err := site.Outcomes.OutcomeBuckets(ctx, now.Add(-Window).UTC(), now.UTC())
	if err != nil {
		return fmt.Errorf("outcome roll-up: %w", err)
	}
	for _, b := range buckets {
		if b.Status == core.StatusDelivered {
			v.Delivered24h += b.Count
		}
	}
	_, total, err := site.Connections.FindConnections(ctx, core.ConnectionFilter{})
	if err != nil {
		return fmt.Errorf("connections: %w", err)
	}
	v.Connections.Total = total
	return nil
}
