package webhooks

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/mailsvc/mailsvc/app/pro/events"
	"github.com/mailsvc/mailsvc/core"
)

// MandrillSignatureHeader carries Mandrill's webhook signature.
const MandrillSignatureHeader = "X-Mandrill-Signature"

// SignMandrill returns Mandrill's signature of a webhook call to
// webhookURL (exactly as entered in Mandrill) with the POST parameters
// form: the base64 HMAC-SHA1, under key, of the URL followed by each
// parameter's name and value, sorted by name, with no delimiter.
func SignMandrill(key, webhookURL string, form url.Values) string {
	names := make([]string, 0, len(form))
	for k := range form {
		names = append(names, k)
	}
	sort.Strings(names)
	m := hmac.New(sha1.New, []byte(key))
	m.Write([]byte(webhookURL))
	for _, k := range names {
		for _, v := range form[k] {
			m.Write([]byte(k + v))
		}
	}
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// verifyMandrill checks X-Mandrill-Signature against each connection's
// webhook_key and webhook_url (constant time). Mandrill's signature
// covers no timestamp: the signature (which only the key makes) is the
// call's replay id, and each event is applied once by its id.
func verifyMandrill(req Request, secrets []core.Settings) (*batch, error) {
	sig := req.Header.Get(MandrillSignatureHeader)
	if sig == "" {
		return nil, unauthorized("The Mandrill signature is missing.")
	}
	form, err := url.ParseQuery(string(req.Body))
	if err != nil {
		return nil, unauthorized("The Mandrill signature does not verify.")
	}
	ok := false
	for _, s := range secrets {
		want := SignMandrill(s.String(KeyMandrillKey), s.String(KeyMandrillURL), form)
		if hmac.Equal([]byte(want), []byte(sig)) {
			ok = true
			break
		}
	}
	if !ok {
		return nil, unauthorized("The Mandrill signature does not verify.")
	}
	var list []map[string]any
	if err := json.Unmarshal([]byte(form.Get("mandrill_events")), &list); err != nil {
		return nil, core.Errorf(core.EBADREQUEST, "The Mandrill payload must have mandrill_events, a JSON array.")
	}
	b := &batch{requestID: "sig:" + sig}
	for _, e := range list {
		b.events = append(b.events, mandrillEvent(e))
	}
	return b, nil
}

// mandrillKinds are the kinds of Mandrill's event names.
var mandrillKinds = eventKinds{"send": events.EventDelivered, "deferral": events.EventDeferred,
	"hard_bounce": events.EventBounced, "soft_bounce": events.EventBounced, "spam": events.EventComplained,
	"unsub": events.EventUnsubscribed, "reject": events.EventDropped, "open": events.EventOpened, "click": events.EventClicked}

// mandrillEvent reads one Mandrill event by its name.
func mandrillEvent(e map[string]any) Event {
	msg, _ := e["msg"].(map[string]any)
	name := str(e, "event")
	ev := Event{Provider: ProviderMandrill, Raw: e, ProviderEvent: name, MessageID: str(e, "_id"), At: unixTime(num(e, "ts"))}
	if msg != nil {
		if ev.MessageID == "" {
			ev.MessageID = str(msg, "_id")
		}
		ev.Recipient = cleanAddress(str(msg, "email"))
		ev.Reason = strings.TrimSpace(str(msg, "bounce_description") + " " + str(msg, "diag"))
		if md, ok := msg["metadata"].(map[string]any); ok {
			ev.HeaderMessageID = strings.Trim(str(md, "mailsvc_message_id"), "<> ")
		}
	}
	ev.ID = fmt.Sprintf("%s:%s:%v", ev.MessageID, name, e["ts"])
	ev.Kind = mandrillKinds.of(name)
	ev.Permanent = name == "hard_bounce"
	return ev
}
