// Package webhooks is the Pro provider webhook receiver: POST
// /pro/webhooks/{provider} for sendgrid, mailgun, postmark, ses (SNS),
// brevo, sparkpost, mailjet, resend, mailersend, mandrill and
// elasticemail (whose notifications come as GET).
// Every call is verified against a secret kept in the settings of the
// provider's connections before any log row is read or written; a
// verified event moves the log with its provider message id (see
// TransitionOf), is appended to the log's events, puts hard-bounced and
// complaining addresses on the suppression list and fires
// mail_svc_pro_webhook_received.
package webhooks

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/mailsvc/mailsvc/app/pro/events"
	"github.com/mailsvc/mailsvc/core"
)

// Providers the receiver knows (their driver slugs).
const (
	ProviderSendGrid   = "sendgrid"
	ProviderMailgun    = "mailgun"
	ProviderPostmark   = "postmark"
	ProviderSES        = "ses"
	ProviderBrevo      = "brevo"
	ProviderSparkPost  = "sparkpost"
	ProviderMailjet    = "mailjet"
	ProviderResend     = "resend"
	ProviderMailerSend = "mailersend"
	// ProviderMandrill is Mailchimp Transactional (Mandrill).
	ProviderMandrill = "mandrill"
	// ProviderElasticEmail sends its notifications as GET requests.
	ProviderElasticEmail = "elasticemail"
)

// Connection settings keys holding the webhook secrets.
const (
	KeySendGridPublicKey = "webhook_public_key"  // base64 DER (SubjectPublicKeyInfo) of SendGrid's ECDSA key
	KeyMailgunSigningKey = "webhook_signing_key" // Mailgun's HTTP webhook signing key
	KeyPostmarkUsername  = "webhook_username"    // optional HTTP Basic user name
	KeyPostmarkPassword  = "webhook_password"    // HTTP Basic password
	KeySESTopicARNs      = "webhook_topic_arns"  // SNS topic ARNs trusted, comma-separated
	KeyBrevoToken        = "webhook_token"       // the bearer token of Brevo's webhook authentication
	KeyWebhookUsername   = "webhook_username"    // optional HTTP Basic user name (SparkPost, Mailjet)
	KeyWebhookPassword   = "webhook_password"    // HTTP Basic password (SparkPost, Mailjet)
	KeyWebhookSecret     = "webhook_secret"      // signing secret (Resend's whsec_..., MailerSend's)
	KeyMandrillKey       = "webhook_key"         // the key Mandrill shows for the webhook
	KeyMandrillURL       = "webhook_url"         // the webhook URL exactly as entered in Mandrill
	KeyElasticEmailToken = "webhook_token"       // the token of the notification URL's ?token=
)

// secretKeys names, for each provider, the settings key whose presence
// makes a connection's secrets worth trying.
var secretKeys = map[string]string{
	ProviderSendGrid: KeySendGridPublicKey, ProviderMailgun: KeyMailgunSigningKey,
	ProviderPostmark: KeyPostmarkPassword, ProviderSES: KeySESTopicARNs,
	ProviderBrevo: KeyBrevoToken, ProviderSparkPost: KeyWebhookPassword, ProviderMailjet: KeyWebhookPassword,
	ProviderResend: KeyWebhookSecret, ProviderMailerSend: KeyWebhookSecret,
	ProviderMandrill: KeyMandrillKey, ProviderElasticEmail: KeyElasticEmailToken,
}

// verifier checks a call of one provider against the secrets of its
// connections and reads its events.
type verifier func(req Request, secrets []core.Settings, now time.Time) (*batch, error)

// verifiers are the verifiers of every provider but SES, whose SNS
// messages Service.receiveSNS reads.
var verifiers = map[string]verifier{
	ProviderSendGrid: verifySendGrid, ProviderMailgun: verifyMailgun, ProviderResend: verifyResend,
	ProviderPostmark: untimed(verifyPostmark), ProviderBrevo: untimed(verifyBrevo), ProviderSparkPost: untimed(verifySparkPost),
	ProviderMailjet: untimed(verifyMailjet), ProviderMailerSend: untimed(verifyMailerSend),
	ProviderMandrill: untimed(verifyMandrill), ProviderElasticEmail: untimed(verifyElasticEmail),
}

// untimed is the verifier of a provider that sends no timestamp to check.
func untimed(verify func(Request, []core.Settings) (*batch, error)) verifier {
	return func(req Request, secrets []core.Settings, _ time.Time) (*batch, error) { return verify(req, secrets) }
}

// Limits of the receiver.
const (
	// MaxBody is the largest request body accepted.
	MaxBody = 1 << 20
	// Window is how far a signed timestamp may be from now.
	Window = 5 * time.Minute
	// ReplayMemory is how long seen request and event ids are kept.
	ReplayMemory = 24 * time.Hour
)

// Request is one call of the receiver: its method (POST when empty),
// URL query, headers and raw body (at most MaxBody bytes).
type Request struct {
	Method string
	Query  url.Values
	Header http.Header
	Body   []byte
}

// Result is the receiver's answer to a verified call.
type Result struct {
	Provider string `json:"provider"`
	// Received counts the events in the call; Matched those whose log
	// was found, Unknown those whose provider message id no log carries,
	// Duplicates those seen before (skipped).
	Received   int `json:"received"`
	Matched    int `json:"matched"`
	Unknown    int `json:"unknown"`
	Duplicates int `json:"duplicates"`
	// Suppressed counts addresses newly put on the suppression list.
	Suppressed int `json:"suppressed"`
	// SubscriptionConfirmed is set when an SNS subscription was
	// confirmed.
	SubscriptionConfirmed bool `json:"subscription_confirmed,omitempty"`
}

// Connections lists connections and reads their secrets
// (app.Connections).
type Connections interface {
	List(ctx context.Context, offset, limit int) ([]*core.Connection, int, error)
	Effective(ctx context.Context, id int64) (*core.Connection, error)
}

// Store is what the receiver reads and writes (adapters/store.DB).
type Store interface {
	// RememberWebhookEvent records a request or event id until expires
	// and reports whether it is new (false: a replay).
	RememberWebhookEvent(ctx context.Context, provider, id string, expires time.Time) (bool, error)
	// FindLogIDsByProviderMessageIDs maps provider message ids to logs.
	FindLogIDsByProviderMessageIDs(ctx context.Context, ids []string) (map[string]int64, error)
	// RecordLogEvent appends ev to its log's events and moves a delivered
	// or failed log to status ("" leaves it).
	RecordLogEvent(ctx context.Context, ev *events.LogEvent, status, lastError string) (bool, error)
}

// Suppressor puts addresses on the suppression list
// (app/pro/suppression.Service).
type Suppressor interface {
	AddFromEvent(ctx context.Context, emails []string, reason, source string) (int, error)
}

// Service receives provider webhooks.
type Service struct {
	Connections  Connections
	Store        Store
	Suppressions Suppressor
	// SNS verifies and confirms SES's SNS messages; nil refuses every
	// ses call with 401.
	SNS   *SNSVerifier
	Hooks *core.Hooks
	// HostHooks, when set, carries mail_svc_pro_webhook_received and
	// mail_svc_pro_webhook_ses to the host's hooks (WordPress) while it
	// listens to them.
	HostHooks core.HostHooks
	Logger    *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (s *Service) now() time.Time { return core.NowFrom(s.Now) }

func (s *Service) logger() *slog.Logger { return core.LoggerOr(s.Logger) }

// unauthorized is the 401 of an unverified call. Its message never says
// which check failed beyond what the caller already knows.
func unauthorized(msg string) error { return core.Errorf(core.EUNAUTHORIZED, "%s", msg) }

// batch is what a provider's verifier hands back: the verified events
// and the id that marks the whole call as seen.
type batch struct {
	events []Event
	// requestID identifies the call for replay refusal; "" when only
	// per-event ids apply.
	requestID string
	// confirmed is set when an SNS subscription was confirmed.
	confirmed bool
	// hostHooks are recorded once the call is known not to be a replay.
	hostHooks []core.HostHook
}

// Receive verifies and applies one call. Errors: ENOTFOUND for an
// unknown provider; EUNAUTHORIZED (401) when no connection of the
// provider has a webhook secret, or the signature, credentials or
// timestamp do not verify; EBADREQUEST for a malformed body; ECONFLICT
// for a call already received (a replay). Nothing is read from or
// written to the logs before the call verifies.
func (s *Service) Receive(ctx context.Context, provider string, req Request) (*Result, error) {
	if _, ok := secretKeys[provider]; !ok {
		return nil, core.Errorf(core.ENOTFOUND, "Unknown webhook provider %q.", provider)
	}
	if req.Method != "" && req.Method != http.MethodPost && provider != ProviderElasticEmail {
		return nil, core.Errorf(core.ENOTFOUND, "The %s webhook is called with POST.", provider)
	}
	if len(req.Body) > MaxBody {
		return nil, core.Errorf(core.EBADREQUEST, "The request body is larger than %d bytes.", MaxBody)
	}
	secrets, err := s.secrets(ctx, provider)
	if err != nil {
		return nil, err
	}
	if len(secrets) == 0 {
		return nil, unauthorized("No " + provider + " connection has a webhook secret configured.")
	}
	now := s.now()
	var b *batch
	if provider == ProviderSES {
		b, err = s.receiveSNS(ctx, req, secrets, now)
	} else {
		b, err = verifiers[provider](req, secrets, now)
	}
	if err != nil {
		return nil, err
	}
	if b.requestID != "" {
		fresh, err := s.Store.RememberWebhookEvent(ctx, provider, "req:"+hashID(b.requestID), now.Add(ReplayMemory))
		if err != nil {
			return nil, err
		}
		if !fresh {
			return nil, core.Errorf(core.ECONFLICT, "This webhook call was already received.")
		}
	}
	if len(b.hostHooks) > 0 {
		if err := s.HostHooks.Record(ctx, b.hostHooks); err != nil {
			return nil, err
		}
	}
	res := &Result{Provider: provider, Received: len(b.events), SubscriptionConfirmed: b.confirmed}
	if err := s.apply(ctx, provider, b.events, now, res); err != nil {
		return nil, err
	}
	if res.Unknown > 0 {
		s.logger().Info("webhook events for unknown messages", "provider", provider, "unknown", res.Unknown, "matched", res.Matched)
	}
	return res, nil
}

// secrets returns the settings (secrets decrypted) of every connection of
// the provider's driver that holds its webhook secret.
func (s *Service) secrets(ctx context.Context, provider string) ([]core.Settings, error) {
	conns, _, err := s.Connections.List(ctx, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("read webhook secrets: %w", err)
	}
	key := secretKeys[provider]
	var out []core.Settings
	for _, c := range conns {
		if c.Driver != provider || c.Settings.String(key) == "" {
			continue
		}
		eff, err := s.Connections.Effective(ctx, c.ID)
		if err != nil {
			return nil, fmt.Errorf("read webhook secrets: %w", err)
		}
		if eff.Settings.String(key) != "" {
			out = append(out, eff.Settings)
		}
	}
	return out, nil
}

// apply moves the logs of verified events, records the events, lists
// suppressed addresses and fires mail_svc_pro_webhook_received.
func (s *Service) apply(ctx context.Context, provider string, evs []Event, now time.Time, res *Result) error {
	ids := make([]string, 0, len(evs))
	for _, ev := range evs {
		for _, id := range []string{ev.MessageID, ev.HeaderMessageID} {
			if id != "" {
				ids = append(ids, id)
			}
		}
	}
	logs, err := s.Store.FindLogIDsByProviderMessageIDs(ctx, ids)
	if err != nil {
		return err
	}
	toHost := s.HostHooks != nil && s.HostHooks.Listens(ctx, core.HookWebhookReceived)
	for _, ev := range evs {
		if ev.ID != "" {
			fresh, err := s.Store.RememberWebhookEvent(ctx, provider, "ev:"+hashID(ev.ID), now.Add(ReplayMemory))
			if err != nil {
				return err
			}
			if !fresh {
				res.Duplicates++
				continue
			}
		}
		if ev.At.IsZero() {
			ev.At = now
		}
		tr := TransitionOf(ev)
		logID := logs[ev.MessageID]
		if logID == 0 && ev.HeaderMessageID != "" {
			logID = logs[ev.HeaderMessageID]
		}
		if logID == 0 {
			res.Unknown++
		} else {
			le := &events.LogEvent{LogID: logID, Provider: provider, Event: ev.Kind, At: ev.At, Detail: ev.detail()}
			if toHost {
				le.HostHooks = []core.HostHook{ev.hostHook(logID)}
			}
			if _, err := s.Store.RecordLogEvent(ctx, le, tr.Status, tr.LastError); err != nil {
				if core.ErrorCode(err) != core.ENOTFOUND {
					return err
				}
				// The log was deleted between the lookup and the write.
				res.Unknown++
				logID = 0
			} else {
				res.Matched++
			}
		}
		if tr.Suppress != "" && ev.Recipient != "" && s.Suppressions != nil {
			n, err := s.Suppressions.AddFromEvent(ctx, []string{ev.Recipient}, tr.Suppress, truncate(provider+":"+ev.ProviderEvent+":"+ev.Reason, 255))
			if err != nil {
				return err
			}
			res.Suppressed += n
		}
		if toHost && logID == 0 {
			// No log changed: the event is recorded on its own.
			if err := s.HostHooks.Record(ctx, []core.HostHook{ev.hostHook(0)}); err != nil {
				return err
			}
		}
		s.Hooks.DoAction(core.HookWebhookReceived, provider, ev.payload(logID, tr))
	}
	return nil
}

// basicAuthMatches reports whether the call's HTTP Basic credentials are
// those of one of the connections: its password under passKey and, when
// the connection sets one, its user name under userKey; compared in
// constant time.
func basicAuthMatches(req Request, secrets []core.Settings, userKey, passKey string) bool {
	user, pass, ok := (&http.Request{Header: req.Header}).BasicAuth()
	if !ok {
		return false
	}
	for _, s := range secrets {
		passOK := subtle.ConstantTimeCompare([]byte(pass), []byte(s.String(passKey))) == 1
		userOK := true
		if wantUser := s.String(userKey); wantUser != "" {
			userOK = subtle.ConstantTimeCompare([]byte(user), []byte(wantUser)) == 1
		}
		if passOK && userOK {
			return true
		}
	}
	return false
}

// tokenMatches reports whether token is the one under key of one of the
// connections, compared in constant time.
func tokenMatches(token string, secrets []core.Settings, key string) bool {
	for _, s := range secrets {
		if subtle.ConstantTimeCompare([]byte(token), []byte(s.String(key))) == 1 {
			return true
		}
	}
	return false
}

// bodyID is the replay id of a call whose provider signs nothing and
// sends no timestamp to check: its body's SHA-256, remembered for
// ReplayMemory.
func bodyID(body []byte) string {
	sum := sha256.Sum256(body)
	return "body:" + hex.EncodeToString(sum[:])
}

// jsonObjects reads a body that is one JSON object or an array of them
// (a batch).
func jsonObjects(body []byte) ([]map[string]any, error) {
	var list []map[string]any
	if err := json.Unmarshal(body, &list); err == nil {
		return list, nil
	}
	var one map[string]any
	if err := json.Unmarshal(body, &one); err != nil || one == nil {
		return nil, fmt.Errorf("not a JSON object or array of objects")
	}
	return []map[string]any{one}, nil
}

// jsonEventBatch reads a body that is one JSON event or an array of them
// (jsonObjects), each event by read, as a batch whose replay id is the
// body's hash (bodyID); any other body is a 400 naming provider.
func jsonEventBatch(body []byte, provider string, read func(map[string]any) Event) (*batch, error) {
	list, err := jsonObjects(body)
	if err != nil {
		return nil, core.Errorf(core.EBADREQUEST, "The %s payload must be a JSON event or an array of them.", provider)
	}
	b := &batch{requestID: bodyID(body)}
	for _, e := range list {
		b.events = append(b.events, read(e))
	}
	return b, nil
}

// hashID shortens an id of any length to a fixed-size key.
func hashID(id string) string {
	if len(id) <= 100 {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}
