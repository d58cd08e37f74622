package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/mailsvc/mailsvc/core"
	"gorm.io/gorm"
)

var _ core.NotificationStore = (*NotificationService)(nil)

// notificationRow is a row of {prefix}mailsvc_notifications. Events is a
// JSON array of event names, Settings a JSON object.
type notificationRow struct {
	ID        int64     `gorm:"column:id;primaryKey;autoIncrement"`
	Name      string    `gorm:"column:name"`
	Type      string    `gorm:"column:type"`
	IsActive  bool      `gorm:"column:is_active"`
	Events    string    `gorm:"column:events"`
	Settings  string    `gorm:"column:settings"`
	CreatedAt time.Time `gorm:"column:created_at"`
	UpdatedAt time.Time `gorm:"column:updated_at"`

	ThresholdCount     int        `gorm:"column:threshold_count"`
	ThresholdMinutes   int        `gorm:"column:threshold_minutes"`
	ThresholdAlertedAt *time.Time `gorm:"column:threshold_alerted_at"`
}

func (db *handle) notifications(ctx context.Context) *gorm.DB {
	return db.gdb.WithContext(ctx).Table(db.tableName("notifications"))
}

func toNotificationRow(c *core.NotificationChannel) (*notificationRow, error) {
	events := c.Events
	if events == nil {
		events = []string{}
	}
	ev, err := EncodeJSON(events)
	if err != nil {
		return nil, fmt.Errorf("channel events: %w", err)
	}
	settings := c.Settings
	if settings == nil {
		settings = core.Settings{}
	}
	js, err := EncodeJSON(map[string]any(settings))
	if err != nil {
		return nil, fmt.Errorf("channel settings: %w", err)
	}
	count := c.ThresholdCount
	if count < 1 {
		count = 1
	}
	return &notificationRow{
		ID: c.ID, Name: c.Name, Type: c.Type, IsActive: c.IsActive,
		Events: ev, Settings: js, ThresholdCount: count, ThresholdMinutes: c.ThresholdMinutes,
	}, nil
}

func (r *notificationRow) toChannel() (*core.NotificationChannel, error) {
	v, err := DecodeJSON(r.Settings)
	if err != nil {
		return nil, fmt.Errorf("channel %d settings: %w", r.ID, err)
	}
	m, ok := v.(map[string]any)
	if !ok && v != nil {
		return nil, fmt.Errorf("channel %d settings: stored JSON is not an object", r.ID)
	}
	if m == nil {
		m = map[string]any{}
	}
	ev, err := DecodeJSON(r.Events)
	if err != nil {
		return nil, fmt.Errorf("channel %d events: %w", r.ID, err)
	}
	list, ok := ev.([]any)
	if !ok && ev != nil {
		return nil, fmt.Errorf("channel %d events: stored JSON is not an array", r.ID)
	}
	events := make([]string, 0, len(list))
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("channel %d events: stored array holds a non-string", r.ID)
		}
		events = append(events, s)
	}
	c := &core.NotificationChannel{
		ID: r.ID, Name: r.Name, Type: r.Type, IsActive: r.IsActive,
		Events: events, Settings: core.Settings(m),
		ThresholdCount: max(r.ThresholdCount, 1), ThresholdMinutes: r.ThresholdMinutes,
		CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
	}
	if r.ThresholdAlertedAt != nil {
		at := r.ThresholdAlertedAt.UTC()
		c.ThresholdAlertedAt = &at
	}
	return c, nil
}

// FindNotificationChannels implements core.NotificationStore.
func (db *NotificationService) FindNotificationChannels(ctx context.Context) ([]*core.NotificationChannel, error) {
	var rows []notificationRow
	if err := db.notifications(ctx).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("find notification channels: %w", err)
	}
	return ConvertRows(rows, (*notificationRow).toChannel)
}

// FindNotificationChannelByID implements core.NotificationStore.
func (db *NotificationService) FindNotificationChannelByID(ctx context.Context, id int64) (*core.NotificationChannel, error) {
	return TakeByID(db.notifications(ctx), id, "notification channel", "Notification channel %d not found.", (*notificationRow).toChannel)
}

// CreateNotificationChannel implements core.NotificationStore. c.ID is
// ignored.
func (db *NotificationService) CreateNotificationChannel(ctx context.Context, c *core.NotificationChannel) error {
	row, err := toNotificationRow(c)
	if err != nil {
		return err
	}
	row.ID = 0
	t := now()
	row.CreatedAt, row.UpdatedAt = t, t
	if err := db.notifications(ctx).Create(row).Error; err != nil {
		return fmt.Errorf("create notification channel: %w", err)
	}
	c.ID, c.CreatedAt, c.UpdatedAt = row.ID, t, t
	return nil
}

// UpdateNotificationChannel implements core.NotificationStore. CreatedAt
// is left unchanged in the database.
func (db *NotificationService) UpdateNotificationChannel(ctx context.Context, c *core.NotificationChannel) error {
	row, err := toNotificationRow(c)
	if err != nil {
		return err
	}
	t := now()
	res := db.notifications(ctx).Where("id = ?", c.ID).Updates(map[string]any{
		"name":              row.Name,
		"type":              row.Type,
		"is_active":         row.IsActive,
		"events":            row.Events,
		"settings":          row.Settings,
		"threshold_count":   row.ThresholdCount,
		"threshold_minutes": row.ThresholdMinutes,
		"updated_at":        t,
	})
	if res.Error != nil {
		return fmt.Errorf("update notification channel %d: %w", c.ID, res.Error)
	}
	if res.RowsAffected == 0 {
		if err := db.notificationExists(ctx, c.ID); err != nil {
			return err
		}
	}
	c.UpdatedAt = t
	return nil
}

// notificationExists returns ENOTFOUND when channel id does not exist.
// MySQL counts changed rows, not matched ones, so an update that changes
// nothing also reports 0 rows and needs this check.
func (db *handle) notificationExists(ctx context.Context, id int64) error {
	var n int64
	if err := db.notifications(ctx).Where("id = ?", id).Count(&n).Error; err != nil {
		return fmt.Errorf("find notification channel %d: %w", id, err)
	}
	if n == 0 {
		return core.Errorf(core.ENOTFOUND, "Notification channel %d not found.", id)
	}
	return nil
}

// DeleteNotificationChannels implements core.NotificationStore, in one
// transaction. Repeated ids count once.
func (db *NotificationService) DeleteNotificationChannels(ctx context.Context, ids []int64) (int, error) {
	n, err := db.eachNotificationChunk(ctx, ids, func(tx *gorm.DB, chunk []int64) (int64, error) {
		res := tx.Where("id IN ?", chunk).Delete(&notificationRow{})
		return res.RowsAffected, res.Error
	})
	if err != nil {
		return 0, fmt.Errorf("delete notification channels: %w", err)
	}
	return n, nil
}

// SetNotificationChannelsActive implements core.NotificationStore, in one
// transaction. Repeated ids count once; a channel already in the wanted
// state counts too.
func (db *NotificationService) SetNotificationChannelsActive(ctx context.Context, ids []int64, active bool) (int, error) {
	n, err := db.eachNotificationChunk(ctx, ids, func(tx *gorm.DB, chunk []int64) (int64, error) {
		// Count first: MySQL reports changed rows, not matched ones.
		var n int64
		if err := tx.Where("id IN ?", chunk).Count(&n).Error; err != nil {
			return 0, err
		}
		res := tx.Session(&gorm.Session{NewDB: true}).Table(db.tableName("notifications")).
			Where("id IN ?", chunk).Updates(map[string]any{"is_active": active, "updated_at": now()})
		return n, res.Error
	})
	if err != nil {
		return 0, fmt.Errorf("set notification channels active: %w", err)
	}
	return n, nil
}

// eachNotificationChunk runs fn over the distinct ids in chunks that stay
// under SQLite's bound-variable limit, in one transaction, and sums what
// fn counts.
func (db *handle) eachNotificationChunk(ctx context.Context, ids []int64, fn func(tx *gorm.DB, chunk []int64) (int64, error)) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	uniq := slices.Clone(ids)
	slices.Sort(uniq)
	uniq = slices.Compact(uniq)
	var total int64
	err := db.gdb.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for chunk := range slices.Chunk(uniq, 500) {
			n, err := fn(tx.Table(db.tableName("notifications")), chunk)
			if err != nil {
				return err
			}
			total += n
		}
		return nil
	})
	return int(total), err
}
