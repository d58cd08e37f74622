// Package slack is the "slack" alert channel type: alerts go to a Slack
// incoming webhook (https://hooks.slack.com/services/...) as
// {"text": <the alert as plain text>, "blocks": [one mrkdwn section]}.
// Slack answers 200 "ok"; its errors are a status with a short code as
// the body (400 invalid_payload, 403 invalid_token, 404 no_service,
// 410 channel_is_archived, 429, 5xx), classified as notify.StatusError
// does. Any http(s) URL is accepted, so tests and relays can stand in for
// Slack; the private address guard still applies.
package slack

import (
	"strings"

	"github.com/mailsvc/mailsvc/adapters/notify"
	"github.com/mailsvc/mailsvc/core"
)

// Slug is the channel type's slug.
const Slug = "slack"

// KeyWebhookURL is the settings key of the incoming webhook URL.
const KeyWebhookURL = notify.KeyWebhookURL

// sectionLimit is the most characters a section block's text may hold.
const sectionLimit = 3000

func init() { core.RegisterChannelType(Type()) }

// Type returns the channel type as it is registered.
func Type() core.ChannelType {
	return notify.WebhookURLType(Slug, "Slack", "Incoming webhook URL",
		"From a Slack app's Incoming Webhooks page: https://hooks.slack.com/services/...", New)
}

// New returns the Notifier of a Slack channel: it posts Body to the
// webhook and answers Slack's answer in words.
func New(ch *core.NotificationChannel, env core.NotifierEnv) (core.Notifier, error) {
	return notify.NewJSONWebhook(ch, env, "Slack", Body)
}

// Payload is the body posted to the webhook.
type Payload struct {
	Text   string  `json:"text"`
	Blocks []Block `json:"blocks"`
}

// Block is a Slack layout block; alerts use one section.
type Block struct {
	Type string `json:"type"`
	Text *Text  `json:"text,omitempty"`
}

// Text is a block's text object.
type Text struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// escape escapes the three characters Slack's mrkdwn reserves.
var escape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace

// Body returns the payload of a: the plain text (Slack's notification
// fallback) and a section with the title in bold, the message and the
// facts.
func Body(a core.Alert) Payload {
	var b strings.Builder
	b.WriteString("*" + escape(notify.Title(a)) + "*")
	if m := strings.TrimSpace(a.Message); m != "" {
		b.WriteString("\n" + escape(m))
	}
	b.WriteString("\n")
	for _, f := range notify.Facts(a) {
		b.WriteString("\n*" + f.Name + ":* " + escape(f.Value))
	}
	return Payload{
		Text:   escape(notify.Title(a)),
		Blocks: []Block{{Type: "section", Text: &Text{Type: "mrkdwn", Text: notify.Truncate(b.String(), sectionLimit)}}},
	}
}
