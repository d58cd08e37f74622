// Package notify holds what the alert channel types (one package each
// under adapters/notify/<type>, registered into core in init()) do alike:
// an alert in words (Title, Facts, PlainText), posting a JSON body to a
// channel's URL with the answer classified temporary or permanent (Post,
// StatusError, RetryAfter), the channel types whose one setting is a
// webhook URL (WebhookURLType, JSONWebhook), and keeping a channel's
// secrets out of error text (Scrub). The SSRF guard is in
// adapters/notify/netguard; adapters/notify/all blank-imports every
// channel type.
package notify
