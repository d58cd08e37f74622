package wordpress

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
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
// has callbacks on ("listeners": hook names) and the URL of its hook
// runner endpoint ("runner").
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
	runner    string
}

// Listens implements core.HostHooks from the published option, read at
// most every 30 seconds. When the option cannot be read it answers from
// the last reading (false before any).
func (h *HostHooks) Listens(ctx context.Context, name string) bool {
	listeners, _ := h.read(ctx)
	return listeners[name]
}

// RunnerURL returns the bridge's hook runner endpoint as the bridge
// published it, or "" before the bridge has run.
func (h *HostHooks) RunnerURL(ctx context.Context) string {
	_, runner := h.read(ctx)
	return runner
}

// Record implements core.HostHooks.
func (h *HostHooks) Record(ctx context.Context, hooks []core.HostHook) error {
	return h.Outbox.RecordHostHooks(ctx, hooks)
}

// read returns the published listeners and runner URL, cached.
func (h *HostHooks) read(ctx context.Context) (map[string]bool, string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.readAt.IsZero() && time.Since(h.readAt) < hostHooksTTL {
		return h.listeners, h.runner
	}
	h.readAt = time.Now()
	raw, found, err := h.Options.Option(ctx, HostHooksOption)
	if err != nil {
		h.logger().Warn("read the host hook listeners", "option", HostHooksOption, "err", err)
		return h.listeners, h.runner
	}
	h.listeners, h.runner = map[string]bool{}, ""
	if !found {
		return h.listeners, h.runner
	}
	arr, ok := MaybeUnserialize(raw).(*Array)
	if !ok {
		return h.listeners, h.runner
	}
	if v, ok := arr.Get("runner"); ok {
		h.runner, _ = v.(string)
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
	return h.listeners, h.runner
}

func (h *HostHooks) logger() *slog.Logger {
	if h.Logger != nil {
		return h.Logger
	}
	return slog.Default()
}

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
)

// HookRunKey derives the runner key from wp_salt('auth'): the lowercase
// hex HMAC-SHA256 of "mailsvc-hook-runner" keyed with the salt, as the
// bridge computes it (hash_hmac('sha256', 'mailsvc-hook-runner', wp_salt('auth'))).
func HookRunKey(authSalt string) string {
	m := hmac.New(sha256.New, []byte(authSalt))
	m.Write([]byte(hookRunKeyLabel))
	return hex.EncodeToString(m.Sum(nil))
}

// SignHookRun signs a runner request made at Unix time ts: the lowercase
// hex HMAC-SHA256 of the decimal timestamp keyed with the runner key.
func SignHookRun(key string, ts int64) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(strconv.FormatInt(ts, 10)))
	return hex.EncodeToString(m.Sum(nil))
}

// HookRunner asks the site to run its pending host hooks: Nudge never
// blocks, nudges that arrive while a request is out are coalesced into
// one more request, and at most one request is out at a time. A request
// that fails is not retried: the bridge's WP-cron event runs the hooks
// within a minute anyway.
type HookRunner struct {
	Hooks  *HostHooks
	Salter *Salter
	// URL, when set, is used instead of the runner URL the bridge
	// publishes (MAILSVC_HOOK_RUNNER_URL).
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
		url = r.Hooks.RunnerURL(ctx)
	}
	if url == "" {
		return fmt.Errorf("the bridge has not published its hook runner URL yet")
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
	client := r.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
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

func (r *HookRunner) logger() *slog.Logger {
	if r.Logger != nil {
		return r.Logger
	}
	return slog.Default()
}
