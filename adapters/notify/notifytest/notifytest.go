// Package notifytest holds what the tests of the alert channel types that
// post to a URL do alike: a notifier built against a local
// test/fakes/webhooksink through the guarded client that lets loopback
// addresses through, one alert sent and its request read back, and the
// failed answers checked for their classification and for the secret of
// the URL staying out of the error text.
package notifytest

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/notify"
	"github.com/mailsvc/mailsvc/adapters/notify/netguard"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/webhooksink"
)

// Env is the notifier environment of a test: the SSRF-guarded client with
// private addresses allowed, so that a local sink can be reached.
func Env() core.NotifierEnv {
	return core.NotifierEnv{HTTPClient: netguard.NewClient(true, 5*time.Second)}
}

// NewWebhook builds, with newNotifier, the notifier of a channel whose
// notify.KeyWebhookURL setting is url, and fails t if that is an error.
func NewWebhook(t testing.TB, newNotifier func(*core.NotificationChannel, core.NotifierEnv) (core.Notifier, error), url string) core.Notifier {
	t.Helper()
	n, err := newNotifier(&core.NotificationChannel{Settings: core.Settings{notify.KeyWebhookURL: url}}, Env())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Start starts a webhook sink, closed when t ends, and builds with
// newNotifier the notifier of a channel whose webhook URL is the sink's
// URL followed by path (a path and query that carry the URL's secret).
func Start(t testing.TB, newNotifier func(*core.NotificationChannel, core.NotifierEnv) (core.Notifier, error), path string) (*webhooksink.Sink, core.Notifier) {
	t.Helper()
	sink := webhooksink.New()
	t.Cleanup(sink.Close)
	return sink, NewWebhook(t, newNotifier, sink.URL+path)
}

// NotifyOnce sends a through n, fails t unless it succeeds with
// wantAnswer, and returns the request sink received.
func NotifyOnce(t testing.TB, n core.Notifier, sink *webhooksink.Sink, a core.Alert, wantAnswer string) webhooksink.Request {
	t.Helper()
	answer, err := n.Notify(context.Background(), a)
	if err != nil || answer != wantAnswer {
		t.Fatalf("Notify = %q, %v", answer, err)
	}
	reqs, err := sink.Await(1, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return reqs[0]
}

// Failure is one failed answer of the service and how it must be taken.
type Failure struct {
	Status int
	// Header holds extra answer headers (a Content-Type, a Retry-After).
	Header http.Header
	// Body is the answer's body; empty: the status text, as
	// webhooksink.FailNext sends it.
	Body string
	// WantTemporary: the error must be temporary (retried).
	WantTemporary bool
	// WantBodyInError: the error text must quote the body.
	WantBodyInError bool
}

// CheckFailures makes sink answer each failure in turn to a sent through
// n, and checks that n returns an error classified as the failure wants,
// without secret (a part of the URL) in its text.
func CheckFailures(t testing.TB, n core.Notifier, sink *webhooksink.Sink, a core.Alert, secret string, failures []Failure) {
	t.Helper()
	for _, f := range failures {
		body := f.Body
		if body == "" {
			body = http.StatusText(f.Status)
		}
		sink.FailNextWith(1, f.Status, f.Header, body)
		_, err := n.Notify(context.Background(), a)
		if err == nil || core.IsTemporary(err) != f.WantTemporary || (f.WantBodyInError && !strings.Contains(err.Error(), body)) {
			t.Errorf("%d %s: err = %v, temporary %v", f.Status, body, err, core.IsTemporary(err))
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("error %q shows the webhook URL", err)
		}
	}
}
