package dashboard

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Bounds of the activity list.
const (
	DefaultActivityLimit = 10
	MaxActivityLimit     = 50
)

// ActivityQuery is an activity request as the query string gives it:
// Limit 1–50 (default 10) and Status "queued", "failed", "delivered" or
// "" (all three).
type ActivityQuery struct {
	Limit  string
	Status string
}

// ConnectionRef names the connection a message went through.
type ConnectionRef struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	Driver string `json:"driver"`
}

// ActivityItem is one recent message. Time is when its outcome was
// recorded (delivered_at for a delivered message; the last change of a
// queued one), in the site's time zone. A queued message has its
// Attempts so far (0: not tried yet, more: retrying) and NextAttemptAt,
// when it is tried next (null for a message not queued).
type ActivityItem struct {
	ID            int64          `json:"id"`
	Status        string         `json:"status"`
	Subject       string         `json:"subject"`
	Recipients    []string       `json:"recipients"`
	Connection    *ConnectionRef `json:"connection"`
	Time          time.Time      `json:"time"`
	CreatedAt     time.Time      `json:"created_at"`
	LastError     string         `json:"last_error"`
	Source        string         `json:"source"`
	Attempts      int            `json:"attempts"`
	NextAttemptAt *time.Time     `json:"next_attempt_at"`
}

// Activity is GET /dashboard/activity.
type Activity struct {
	TimeZone string         `json:"timezone"`
	Items    []ActivityItem `json:"items"`
}

// Activity returns the most recent queued (waiting or retrying), failed
// and delivered messages, newest first (by creation, as the log lists them), at most Limit of them.
func (s *Service) Activity(ctx context.Context, q ActivityQuery) (*Activity, error) {
	fields := map[string]string{}
	limit := DefaultActivityLimit
	if q.Limit != "" {
		n, err := strconv.Atoi(q.Limit)
		if err != nil || n < 1 || n > MaxActivityLimit {
			fields["limit"] = fmt.Sprintf("Must be a whole number between 1 and %d.", MaxActivityLimit)
		}
		limit = n
	}
	statuses := []string{core.StatusQueued, core.StatusFailed, core.StatusDelivered}
	switch q.Status {
	case "":
	case core.StatusQueued, core.StatusFailed, core.StatusDelivered:
		statuses = []string{q.Status}
	default:
		fields["status"] = "Must be queued, failed or delivered."
	}
	if err := core.Invalid(fields); err != nil {
		return nil, err
	}
	loc, err := s.location(ctx)
	if err != nil {
		return nil, err
	}
	var logs []*core.Log
	for _, st := range statuses {
		page, _, err := s.Logs.FindLogs(ctx, core.LogFilter{Status: st, Limit: limit})
		if err != nil {
			return nil, fmt.Errorf("recent %s logs: %w", st, err)
		}
		logs = append(logs, page...)
	}
	sort.SliceStable(logs, func(i, j int) bool {
		if !logs[i].CreatedAt.Equal(logs[j].CreatedAt) {
			return logs[i].CreatedAt.After(logs[j].CreatedAt)
		}
		return logs[i].ID > logs[j].ID
	})
	if len(logs) > limit {
		logs = logs[:limit]
	}
	names, err := s.connectionNames(ctx)
	if err != nil {
		return nil, err
	}
	out := &Activity{TimeZone: loc.String(), Items: make([]ActivityItem, 0, len(logs))}
	for _, l := range logs {
		out.Items = append(out.Items, activityItem(l, loc, names))
	}
	return out, nil
}

// connectionNames maps connection ids to their reference.
func (s *Service) connectionNames(ctx context.Context) (map[int64]ConnectionRef, error) {
	out := map[int64]ConnectionRef{}
	if s.Connections == nil {
		return out, nil
	}
	conns, _, err := s.Connections.FindConnections(ctx, core.ConnectionFilter{})
	if err != nil {
		return nil, fmt.Errorf("list connections: %w", err)
	}
	for _, c := range conns {
		out[c.ID] = ConnectionRef{ID: c.ID, Name: c.Name, Driver: c.Driver}
	}
	return out, nil
}

func activityItem(l *core.Log, loc *time.Location, names map[int64]ConnectionRef) ActivityItem {
	it := ActivityItem{
		ID: l.ID, Status: l.Status, Subject: l.Message.Subject, Recipients: []string{},
		Time: l.UpdatedAt.In(loc), CreatedAt: l.CreatedAt.In(loc), LastError: l.LastError, Source: l.Source,
	}
	it.Attempts = l.Attempts
	switch {
	case l.Status == core.StatusDelivered && l.DeliveredAt != nil:
		it.Time = l.DeliveredAt.In(loc)
	case l.Status == core.StatusQueued:
		next := l.NextAttemptAt.In(loc)
		it.NextAttemptAt = &next
	}
	for _, a := range l.Message.Recipients() {
		it.Recipients = append(it.Recipients, a.Email)
	}
	id := l.SentConnectionID
	if id == nil {
		id = l.ConnectionID
	}
	if id != nil {
		ref, ok := names[*id]
		if !ok {
			ref = ConnectionRef{ID: *id}
		}
		it.Connection = &ref
	}
	return it
}
