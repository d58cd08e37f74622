package alerts

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Bulk actions of POST /notifications/bulk.
const (
	ActionEnable  = "enable"
	ActionDisable = "disable"
	ActionDelete  = "delete"
)

// DefaultTestTimeout bounds a test send.
const DefaultTestTimeout = 15 * time.Second

// ChannelInput is a create or partial update of a channel. A nil field is
// left as it is (on create: defaulted or required).
type ChannelInput struct {
	Name     *string
	Type     *string
	IsActive *bool
	// Events replaces the channel's events; an empty list means all.
	Events *[]string
	// ThresholdCount (1 to core.MaxThresholdCount) and ThresholdMinutes
	// (0 to core.MaxThresholdMinutes, at least 1 when the count is above
	// 1) set the channel's delivery_failed threshold.
	ThresholdCount   *int
	ThresholdMinutes *int
	// Settings keys merge into the stored ones. A value equal to core.Mask
	// keeps the stored secret; null removes the key.
	Settings map[string]any
}

// Channels manages alert channels: validation against the channel type's
// schema and the URL guard, encryption of secrets at rest and masking of
// secrets in every value it returns to a client. It also sends test
// alerts and detects Telegram chats.
type Channels struct {
	Store  core.NotificationStore
	Cipher core.Cipher
	// CheckURL, when set, vets every URL-typed setting (and every key named
	// url or *_url): an error refuses the URL with a 422 on its field. The
	// binary sets it to the SSRF guard (private addresses refused unless
	// MAILSVC_ALLOW_PRIVATE_WEBHOOKS).
	CheckURL func(raw string) error
	// Env is what channel types build their Notifiers from.
	Env core.NotifierEnv
	// DetectChats lists the chats a Telegram bot can post to; nil answers
	// POST /notifications/telegram/detect-chats with 503.
	DetectChats ChatDetector
	// Site names this site in test alerts.
	Site string
	// TestTimeout bounds a test send; 0 means DefaultTestTimeout.
	TestTimeout time.Duration
	// Use, on a multisite network, limits the connection a channel sends
	// through (the email channel's connection_id) to the network's own:
	// alert channels are the network's, and a connection a site created
	// for itself is answered as a missing one. Nil (a single site) lets
	// a channel name any connection.
	Use    core.ConnectionUse
	Logger *slog.Logger
}

func (s *Channels) logger() *slog.Logger { return core.LoggerOr(s.Logger) }

// List returns every channel, masked.
func (s *Channels) List(ctx context.Context) ([]*core.NotificationChannel, error) {
	list, err := s.Store.FindNotificationChannels(ctx)
	if err != nil {
		return nil, fmt.Errorf("list notification channels: %w", err)
	}
	out := make([]*core.NotificationChannel, len(list))
	for i, c := range list {
		out[i] = s.masked(c)
	}
	return out, nil
}

// Get returns one channel, masked.
func (s *Channels) Get(ctx context.Context, id int64) (*core.NotificationChannel, error) {
	c, err := s.Store.FindNotificationChannelByID(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("get notification channel %d: %w", id, err)
	}
	return s.masked(c), nil
}

// Create validates and stores a new channel and returns it masked.
func (s *Channels) Create(ctx context.Context, in ChannelInput) (*core.NotificationChannel, error) {
	c, err := s.build(nil, in)
	if err != nil {
		return nil, err
	}
	if err := s.checkConnection(ctx, c); err != nil {
		return nil, err
	}
	if err := s.Store.CreateNotificationChannel(ctx, c); err != nil {
		return nil, fmt.Errorf("create notification channel: %w", err)
	}
	return s.masked(c), nil
}

// Update applies a partial update to a channel and returns it masked.
func (s *Channels) Update(ctx context.Context, id int64, in ChannelInput) (*core.NotificationChannel, error) {
	stored, err := s.Store.FindNotificationChannelByID(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("get notification channel %d: %w", id, err)
	}
	c, err := s.build(stored, in)
	if err != nil {
		return nil, err
	}
	if _, named := in.Settings[channelConnectionKey]; named {
		if err := s.checkConnection(ctx, c); err != nil {
			return nil, err
		}
	}
	if err := s.Store.UpdateNotificationChannel(ctx, c); err != nil {
		return nil, fmt.Errorf("update notification channel %d: %w", id, err)
	}
	return s.masked(c), nil
}

// channelConnectionKey is the setting of the channel types that send
// through a connection (the email channel).
const channelConnectionKey = "connection_id"

// checkConnection refuses a channel whose connection (its connection_id
// setting) the network may not use (Use): the answer of a connection that
// does not exist.
func (s *Channels) checkConnection(ctx context.Context, c *core.NotificationChannel) error {
	id := c.Settings.Int(channelConnectionKey, 0)
	if s.Use == nil || id < 1 {
		return nil
	}
	usable, err := core.CanUseConnection(ctx, s.Use, 0, id)
	if err != nil {
		return fmt.Errorf("check the channel's connection: %w", err)
	}
	if !usable {
		return core.InvalidField(channelConnectionKey, core.NoSuchConnection(id))
	}
	return nil
}

// Delete removes one channel; ENOTFOUND if it does not exist.
func (s *Channels) Delete(ctx context.Context, id int64) error {
	n, err := s.Store.DeleteNotificationChannels(ctx, []int64{id})
	if err != nil {
		return fmt.Errorf("delete notification channel %d: %w", id, err)
	}
	if n == 0 {
		return core.Errorf(core.ENOTFOUND, "Notification channel %d not found.", id)
	}
	return nil
}

// Bulk enables, disables or deletes the channels with the given ids and
// returns how many existed.
func (s *Channels) Bulk(ctx context.Context, action string, ids []int64) (int, error) {
	fields := map[string]string{}
	if action != ActionEnable && action != ActionDisable && action != ActionDelete {
		fields["action"] = "Must be one of: enable, disable, delete."
	}
	if len(ids) == 0 {
		fields["ids"] = "At least one id is required."
	}
	for _, id := range ids {
		if id < 1 {
			fields["ids"] = "Ids must be positive whole numbers."
		}
	}
	if err := core.Invalid(fields); err != nil {
		return 0, err
	}
	var n int
	var err error
	if action == ActionDelete {
		n, err = s.Store.DeleteNotificationChannels(ctx, ids)
	} else {
		n, err = s.Store.SetNotificationChannelsActive(ctx, ids, action == ActionEnable)
	}
	if err != nil {
		return 0, fmt.Errorf("bulk %s notification channels: %w", action, err)
	}
	return n, nil
}

// build validates in over stored (nil on create) and returns the channel
// to store, with sensitive values encrypted. stored is not modified.
func (s *Channels) build(stored *core.NotificationChannel, in ChannelInput) (*core.NotificationChannel, error) {
	c := &core.NotificationChannel{IsActive: true, Events: []string{}, ThresholdCount: 1, Settings: core.Settings{}}
	var current core.Settings
	if stored != nil {
		c = &core.NotificationChannel{
			ID: stored.ID, Name: stored.Name, Type: stored.Type, IsActive: stored.IsActive,
			Events: slices.Clone(stored.Events), CreatedAt: stored.CreatedAt, UpdatedAt: stored.UpdatedAt,
			ThresholdCount: max(stored.ThresholdCount, 1), ThresholdMinutes: stored.ThresholdMinutes,
			ThresholdAlertedAt: stored.ThresholdAlertedAt,
		}
		current = s.decrypted(stored)
	}
	fields := map[string]string{}
	if in.Name == nil && stored == nil {
		fields["name"] = "This field is required."
	}
	if in.Name != nil {
		name := strings.TrimSpace(*in.Name)
		switch {
		case name == "":
			fields["name"] = "This field is required."
		case len(name) > 191:
			fields["name"] = "Must be at most 191 characters."
		}
		c.Name = name
	}
	switch {
	case in.Type == nil && stored == nil, in.Type != nil && *in.Type == "":
		fields["type"] = "This field is required."
	case in.Type != nil:
		if _, ok := core.LookupChannelType(*in.Type); !ok {
			fields["type"] = fmt.Sprintf("Unknown channel type %q.", *in.Type)
		} else if stored != nil && *in.Type != stored.Type {
			current = nil // a new type starts from fresh settings
		}
		c.Type = *in.Type
	}
	if in.IsActive != nil {
		c.IsActive = *in.IsActive
	}
	if in.Events != nil {
		events, msg := checkEvents(*in.Events)
		if msg != "" {
			fields["events"] = msg
		}
		c.Events = events
	}
	if c.Events == nil {
		c.Events = []string{}
	}
	checkThreshold(c, in, fields)
	if err := core.Invalid(fields); err != nil {
		return nil, err
	}
	t, _ := core.LookupChannelType(c.Type)
	merged := current.Clone()
	if merged == nil {
		merged = core.Settings{}
	}
	for k, v := range in.Settings {
		switch {
		case v == nil:
			delete(merged, k)
		case v == core.Mask && sensitive(t, k):
			// keep the stored secret
		default:
			merged[k] = v
		}
	}
	if err := s.validateSettings(t, merged); err != nil {
		return nil, err
	}
	enc, err := s.encrypt(t, merged)
	if err != nil {
		return nil, err
	}
	c.Settings = enc
	return c, nil
}

// checkThreshold applies the threshold of in to c and adds a message per
// bad field to fields.
func checkThreshold(c *core.NotificationChannel, in ChannelInput, fields map[string]string) {
	if in.ThresholdCount != nil {
		c.ThresholdCount = *in.ThresholdCount
		if c.ThresholdCount < 1 || c.ThresholdCount > core.MaxThresholdCount {
			fields["threshold_count"] = fmt.Sprintf("Must be a whole number from 1 to %d (1: alert on every failure).", core.MaxThresholdCount)
		}
	}
	if in.ThresholdMinutes != nil {
		c.ThresholdMinutes = *in.ThresholdMinutes
		if c.ThresholdMinutes < 0 || c.ThresholdMinutes > core.MaxThresholdMinutes {
			fields["threshold_minutes"] = fmt.Sprintf("Must be a whole number of minutes from 0 to %d.", core.MaxThresholdMinutes)
		}
	}
	if fields["threshold_count"] == "" && fields["threshold_minutes"] == "" && c.ThresholdCount > 1 && c.ThresholdMinutes < 1 {
		fields["threshold_minutes"] = "A threshold of more than one failure needs a window: at least 1 minute."
	}
}

// checkEvents returns the events without repeats, or a message naming
// the first unknown one.
func checkEvents(in []string) ([]string, string) {
	out := []string{}
	for _, e := range in {
		if !slices.Contains(core.AlertEvents, e) {
			return nil, fmt.Sprintf("Unknown event %q; must be among: %s.", e, strings.Join(core.AlertEvents, ", "))
		}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out, ""
}

// validateSettings checks s against t's schema and rules, then every URL
// setting that passed against CheckURL. Values are normalised in place.
func (s *Channels) validateSettings(t *core.ChannelType, settings core.Settings) error {
	fields := map[string]string{}
	if err := t.ValidateSettings(settings); err != nil {
		if core.ErrorCode(err) != core.EINVALID {
			return fmt.Errorf("validate channel settings: %w", err)
		}
		for k, v := range core.ErrorFields(err) {
			fields[k] = v
		}
	}
	if s.CheckURL != nil {
		for k, v := range settings {
			str, ok := v.(string)
			if !ok || str == "" || fields[k] != "" || !isURLKey(t, k) {
				continue
			}
			if err := s.CheckURL(str); err != nil {
				// The guard's text may quote the URL, which can be a
				// secret (a webhook URL): answer in fixed words.
				fields[k] = "This URL is refused: it must be http(s) and reach a public address (loopback, link-local, private and other special-purpose addresses need MAILSVC_ALLOW_PRIVATE_WEBHOOKS)."
			}
		}
	}
	return core.Invalid(fields)
}

// isURLKey reports whether a setting holds a URL that alerts are sent to.
func isURLKey(t *core.ChannelType, key string) bool {
	if f := t.Field(key); f != nil && f.Type == core.FieldURL {
		return true
	}
	return key == "url" || strings.HasSuffix(key, "_url")
}

// sensitive reports whether a setting of channel type t is a secret.
func sensitive(t *core.ChannelType, key string) bool {
	if t != nil {
		if f := t.Field(key); f != nil && f.Sensitive {
			return true
		}
	}
	return core.IsSensitiveKey(key, nil)
}

func (s *Channels) encrypt(t *core.ChannelType, in core.Settings) (core.Settings, error) {
	return core.EncryptSecrets(s.Cipher, in, func(k string) bool { return sensitive(t, k) })
}

// decrypted returns c's settings with secrets decrypted. A value that
// cannot be decrypted (the key changed) becomes "" and is logged by key.
func (s *Channels) decrypted(c *core.NotificationChannel) core.Settings {
	t, _ := core.LookupChannelType(c.Type)
	out, bad := core.DecryptSecrets(s.Cipher, c.Settings, func(k string) bool { return sensitive(t, k) })
	if len(bad) > 0 {
		s.logger().Warn("alert channel secrets cannot be decrypted: the encryption key changed; enter them again",
			"channel_id", c.ID, "keys", strings.Join(bad, ","))
	}
	return out
}

// effective returns a copy of c with its secrets decrypted: what a
// Notifier is built from. It must never reach a client.
func (s *Channels) effective(c *core.NotificationChannel) *core.NotificationChannel {
	out := *c
	out.Events = slices.Clone(c.Events)
	out.Settings = s.decrypted(c)
	return &out
}

// masked returns c with every sensitive value replaced by core.Mask.
func (s *Channels) masked(c *core.NotificationChannel) *core.NotificationChannel {
	t, _ := core.LookupChannelType(c.Type)
	out := *c
	out.Events = slices.Clone(c.Events)
	if out.Events == nil {
		out.Events = []string{}
	}
	out.ThresholdCount = max(out.ThresholdCount, 1)
	out.Settings = core.MaskSecrets(c.Settings, func(k string) bool { return sensitive(t, k) })
	return &out
}

// redact replaces every secret of c (decrypted settings) found in msg with
// core.Mask: errors of HTTP clients quote the URL they failed on, and a
// webhook URL is a secret.
func redact(msg string, c *core.NotificationChannel) string {
	t, _ := core.LookupChannelType(c.Type)
	for k, v := range c.Settings {
		str, ok := v.(string)
		if !ok || len(str) < 4 || !sensitive(t, k) {
			continue
		}
		msg = strings.ReplaceAll(msg, str, core.Mask)
	}
	return msg
}
