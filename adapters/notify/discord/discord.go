// Package discord is the "discord" alert channel type: alerts go to a
// Discord channel webhook (https://discord.com/api/webhooks/<id>/<token>)
// as {"content": <title>, "embeds": [{title, description, timestamp,
// color, fields}], "allowed_mentions": {"parse": []}} (so no text in an
// alert can ping anyone). The request adds wait=true to the URL's query,
// so Discord answers 200 with the created message (whose id is reported)
// instead of 204; both count as success. Discord's errors are JSON
// {"message": ..., "code": ...}; 429 carries Retry-After and is retried.
package discord

import (
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/mailsvc/mailsvc/adapters/notify"
	"github.com/mailsvc/mailsvc/core"
)

// Slug is the channel type's slug.
const Slug = "discord"

// KeyWebhookURL is the settings key of the webhook URL.
const KeyWebhookURL = notify.KeyWebhookURL

// Discord's limits on the parts of a message.
const (
	contentLimit     = 2000
	titleLimit       = 256
	descriptionLimit = 4096
	fieldValueLimit  = 1024
)

// Embed colours by event: red for failures, green for a recovery, amber
// for the rest.
const (
	colorRed   = 0xD93025
	colorGreen = 0x1E8E3E
	colorAmber = 0xF29900
)

func init() { core.RegisterChannelType(Type()) }

// Type returns the channel type as it is registered.
func Type() core.ChannelType {
	return notify.WebhookURLType(Slug, "Discord", "Webhook URL",
		"Channel settings → Integrations → Webhooks → Copy Webhook URL (https://discord.com/api/webhooks/...).", New)
}

// New returns the Notifier of a Discord channel: it posts Body to the
// webhook with wait=true and answers with the id of the message Discord
// created.
func New(ch *core.NotificationChannel, env core.NotifierEnv) (core.Notifier, error) {
	raw := ch.Settings.String(KeyWebhookURL)
	u, err := url.Parse(raw)
	if raw == "" || err != nil {
		return nil, core.InvalidField(KeyWebhookURL, "Must be a valid URL.")
	}
	q := u.Query()
	q.Set("wait", "true")
	u.RawQuery = q.Encode()
	return &notify.JSONWebhook{Label: "Discord", URL: u.String(), Client: notify.Client(env),
		Body: func(a core.Alert) any { return Body(a) }, Answer: answer}, nil
}

// Payload is the body posted to the webhook.
type Payload struct {
	Content         string          `json:"content"`
	Embeds          []Embed         `json:"embeds"`
	AllowedMentions AllowedMentions `json:"allowed_mentions"`
}

// Embed is one rich embed of a message.
type Embed struct {
	Title       string       `json:"title"`
	Description string       `json:"description,omitempty"`
	Timestamp   string       `json:"timestamp,omitempty"`
	Color       int          `json:"color"`
	Fields      []EmbedField `json:"fields,omitempty"`
}

// EmbedField is one name/value pair of an embed.
type EmbedField struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Inline bool   `json:"inline"`
}

// AllowedMentions limits who a message may ping; alerts ping no one.
type AllowedMentions struct {
	Parse []string `json:"parse"`
}

// Color returns the embed colour of an event.
func Color(event string) int {
	switch event {
	case core.EventDeliveryFailed, core.EventConnectionDown, core.EventOAuthRefreshFailed:
		return colorRed
	case core.EventConnectionRecovered:
		return colorGreen
	}
	return colorAmber
}

// Body returns the payload of a.
func Body(a core.Alert) Payload {
	e := Embed{
		Title:       notify.Truncate(notify.Title(a), titleLimit),
		Description: notify.Truncate(a.Message, descriptionLimit),
		Color:       Color(a.Event),
	}
	if !a.At.IsZero() {
		e.Timestamp = a.At.UTC().Format(time.RFC3339)
	}
	for _, f := range notify.Facts(a) {
		if f.Name == "Time" {
			continue // the embed's timestamp shows it
		}
		e.Fields = append(e.Fields, EmbedField{Name: f.Name, Value: notify.Truncate(f.Value, fieldValueLimit), Inline: true})
	}
	return Payload{
		Content:         notify.Truncate(notify.Title(a), contentLimit),
		Embeds:          []Embed{e},
		AllowedMentions: AllowedMentions{Parse: []string{}},
	}
}

// answer returns Discord's 2xx answer in words: the id of the created
// message, or the status when the answer has none.
func answer(resp *notify.Response) string {
	var msg struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(resp.Body, &msg) == nil && msg.ID != "" {
		return fmt.Sprintf("Discord accepted the message (id %s).", msg.ID)
	}
	return fmt.Sprintf("Discord answered HTTP %d.", resp.Status)
}
