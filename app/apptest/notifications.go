package apptest

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// NotificationStore is an in-memory core.NotificationStore.
type NotificationStore struct {
	rowTable[core.NotificationChannel]
}

// NewNotificationStore returns an empty store.
func NewNotificationStore() *NotificationStore {
	return &NotificationStore{rowTable[core.NotificationChannel]{rows: map[int64]*core.NotificationChannel{}, clone: cloneChannel,
		notFound: "Notification channel %d not found."}}
}

func cloneChannel(c *core.NotificationChannel) *core.NotificationChannel {
	out := *c
	out.Settings = c.Settings.Clone()
	if out.Settings == nil {
		out.Settings = core.Settings{}
	}
	out.Events = append([]string{}, c.Events...)
	return &out
}

// FindNotificationChannels implements core.NotificationStore.
func (s *NotificationStore) FindNotificationChannels(context.Context) ([]*core.NotificationChannel, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*core.NotificationChannel, 0, len(s.rows))
	for _, c := range s.rows {
		out = append(out, cloneChannel(c))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// FindNotificationChannelByID implements core.NotificationStore.
func (s *NotificationStore) FindNotificationChannelByID(_ context.Context, id int64) (*core.NotificationChannel, error) {
	return s.byID(id)
}

// CreateNotificationChannel implements core.NotificationStore.
func (s *NotificationStore) CreateNotificationChannel(_ context.Context, c *core.NotificationChannel) error {
	s.insert(c, func(id int64, now time.Time) { c.ID, c.CreatedAt, c.UpdatedAt = id, now, now })
	return nil
}

// UpdateNotificationChannel implements core.NotificationStore.
func (s *NotificationStore) UpdateNotificationChannel(_ context.Context, c *core.NotificationChannel) error {
	return s.update(c.ID, func(old *core.NotificationChannel) *core.NotificationChannel {
		c.UpdatedAt = time.Now().UTC()
		row := cloneChannel(c)
		row.CreatedAt = old.CreatedAt
		row.ThresholdAlertedAt = old.ThresholdAlertedAt
		return row
	})
}

// DeleteNotificationChannels implements core.NotificationStore.
func (s *NotificationStore) DeleteNotificationChannels(_ context.Context, ids []int64) (int, error) {
	return s.deleteIDs(ids), nil
}

// SetNotificationChannelsActive implements core.NotificationStore.
func (s *NotificationStore) SetNotificationChannelsActive(_ context.Context, ids []int64, active bool) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, id := range uniqueIDs(ids) {
		if c, ok := s.rows[id]; ok {
			c.IsActive = active
			c.UpdatedAt = time.Now().UTC()
			n++
		}
	}
	return n, nil
}

// Raw returns the stored row as the store holds it (secrets encrypted), for
// asserting what reaches the database.
func (s *NotificationStore) Raw(id int64) *core.NotificationChannel { return s.raw(id) }

func uniqueIDs(ids []int64) []int64 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}

// ClaimNotificationThreshold records at as channel id's last threshold
// alert when the previous one is at or before at-quiet (or none), as the
// store does (alerts.ThresholdStore).
func (s *NotificationStore) ClaimNotificationThreshold(_ context.Context, id int64, at time.Time, quiet time.Duration) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.rows[id]
	if !ok || (c.ThresholdAlertedAt != nil && c.ThresholdAlertedAt.After(at.Add(-quiet))) {
		return false, nil
	}
	at = at.UTC()
	c.ThresholdAlertedAt = &at
	return true, nil
}
