package webhooks

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/app/pro/events"
	"github.com/mailsvc/mailsvc/core"
)

// ParseSNS reads an SNS delivery body. Every field must be a string.
func ParseSNS(body []byte) (*SNSMessage, error) {
	var raw map[string]any
	if err := json.Unmarshal(body, &raw); err != nil || raw == nil {
		return nil, core.Errorf(core.EBADREQUEST, "The SNS message must be a JSON object.")
	}
	m := &SNSMessage{}
	fields := map[string]*string{
		"Type": &m.Type, "MessageId": &m.MessageID, "Token": &m.Token, "TopicArn": &m.TopicArn,
		"Subject": &m.Subject, "Message": &m.Message, "Timestamp": &m.Timestamp,
		"SignatureVersion": &m.SignatureVersion, "Signature": &m.Signature,
		"SigningCertURL": &m.SigningCertURL, "SigningCertUrl": &m.SigningCertURLAlt,
		"SubscribeURL": &m.SubscribeURL, "SubscribeUrl": &m.SubscribeURLAlt, "UnsubscribeURL": &m.UnsubscribeURL,
	}
	for k, dst := range fields {
		v, ok := raw[k]
		if !ok || v == nil {
			continue
		}
		s, isStr := v.(string)
		if !isStr {
			return nil, core.Errorf(core.EBADREQUEST, "The SNS field %s must be a string.", k)
		}
		*dst = s
	}
	_, m.hasSubject = raw["Subject"].(string)
	if m.SigningCertURL == "" {
		m.SigningCertURL = m.SigningCertURLAlt
	}
	if m.SubscribeURL == "" {
		m.SubscribeURL = m.SubscribeURLAlt
	}
	return m, nil
}

// trustedTopics returns the topic ARNs listed in the ses connections'
// webhook_topic_arns (comma or space separated).
func trustedTopics(secrets []core.Settings) map[string]bool {
	out := map[string]bool{}
	for _, s := range secrets {
		for _, arn := range strings.FieldsFunc(s.String(KeySESTopicARNs), func(r rune) bool { return r == ',' || r == ' ' || r == '\n' }) {
			out[arn] = true
		}
	}
	return out
}

// receiveSNS verifies an SNS delivery from a trusted topic and reads the
// SES notification in it; a SubscriptionConfirmation is confirmed.
func (s *Service) receiveSNS(ctx context.Context, req Request, secrets []core.Settings, now time.Time) (*batch, error) {
	m, err := ParseSNS(req.Body)
	if err != nil {
		return nil, err
	}
	if !trustedTopics(secrets)[m.TopicArn] {
		return nil, unauthorized("The SNS topic is not one a ses connection trusts.")
	}
	if s.SNS == nil {
		return nil, unauthorized("SNS messages cannot be verified here.")
	}
	switch m.Type {
	case "Notification", "SubscriptionConfirmation", "UnsubscribeConfirmation":
	default:
		return nil, unauthorized("Unknown SNS message type.")
	}
	if err := s.SNS.Verify(ctx, m); err != nil {
		return nil, err
	}
	ts, err := time.Parse(time.RFC3339, m.Timestamp)
	if err != nil || !fresh(ts, now) {
		return nil, unauthorized("The SNS timestamp is outside the accepted window.")
	}
	b := &batch{requestID: "sns:" + m.MessageID}
	switch m.Type {
	case "SubscriptionConfirmation":
		if err := s.SNS.Confirm(ctx, m.SubscribeURL); err != nil {
			return nil, err
		}
		s.logger().Info("confirmed the SNS subscription", "topic", m.TopicArn)
		b.confirmed = true
		return b, nil
	case "UnsubscribeConfirmation":
		return b, nil
	}
	var n map[string]any
	if err := json.Unmarshal([]byte(m.Message), &n); err != nil || n == nil {
		// A verified message that is not an SES notification: nothing to do.
		return b, nil
	}
	b.events = sesEvents(n)
	if s.HostHooks != nil && s.HostHooks.Listens(ctx, core.HookWebhookSES) {
		// The host's SNS handlers get the verified notification and its
		// SNS envelope (docs/hooks.md).
		envelope := map[string]any{"Type": m.Type, "MessageId": m.MessageID, "TopicArn": m.TopicArn,
			"Subject": m.Subject, "Timestamp": m.Timestamp, "Message": m.Message}
		b.hostHooks = []core.HostHook{{Name: core.HookWebhookSES, Args: []any{n, m.TopicArn, envelope}}}
	}
	s.Hooks.DoAction(core.HookWebhookSES, n, m.TopicArn)
	return b, nil
}

// sesEvents reads an SES notification (notificationType) or event
// publishing record (eventType): one event per recipient it names.
func sesEvents(n map[string]any) []Event {
	kind := str(n, "notificationType")
	if kind == "" {
		kind = str(n, "eventType")
	}
	mail, _ := n["mail"].(map[string]any)
	msgID := str(mail, "messageId")
	common, _ := mail["commonHeaders"].(map[string]any)
	headerID := strings.Trim(str(common, "messageId"), "<> ")
	at := func(obj map[string]any) time.Time {
		t, _ := time.Parse(time.RFC3339, str(obj, "timestamp"))
		return t.UTC()
	}
	mk := func(k, rcpt string, obj map[string]any) Event {
		return Event{Provider: ProviderSES, Raw: n, Kind: k, ProviderEvent: kind, MessageID: msgID, HeaderMessageID: headerID, Recipient: cleanAddress(rcpt), At: at(obj)}
	}
	var out []Event
	switch kind {
	case "Bounce":
		b, _ := n["bounce"].(map[string]any)
		perm := str(b, "bounceType") == "Permanent"
		for _, r := range objects(b, "bouncedRecipients") {
			ev := mk(events.EventBounced, str(r, "emailAddress"), b)
			ev.Permanent = perm
			ev.ProviderEvent = "Bounce/" + str(b, "bounceType") + "/" + str(b, "bounceSubType")
			ev.Reason = str(r, "diagnosticCode")
			if ev.Reason == "" {
				ev.Reason = str(b, "bounceType") + " " + str(b, "bounceSubType")
			}
			out = append(out, ev)
		}
	case "Complaint":
		c, _ := n["complaint"].(map[string]any)
		k := events.EventComplained
		if str(c, "complaintFeedbackType") == "not-spam" {
			k = events.EventOther
		}
		for _, r := range objects(c, "complainedRecipients") {
			ev := mk(k, str(r, "emailAddress"), c)
			ev.Reason = str(c, "complaintFeedbackType")
			out = append(out, ev)
		}
	case "Delivery":
		d, _ := n["delivery"].(map[string]any)
		rcpts, _ := d["recipients"].([]any)
		for _, r := range rcpts {
			rs, _ := r.(string)
			ev := mk(events.EventDelivered, rs, d)
			ev.Reason = str(d, "smtpResponse")
			out = append(out, ev)
		}
	default:
		k := map[string]string{"DeliveryDelay": events.EventDeferred, "Open": events.EventOpened, "Click": events.EventClicked, "Reject": events.EventDropped}[kind]
		if k == "" {
			k = events.EventOther
		}
		obj, _ := n[strings.ToLower(kind[:min(1, len(kind))])+kind[min(1, len(kind)):]].(map[string]any)
		out = append(out, mk(k, "", obj))
	}
	if len(out) == 0 {
		out = append(out, mk(events.EventOther, "", nil))
	}
	return out
}

// objects returns the objects of the array m[key].
func objects(m map[string]any, key string) []map[string]any {
	arr, _ := m[key].([]any)
	out := make([]map[string]any, 0, len(arr))
	for _, v := range arr {
		if o, ok := v.(map[string]any); ok {
			out = append(out, o)
		}
	}
	return out
}
