package notify

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/mailsvc/mailsvc/core"
)

// KeyWebhookURL is the settings key of the webhook URL of the channel
// types whose one setting it is (Slack, Microsoft Teams, Discord).
const KeyWebhookURL = "webhook_url"

// WebhookURLType returns a channel type whose one setting is the webhook
// URL under KeyWebhookURL: required, sensitive and an http(s) URL with a
// host (ValidateURL). label and help describe the field to the user.
func WebhookURLType(slug, name, label, help string, newNotifier func(*core.NotificationChannel, core.NotifierEnv) (core.Notifier, error)) core.ChannelType {
	return core.ChannelType{
		Slug: slug,
		Name: name,
		Fields: []core.Field{
			{Key: KeyWebhookURL, Label: label, Type: core.FieldURL, Required: true, Sensitive: true, Help: help},
		},
		Validate: func(s core.Settings) map[string]string { return ValidateURL(s, KeyWebhookURL) },
		New:      newNotifier,
	}
}

// JSONWebhook is a core.Notifier that posts each alert, encoded by Body as
// JSON, to one webhook URL.
type JSONWebhook struct {
	// Label names the service in errors and answers ("Slack").
	Label string
	// URL is where alerts go; it never shows in an error or an answer.
	URL    string
	Client *http.Client
	// Body returns the value posted as JSON for an alert.
	Body func(core.Alert) any
	// Answer, when set, puts a 2xx answer in words; without it the answer
	// is AnswerText(Label, resp).
	Answer func(resp *Response) string
}

// NewJSONWebhook returns the JSONWebhook of a channel whose URL is the
// KeyWebhookURL setting, labelled label, posting body's payload through
// the host's client of env. A channel without the URL is invalid.
func NewJSONWebhook[P any](ch *core.NotificationChannel, env core.NotifierEnv, label string, body func(core.Alert) P) (*JSONWebhook, error) {
	u := ch.Settings.String(KeyWebhookURL)
	if u == "" {
		return nil, core.InvalidField(KeyWebhookURL, "This field is required.")
	}
	return &JSONWebhook{Label: label, URL: u, Client: Client(env), Body: func(a core.Alert) any { return body(a) }}, nil
}

// Notify posts a and returns the service's answer in words. Its errors
// are classified as Post's are.
func (w *JSONWebhook) Notify(ctx context.Context, a core.Alert) (string, error) {
	body, err := json.Marshal(w.Body(a))
	if err != nil {
		return "", core.Permanent(fmt.Errorf("%s: encoding the alert: %w", w.Label, err))
	}
	resp, err := Post(ctx, w.Client, w.Label, w.URL, body, nil)
	if err != nil {
		return "", Scrub(err, w.URL)
	}
	answer := AnswerText(w.Label, resp)
	if w.Answer != nil {
		answer = w.Answer(resp)
	}
	return ScrubText(answer, w.URL), nil
}

// AnswerText returns a 2xx answer in words: "<label> answered HTTP
// <status>", followed by ": " and the Summary of the body when it has one.
func AnswerText(label string, resp *Response) string {
	answer := fmt.Sprintf("%s answered HTTP %d", label, resp.Status)
	if s := resp.Summary(); s != "" {
		answer += ": " + s
	}
	return answer
}
