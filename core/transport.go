package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// Transport delivers messages through one configured connection.
//
// Send hands msg to the provider and returns only once the provider has
// accepted it (an SMTP 250 after DATA, a 2xx API response); a nil error
// means accepted, and the Receipt carries the provider's message id when it
// gives one. On failure Send returns an error classified with Temporary or
// Permanent: temporary errors (network errors, timeouts, SMTP 4xx, HTTP 429
// and 5xx) are safe to retry; permanent ones (SMTP 5xx, HTTP 4xx) are not.
// An unclassified error is treated as temporary, so a bug never loses a
// message. A failure after the message left whole but before the
// provider answered (a timeout after the final "." of DATA, an API
// request written with no response) is classified Uncertain: the
// provider may hold the message, and the engine looks it up (Finder, or
// the provider's webhook events) before sending it again. Send honours
// ctx cancellation and must be safe to call from several goroutines.
// Send delivers to msg.EnvelopeRecipients(): the Envelope when the engine
// set one, else To, Cc and Bcc.
//
// Per recipient: a transport whose provider answers per recipient (SMTP's
// RCPT replies) delivers to the recipients it accepts even when others
// are refused or deferred, and then returns a nil error with
// Receipt.Recipients holding the outcome of every recipient. When none
// was accepted it returns the error, and may return Receipt.Recipients
// beside it (some refused for good, others deferred). Receipt.Recipients
// is nil when every recipient was accepted in one go.
//
// Send is not idempotent: a retry after a lost acceptance may deliver
// twice; the engine resends an uncertain attempt with the same
// Message-ID header, so that providers and receivers that drop repeated
// Message-IDs keep one copy.
type Transport interface {
	Send(ctx context.Context, msg *Message) (Receipt, error)
}

// Verifier is implemented by transports that can prove their credentials
// without sending a message (an SMTP AUTH, an authenticated API read).
// Verify returns nil when the credentials are accepted, a Permanent error
// when the provider rejects them, and a Temporary error when the provider
// could not be reached.
type Verifier interface {
	Verify(ctx context.Context) error
}

// Finder is implemented by transports whose provider can say whether it
// accepted a message, found by its Message-ID header (Mailgun's events,
// Postmark's outbound message search). The engine calls Find before it
// resends a message whose last attempt was Uncertain. Find returns the
// provider's receipt and true when the provider holds the message, false
// when it does not (yet) know it, and an error when the lookup itself
// failed (the caller then treats the message as not found). Find sends
// nothing and is safe to call from several goroutines.
type Finder interface {
	Find(ctx context.Context, msg *Message) (Receipt, bool, error)
}

// Receipt is the provider's acceptance of one message.
type Receipt struct {
	// MessageID is the provider's id for the message, if it returned one.
	MessageID string `json:"message_id,omitempty"`
	// Response is the provider's status line or body summary.
	Response string `json:"response,omitempty"`
	// Recipients holds the outcome of each recipient when they were not
	// all accepted in one go (see Transport); nil otherwise.
	Recipients RecipientOutcomes `json:"recipients,omitempty"`
}

// DriverEnv carries what a driver may use from its host when building a
// transport. Zero values are valid: a nil HTTPClient means
// http.DefaultClient, a nil Logger means slog.Default().
type DriverEnv struct {
	HTTPClient *http.Client
	Logger     *slog.Logger
	// Transcript, when set, receives the SMTP conversation of each session
	// (for the stored debug transcripts); drivers that speak SMTP write to it.
	Transcript TranscriptSink
	// Tokens gives OAuth drivers their connection's access token; nil
	// where no OAuth service runs.
	Tokens TokenSource
}

// TranscriptSink stores an SMTP session transcript for a connection.
type TranscriptSink interface {
	SaveTranscript(connectionID int64, transcript string)
}

// Transcript is one stored SMTP session transcript, credentials masked.
type Transcript struct {
	ID           string    `json:"id"`
	ConnectionID int64     `json:"connection_id"`
	CreatedAt    time.Time `json:"created_at"`
	Size         int       `json:"size"`
	Transcript   string    `json:"transcript"`
}

// DeliveryError classifies a transport failure as temporary or permanent.
type DeliveryError struct {
	Temporary bool
	Err       error
}

// Error implements the error interface.
func (e *DeliveryError) Error() string {
	kind := "permanent"
	if e.Temporary {
		kind = "temporary"
	}
	return fmt.Sprintf("%s failure: %v", kind, e.Err)
}

// Unwrap returns the underlying error.
func (e *DeliveryError) Unwrap() error { return e.Err }

// Temporary marks err as a failure that is safe to retry.
func Temporary(err error) error {
	if err == nil {
		return nil
	}
	return &DeliveryError{Temporary: true, Err: err}
}

// Permanent marks err as a failure that retrying cannot fix.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &DeliveryError{Temporary: false, Err: err}
}

// ErrUncertain is in the chain of every error classified Uncertain.
var ErrUncertain = errors.New("uncertain outcome: the message left whole and no answer came, the provider may have accepted it")

// Uncertain marks err as a failure after which the provider may hold the
// message: the request or the message data was sent whole and the
// answer never came (a timeout, a connection reset or closed after the
// final "." of DATA, an API request written with no response). It is
// temporary as well (IsTemporary), for callers that know no better; the
// delivery engine records the attempt as OutcomeUncertain and looks the
// message up before any resend. A failure before anything was sent (a
// refused connection, a DNS or TLS failure) is Temporary, not Uncertain.
func Uncertain(err error) error {
	if err == nil {
		return nil
	}
	return &DeliveryError{Temporary: true, Err: fmt.Errorf("%w: %w", ErrUncertain, err)}
}

// IsUncertain reports whether err, or an error in its chain, was
// classified Uncertain. Its text counts too: some clients keep only the
// text of the error they wrap (net/http's Client.Timeout does).
func IsUncertain(err error) bool {
	return err != nil && (errors.Is(err, ErrUncertain) || strings.Contains(err.Error(), ErrUncertain.Error()))
}

// IsTemporary reports whether err should be retried. Errors that were not
// classified count as temporary.
func IsTemporary(err error) bool {
	var de *DeliveryError
	if errors.As(err, &de) {
		return de.Temporary
	}
	return err != nil
}

// HTTPStatusError classifies an HTTP response status from a provider API:
// 429 is a rate-limit answer (RateLimited; HTTPResponseError also reads
// its Retry-After), 5xx is temporary, any other status is permanent.
func HTTPStatusError(status int, body string) error {
	err := fmt.Errorf("provider answered HTTP %d: %s", status, body)
	if status == http.StatusTooManyRequests {
		return RateLimited(err, 0)
	}
	if status >= 500 {
		return Temporary(err)
	}
	return Permanent(err)
}
