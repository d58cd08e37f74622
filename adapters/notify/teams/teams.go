// Package teams is the "teams" alert channel type: alerts go to a
// Microsoft Teams incoming webhook or a Teams Workflows ("Post to a
// channel when a webhook request is received") URL as a message with one
// Adaptive Card 1.4 attachment: the title (bold), the message and a
// FactSet with the alert's details. The classic incoming webhook answers
// 200 "1", a workflow 202 Accepted; any 2xx is success, 429 and 5xx are
// retried, other statuses are permanent failures.
package teams

import (
	"strings"

	"github.com/mailsvc/mailsvc/adapters/notify"
	"github.com/mailsvc/mailsvc/core"
)

// Slug is the channel type's slug.
const Slug = "teams"

// KeyWebhookURL is the settings key of the webhook or workflow URL.
const KeyWebhookURL = notify.KeyWebhookURL

// Card constants.
const (
	ContentTypeAdaptiveCard = "application/vnd.microsoft.card.adaptive"
	cardSchema              = "http://adaptivecards.io/schemas/adaptive-card.json"
	cardVersion             = "1.4"
)

func init() { core.RegisterChannelType(Type()) }

// Type returns the channel type as it is registered.
func Type() core.ChannelType {
	return notify.WebhookURLType(Slug, "Microsoft Teams", "Webhook or workflow URL",
		"The URL of a Teams Workflows \"When a Teams webhook request is received\" trigger, or of a channel's incoming webhook.", New)
}

// New returns the Notifier of a Teams channel: it posts Body to the
// webhook and answers Teams' answer in words.
func New(ch *core.NotificationChannel, env core.NotifierEnv) (core.Notifier, error) {
	return notify.NewJSONWebhook(ch, env, "Microsoft Teams", Body)
}

// Payload is the message posted to the webhook.
type Payload struct {
	Type        string       `json:"type"`
	Attachments []Attachment `json:"attachments"`
}

// Attachment is one card of the message.
type Attachment struct {
	ContentType string  `json:"contentType"`
	ContentURL  *string `json:"contentUrl"`
	Content     Card    `json:"content"`
}

// Card is an Adaptive Card.
type Card struct {
	Schema  string    `json:"$schema"`
	Type    string    `json:"type"`
	Version string    `json:"version"`
	Body    []Element `json:"body"`
}

// Element is a TextBlock or a FactSet of a card's body.
type Element struct {
	Type   string `json:"type"`
	Text   string `json:"text,omitempty"`
	Weight string `json:"weight,omitempty"`
	Size   string `json:"size,omitempty"`
	Wrap   bool   `json:"wrap,omitempty"`
	Facts  []Fact `json:"facts,omitempty"`
}

// Fact is one title/value pair of a FactSet.
type Fact struct {
	Title string `json:"title"`
	Value string `json:"value"`
}

// Body returns the message of a.
func Body(a core.Alert) Payload {
	body := []Element{{Type: "TextBlock", Text: notify.Title(a), Weight: "Bolder", Size: "Medium", Wrap: true}}
	if m := strings.TrimSpace(a.Message); m != "" {
		body = append(body, Element{Type: "TextBlock", Text: m, Wrap: true})
	}
	var facts []Fact
	for _, f := range notify.Facts(a) {
		facts = append(facts, Fact{Title: f.Name, Value: f.Value})
	}
	body = append(body, Element{Type: "FactSet", Facts: facts})
	return Payload{
		Type: "message",
		Attachments: []Attachment{{
			ContentType: ContentTypeAdaptiveCard,
			Content:     Card{Schema: cardSchema, Type: "AdaptiveCard", Version: cardVersion, Body: body},
		}},
	}
}
