package wordpress

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// HostHooksOption is the option in which the bridge publishes, on each
// page load when it changes, which of the service's host hooks the site
// has callbacks on ("listeners": hook names). The runner's address is
// never read from it (a page load can be made with any Host header): it
// is the site's stored home address (HookRunner).
const HostHooksOption = "mailsvc_host_hooks"

// hostHooksTTL is how long HostHooks trusts the option it read: a callback
// added in PHP is honoured within this time of the next page load.
const hostHooksTTL = 30 * time.Second

// HostHookOutbox writes host hook events (adapters/store.DB).
type HostHookOutbox interface {
	RecordHostHooks(ctx context.Context, hooks []core.HostHook) error
}

// HostHooks is core.HostHooks beside a WordPress site: it reads the
// listeners the bridge publishes (HostHooksOption) and writes events to
// the outbox the bridge drains.
type HostHooks struct {
	Options OptionReader
	Outbox  HostHookOutbox
	Logger  *slog.Logger

	mu        sync.Mutex
	readAt    time.Time
	listeners map[string]bool
}

// Listens implements core.HostHooks from the published option, read at
// most every 30 seconds. When the option cannot be read it answers from
// the last reading (false before any).
func (h *HostHooks) Listens(ctx context.Context, name string) bool {
	return h.read(ctx)[name]
}

// Record implements core.HostHooks.
func (h *HostHooks) Record(ctx context.Context, hooks []core.HostHook) error {
	return h.Outbox.RecordHostHooks(ctx, hooks)
}

// read returns the published listeners, cached.
func (h *HostHooks) read(ctx context.Context) map[string]bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.readAt.IsZero() && time.Since(h.readAt) < hostHooksTTL {
		return h.listeners
	}
	h.readAt = time.Now()
	raw, found, err := h.Options.Option(ctx, HostHooksOption)
	if err != nil {
		h.logger().Warn("read the host hook listeners", "option", HostHooksOption, "err", err)
		return h.listeners
	}
	h.listeners = map[string]bool{}
	if !found {
		return h.listeners
	}
	arr, ok := MaybeUnserialize(raw).(*Array)
	if !ok {
		return h.listeners
	}
	if v, ok := arr.Get("listeners"); ok {
		if list, ok := v.(*Array); ok {
			for i := 0; i < list.Len(); i++ {
				if _, name := list.At(i); name != nil {
					if s, ok := name.(string); ok {
						h.listeners[s] = true
					}
				}
			}
		}
	}
	return h.listeners
}

func (h *HostHooks) logger() *slog.Logger { return core.LoggerOr(h.Logger) }

// Hook runner requests: the service signs a POST to the bridge's runner
// endpoint with a key derived from wp_salt('auth'), over a timestamp, so
// only a holder of the site's salts can make the site run its hooks, and
// a captured request stops working after HookRunWindow.
const (
	// HookRunTimestampHeader carries the request's Unix time in seconds.
	HookRunTimestampHeader = "X-Mailsvc-Timestamp"
	// HookRunSignatureHeader carries SignHookRun's signature.
	HookRunSignatureHeader = "X-Mailsvc-Signature"
	// HookRunWindow is how far a request's timestamp may be from the
	// site's clock.
	HookRunWindow = 60 * time.Second
	// hookRunKeyLabel derives the runner key from the salt.
	hookRunKeyLabel = "mailsvc-hook-runner"
	// hookRoute is the bridge's runner route.
	hookRoute = "mailsvc-bridge/v1/hooks"
)

// HookRunKey derives the runner key from wp_salt('auth'): the lowercase
// hex HMAC-SHA256 of "mailsvc-hook-runner" keyed with the salt, as the
// bridge computes it (hash_hmac('sha256', 'mailsvc-hook-runner', wp_salt('auth'))).
func HookRunKey(authSalt string) string {
	return hmacHex(authSalt, hookRunKeyLabel)
}

// SignHookRun signs a runner request made at Unix time ts: the lowercase
// hex HMAC-SHA256 of the decimal timestamp keyed with the runner key.
func SignHookRun(key string, ts int64) string {
	return hmacHex(key, strconv.FormatInt(ts, 10))
}

// HookRunner asks the site to run its pending host hooks: Nudge never
// blocks, nudges that arrive while a request is out are coalesced into
// one more request, and at most one request is out at a time. A request
// that fails is not retried: the bridge's WP-cron event runs the hooks
// within a minute anyway.
type HookRunner struct {
	// Sites finds the site's stored address; the runner is its
	// mailsvc-bridge/v1/hooks route (RESTURL).
	Sites  SiteAddresses
	Salter *Salter
	// URL, when set, is used instead of the route under the site's
	// address (MAILSVC_HOOK_RUNNER_URL).
	URL    string
	Client *http.Client
	Logger *slog.Logger

	once   sync.Once
	kick   chan struct{}
	failed bool
}

// hookRunTimeout bounds one runner request (the site runs the hooks
// before it answers).
const hookRunTimeout = 30 * time.Second

func (r *HookRunner) init() { r.once.Do(func() { r.kick = make(chan struct{}, 1) }) }

// Nudge asks for a run soon; it never blocks.
func (r *HookRunner) Nudge() {
	r.init()
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Run sends the runner requests the nudges ask for until ctx is done.
func (r *HookRunner) Run(ctx context.Context) {
	r.init()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.kick:
		}
		if err := r.request(ctx); err != nil {
			if !r.failed {
				r.logger().Warn("the site did not run its hooks; WP-cron will", "err", err)
			}
			r.failed = true
		} else {
			r.failed = false
		}
	}
}

// request makes one signed runner request.
func (r *HookRunner) request(ctx context.Context) error {
	url := r.URL
	if url == "" {
		home, err := r.Sites.SiteHome(ctx)
		if err != nil {
			return fmt.Errorf("the site's address: %w", err)
		}
		if home == "" {
			return fmt.Errorf("the site has no address (its home option is empty)")
		}
		url = RESTURL(home, hookRoute)
	}
	salt, err := r.Salter.Salt(ctx, "auth")
	if err != nil {
		return fmt.Errorf("hook runner key: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, hookRunTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(""))
	if err != nil {
		return fmt.Errorf("hook runner request: %w", err)
	}
	ts := time.Now().Unix()
	req.Header.Set(HookRunTimestampHeader, strconv.FormatInt(ts, 10))
	req.Header.Set(HookRunSignatureHeader, SignHookRun(HookRunKey(salt), ts))
	resp, err := noRedirects(r.Client).Do(req)
	if err != nil {
		return fmt.Errorf("hook runner request: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("hook runner request: HTTP %d", resp.StatusCode)
	}
	return nil
}

func (r *HookRunner) logger() *slog.Logger { return core.LoggerOr(r.Logger) }
