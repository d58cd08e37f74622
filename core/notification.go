package core

import (
	"context"
	"net/http"
	"time"
)

// Alert events a notification channel can subscribe to.
const (
	EventDeliveryFailed      = "delivery_failed"      // a message failed for good
	EventFallbackUsed        = "fallback_used"        // the fallback connection was used
	EventConnectionDown      = "connection_down"      // a health check failed
	EventConnectionRecovered = "connection_recovered" // a down connection passed a check
	EventOAuthRefreshFailed  = "oauth_refresh_failed" // a token refresh failed for good
	EventQueueStalled        = "queue_stalled"        // the oldest queued message is too old
	EventSiteQuota           = "site_quota"           // a network site reached 80 % or 100 % of its quota
	EventFloodHeld           = "flood_held"           // a source sent far more than usual: its excess is held or alerted on
)

// AlertEvents lists every event, in the order the docs give them.
var AlertEvents = []string{
	EventDeliveryFailed, EventFallbackUsed, EventConnectionDown,
	EventConnectionRecovered, EventOAuthRefreshFailed, EventQueueStalled,
	EventSiteQuota, EventFloodHeld,
}

// Alert is one thing worth telling a site owner.
type Alert struct {
	Event string `json:"event"`
	// ConnectionID and ConnectionName name the connection concerned (0
	// and "" for the queue-stalled event).
	ConnectionID   int64  `json:"connection_id,omitempty"`
	ConnectionName string `json:"connection_name,omitempty"`
	// LogID names the message concerned, when there is one.
	LogID int64 `json:"log_id,omitempty"`
	// Title is a one-line summary; Message the details in words. Neither
	// holds a secret.
	Title   string    `json:"title"`
	Message string    `json:"message"`
	Site    string    `json:"site,omitempty"`
	At      time.Time `json:"at"`
	// Test marks a test alert sent by POST /notifications/test.
	Test bool `json:"test,omitempty"`
}

// Alerter raises alerts. Raise returns at once: delivery to the channels
// happens in the background, with retries, and never blocks or fails the
// caller.
type Alerter interface {
	Raise(ctx context.Context, a Alert)
}

// NotificationChannel is an alert channel: where alerts go (Type and its
// Settings) and which events it wants (empty: all).
type NotificationChannel struct {
	ID       int64    `json:"id"`
	Name     string   `json:"name"`
	Type     string   `json:"type"`
	IsActive bool     `json:"is_active"`
	Events   []string `json:"events"`
	// ThresholdCount and ThresholdMinutes hold back delivery_failed
	// alerts until ThresholdCount messages failed for good within
	// ThresholdMinutes (1 and 0: every failure alerts).
	ThresholdCount   int `json:"threshold_count"`
	ThresholdMinutes int `json:"threshold_minutes"`
	// ThresholdAlertedAt is when the channel last alerted on reaching its
	// threshold (nil: never); the window re-arms from it.
	ThresholdAlertedAt *time.Time `json:"-"`
	Settings           Settings   `json:"settings"`
	CreatedAt          time.Time  `json:"created_at"`
	UpdatedAt          time.Time  `json:"updated_at"`
}

// Bounds of a channel's alert threshold.
const (
	MaxThresholdCount   = 1000
	MaxThresholdMinutes = 10080 // a week
)

// Thresholded reports whether the channel holds delivery_failed alerts
// back until its threshold is reached.
func (c *NotificationChannel) Thresholded() bool { return c.ThresholdCount > 1 }

// Wants reports whether the channel takes alerts of event.
func (c *NotificationChannel) Wants(event string) bool {
	if len(c.Events) == 0 {
		return true
	}
	for _, e := range c.Events {
		if e == event {
			return true
		}
	}
	return false
}

// NotificationStore persists alert channels. Settings are stored as given:
// the caller encrypts sensitive values.
type NotificationStore interface {
	// FindNotificationChannels returns every channel ordered by id.
	FindNotificationChannels(ctx context.Context) ([]*NotificationChannel, error)
	// FindNotificationChannelByID returns one channel or ENOTFOUND.
	FindNotificationChannelByID(ctx context.Context, id int64) (*NotificationChannel, error)
	// CreateNotificationChannel inserts c and sets ID, CreatedAt, UpdatedAt.
	CreateNotificationChannel(ctx context.Context, c *NotificationChannel) error
	// UpdateNotificationChannel replaces name, type, is_active, events,
	// threshold_count, threshold_minutes and settings of c.ID and sets
	// UpdatedAt; ENOTFOUND if it does not exist.
	UpdateNotificationChannel(ctx context.Context, c *NotificationChannel) error
	// DeleteNotificationChannels deletes the channels with the given ids
	// and returns how many existed.
	DeleteNotificationChannels(ctx context.Context, ids []int64) (int, error)
	// SetNotificationChannelsActive sets is_active of the given channels
	// and returns how many existed.
	SetNotificationChannelsActive(ctx context.Context, ids []int64, active bool) (int, error)
}

// Notifier sends alerts to one configured channel. Notify returns the
// channel's answer in words (for POST /notifications/test) or an error
// classified Temporary (worth retrying: network, 429, 5xx) or Permanent.
// It honours ctx and is safe for concurrent use.
type Notifier interface {
	Notify(ctx context.Context, a Alert) (string, error)
}

// NotifierEnv carries what a channel type may use from its host.
type NotifierEnv struct {
	// HTTPClient reaches URLs that a user typed (webhooks); it refuses
	// private addresses unless MAILSVC_ALLOW_PRIVATE_WEBHOOKS is true.
	HTTPClient *http.Client
	// Mailer sends the email channel's messages through a connection.
	Mailer AlertMailer
	// TelegramAPI is the Bot API base URL ("" means the real one).
	TelegramAPI string
	// TwilioAPI is the Twilio REST API base URL ("" means the real one).
	TwilioAPI string
}

// AlertMailer sends one alert email through a connection, now.
type AlertMailer interface {
	SendAlertEmail(ctx context.Context, connID int64, msg *Message) error
}

// ChannelType describes one kind of alert channel: its settings schema
// and the constructor of its Notifier, registered like a mail driver.
type ChannelType struct {
	Slug   string  `json:"type"`
	Name   string  `json:"name"`
	Fields []Field `json:"fields"`
	// Validate, when set, checks rules across fields (after the schema).
	Validate func(s Settings) map[string]string                               `json:"-"`
	New      func(ch *NotificationChannel, env NotifierEnv) (Notifier, error) `json:"-"`
}
