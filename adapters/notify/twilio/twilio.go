// Package twilio is the "twilio" alert channel type: alerts go as SMS
// through Twilio's Messages API, POST
// {api}/2010-04-01/Accounts/{AccountSid}/Messages.json with the form
// fields To, From and Body and HTTP basic auth AccountSid:AuthToken.
// Twilio answers 201 with the message resource ({"sid":"SM...",
// "status":"queued",...}) or an error {"code":n,"message":"...",
// "more_info":"...","status":s}: 429 and 5xx are temporary (a Retry-After
// header kept, see notify.RetryAfter), anything else permanent.
//
// The API base is the operator's (core.NotifierEnv.TwilioAPI, from
// MAILSVC_TWILIO_API_URL: a proxy or a test fake), reached through the
// host's guarded client like every other alert URL, so a private address
// needs MAILSVC_ALLOW_PRIVATE_WEBHOOKS. The auth token never appears in an
// error.
//
// An SMS is short: Body keeps the alert to two concatenated segments (306
// GSM-7 characters, or 134 when the text needs UCS-2).
package twilio

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/mailsvc/mailsvc/adapters/notify"
	"github.com/mailsvc/mailsvc/core"
)

// Slug is the channel type's slug.
const Slug = "twilio"

// Settings keys.
const (
	KeyAccountSID = "account_sid"
	KeyAuthToken  = "auth_token"
	KeyFrom       = "from"
	KeyTo         = "to"
)

// DefaultAPI is the Twilio REST API base URL.
const DefaultAPI = "https://api.twilio.com"

var (
	sidPattern   = regexp.MustCompile(`^AC[0-9a-fA-F]{32}$`)
	tokenPattern = regexp.MustCompile(`^[A-Za-z0-9]{16,128}$`)
	// phonePattern is an E.164 number: +, a country code, at most 15 digits.
	phonePattern = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)
	// senderPattern is an alphanumeric sender ID: 1 to 11 letters, digits
	// and spaces with at least one letter.
	senderPattern = regexp.MustCompile(`^[A-Za-z0-9 ]{1,11}$`)
)

func init() { core.RegisterChannelType(Type()) }

// Type returns the channel type as it is registered.
func Type() core.ChannelType {
	return core.ChannelType{
		Slug: Slug,
		Name: "SMS (Twilio)",
		Fields: []core.Field{
			{Key: KeyAccountSID, Label: "Account SID", Type: core.FieldString, Required: true,
				Help: "From the Twilio console: AC followed by 32 hexadecimal digits."},
			{Key: KeyAuthToken, Label: "Auth token", Type: core.FieldPassword, Required: true, Sensitive: true,
				Help: "The account's auth token (Twilio console, Account info)."},
			{Key: KeyFrom, Label: "From", Type: core.FieldString, Required: true,
				Help: "A Twilio phone number of the account in E.164 form (+15551234567), or an alphanumeric sender ID where the destination country allows one."},
			{Key: KeyTo, Label: "To", Type: core.FieldString, Required: true,
				Help: "The phone number that receives the alerts, in E.164 form (+447700900123)."},
		},
		Validate: validate,
		New:      New,
	}
}

func validate(s core.Settings) map[string]string {
	fields := notify.ValidatePatterns(s,
		notify.PatternRule{Key: KeyAccountSID, Pattern: sidPattern, Message: "Must be an account SID: AC followed by 32 hexadecimal digits."},
		notify.PatternRule{Key: KeyAuthToken, Pattern: tokenPattern,
			Message: "Must be the account's auth token: 16 to 128 letters and digits, no spaces (Twilio's console shows 32)."},
		notify.PatternRule{Key: KeyTo, Pattern: phonePattern,
			Message: "Must be a phone number in E.164 form: +, the country code, then the number (+447700900123)."})
	if from := strings.TrimSpace(s.String(KeyFrom)); !phonePattern.MatchString(from) && !validSender(from) {
		fields[KeyFrom] = "Must be a phone number in E.164 form (+15551234567) or an alphanumeric sender ID (1 to 11 letters, digits and spaces, at least one letter)."
	}
	return fields
}

// validSender reports whether s is an alphanumeric sender ID.
func validSender(s string) bool {
	return senderPattern.MatchString(s) && strings.IndexFunc(s, func(r rune) bool {
		return (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z')
	}) >= 0
}

// Notifier sends alerts as SMS to one number through one Twilio account.
type Notifier struct {
	api    string
	sid    string
	token  string
	from   string
	to     string
	client *http.Client
}

// New returns the Notifier of a Twilio channel.
func New(ch *core.NotificationChannel, env core.NotifierEnv) (core.Notifier, error) {
	n := &Notifier{
		api:    APIBase(env.TwilioAPI),
		sid:    strings.TrimSpace(ch.Settings.String(KeyAccountSID)),
		token:  strings.TrimSpace(ch.Settings.String(KeyAuthToken)),
		from:   strings.TrimSpace(ch.Settings.String(KeyFrom)),
		to:     strings.TrimSpace(ch.Settings.String(KeyTo)),
		client: notify.Client(env),
	}
	if n.sid == "" || n.token == "" || n.from == "" || n.to == "" {
		return nil, core.Invalid(map[string]string{KeyAuthToken: "An account SID, an auth token, a sender and a recipient are required."})
	}
	return n, nil
}

// APIBase returns base without trailing slashes, or DefaultAPI when empty.
func APIBase(base string) string {
	if base = strings.TrimRight(strings.TrimSpace(base), "/"); base != "" {
		return base
	}
	return DefaultAPI
}

// MessagesURL returns the Messages resource of account sid under api.
func MessagesURL(api, sid string) string {
	return APIBase(api) + "/2010-04-01/Accounts/" + url.PathEscape(sid) + "/Messages.json"
}

// Form returns the form of the Messages API request sending a.
func Form(from, to string, a core.Alert) url.Values {
	return url.Values{"To": {to}, "From": {from}, "Body": {Body(a)}}
}

// Notify sends a as an SMS and returns Twilio's answer in words.
func (n *Notifier) Notify(ctx context.Context, a core.Alert) (string, error) {
	header := http.Header{
		"Content-Type":  {"application/x-www-form-urlencoded"},
		"Accept":        {"application/json"},
		"Authorization": {"Basic " + base64.StdEncoding.EncodeToString([]byte(n.sid+":"+n.token))},
	}
	const label = "Twilio Messages API"
	resp, err := notify.Post(ctx, n.client, label, MessagesURL(n.api, n.sid), []byte(Form(n.from, n.to, a).Encode()), header)
	if err != nil {
		if resp != nil {
			err = classify(label, resp, err)
		}
		return "", notify.Scrub(err, n.token)
	}
	var msg struct {
		SID    string `json:"sid"`
		Status string `json:"status"`
	}
	if json.Unmarshal(resp.Body, &msg) != nil || msg.SID == "" {
		return "Twilio accepted the message.", nil
	}
	return fmt.Sprintf("Twilio accepted the message (sid %s, status %s).", msg.SID, msg.Status), nil
}

// apiError is Twilio's error body.
type apiError struct {
	Code     int    `json:"code"`
	Message  string `json:"message"`
	MoreInfo string `json:"more_info"`
}

// classify rewords a non-2xx answer with Twilio's error code and message,
// keeping the class (and any Retry-After) notify.StatusError gave it.
func classify(label string, resp *notify.Response, err error) error {
	var e apiError
	if json.Unmarshal(resp.Body, &e) != nil || e.Message == "" {
		return err
	}
	summary := fmt.Sprintf("error %d: %s", e.Code, e.Message)
	if e.MoreInfo != "" {
		summary += " (" + e.MoreInfo + ")"
	}
	return notify.StatusError(label, resp.Status, resp.Header, summary)
}
