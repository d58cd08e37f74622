package webhooks

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/app/pro/events"
	"github.com/mailsvc/mailsvc/core"
)

// ElasticEmailTokenParam is the query parameter of the notification URL
// that carries the connection's webhook_token.
const ElasticEmailTokenParam = "token"

// verifyElasticEmail checks the token of the notification URL against
// each connection's webhook_token, in constant time. Elastic Email signs
// nothing: its HTTP notification is a GET (a POST with the same
// parameters is taken too) whose query names one event, so the token is
// the only proof, and a replay is refused by the parameters' hash.
func verifyElasticEmail(req Request, secrets []core.Settings) (*batch, error) {
	params := url.Values{}
	for k, v := range req.Query {
		params[k] = v
	}
	if form, err := url.ParseQuery(string(req.Body)); err == nil {
		for k, v := range form {
			params[k] = append(params[k], v...)
		}
	}
	token := params.Get(ElasticEmailTokenParam)
	if token == "" {
		return nil, unauthorized("The Elastic Email notification token is missing.")
	}
	if !tokenMatches(token, secrets, KeyElasticEmailToken) {
		return nil, unauthorized("The Elastic Email notification token does not match.")
	}
	params.Del(ElasticEmailTokenParam)
	if params.Get("status") == "" {
		return nil, core.Errorf(core.EBADREQUEST, "The Elastic Email notification names no status.")
	}
	return &batch{requestID: "params:" + paramsHash(params), events: []Event{elasticEmailEvent(params)}}, nil
}

// paramsHash is the SHA-256 of the parameters in a fixed order.
func paramsHash(p url.Values) string {
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		for _, v := range p[k] {
			h.Write([]byte(k + "\x00" + v + "\x00"))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// elasticEmailHard are the bounce categories that mean the address does
// not take mail.
var elasticEmailHard = map[string]bool{"NoMailbox": true, "AccountProblem": true, "DNSProblem": true}

// elasticEmailKinds are the kinds of Elastic Email's statuses, lower
// case; an error is a bounce unless its category is ManualCancel.
var elasticEmailKinds = eventKinds{"sent": events.EventDelivered, "opened": events.EventOpened, "clicked": events.EventClicked,
	"error": events.EventBounced, "bounced": events.EventBounced, "abusereport": events.EventComplained, "unsubscribed": events.EventUnsubscribed}

// elasticEmailEvent reads one notification by its status: Sent,
// Opened, Clicked, Error (a bounce, its category saying which),
// AbuseReport, Unsubscribed.
func elasticEmailEvent(p url.Values) Event {
	status, category := p.Get("status"), p.Get("category")
	ev := Event{Provider: ProviderElasticEmail, ProviderEvent: status, MessageID: p.Get("messageid"),
		Recipient: cleanAddress(p.Get("to")), Reason: category}
	if ev.MessageID == "" {
		ev.MessageID = p.Get("transaction")
	}
	raw := map[string]any{}
	for k := range p {
		raw[k] = p.Get(k)
	}
	ev.Raw = raw
	for _, layout := range []string{"1/2/2006 3:04:05 PM", time.RFC3339, "2006-01-02 15:04:05"} {
		if t, err := time.Parse(layout, p.Get("date")); err == nil {
			ev.At = t.UTC()
			break
		}
	}
	ev.Kind = elasticEmailKinds.of(strings.ToLower(status))
	if ev.Kind == events.EventBounced {
		ev.ProviderEvent = status + "/" + category
		if category == "ManualCancel" {
			ev.Kind = events.EventDropped
		} else {
			ev.Permanent = elasticEmailHard[category]
		}
	}
	return ev
}
