package alerts_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mailsvc/mailsvc/app/alerts"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/core"
)

// The "test-recorder" channel type hands every alert to the recorder named
// by its sink setting. "test-room" is a second type with other settings.
func init() {
	core.RegisterChannelType(core.ChannelType{
		Slug: "test-recorder", Name: "Recorder",
		Fields: []core.Field{
			{Key: "sink", Type: core.FieldString, Required: true},
			{Key: "token", Type: core.FieldPassword},
			{Key: "hook_url", Type: core.FieldURL, Sensitive: true},
			{Key: "connection_id", Type: core.FieldInteger},
		},
		New: func(ch *core.NotificationChannel, env core.NotifierEnv) (core.Notifier, error) {
			r, ok := recorders.Load(ch.Settings.String("sink"))
			if !ok {
				return nil, errors.New("no such sink")
			}
			return r.(*recorder), nil
		},
	})
	core.RegisterChannelType(core.ChannelType{
		Slug: "test-room", Name: "Room",
		Fields: []core.Field{{Key: "room", Type: core.FieldString, Required: true}},
		New: func(*core.NotificationChannel, core.NotifierEnv) (core.Notifier, error) {
			return nil, errors.New("unused")
		},
	})
}

var (
	recorders sync.Map
	sinkSeq   atomic.Int64
)

// recorder is a Notifier that records what it is sent. Each attempt takes
// the next error of script (nil: success); hang makes attempts wait for
// their context.
type recorder struct {
	name     string
	mu       sync.Mutex
	alerts   []core.Alert
	attempts int
	script   []error
	hang     bool
	answer   string
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{name: fmt.Sprintf("sink-%d", sinkSeq.Add(1)), answer: "ok from recorder"}
	recorders.Store(r.name, r)
	t.Cleanup(func() { recorders.Delete(r.name) })
	return r
}

func (r *recorder) Notify(ctx context.Context, a core.Alert) (string, error) {
	r.mu.Lock()
	r.attempts++
	var err error
	if len(r.script) > 0 {
		err, r.script = r.script[0], r.script[1:]
	}
	hang := r.hang
	r.mu.Unlock()
	if hang {
		<-ctx.Done()
		return "", core.Temporary(ctx.Err())
	}
	if err != nil {
		return "", err
	}
	r.mu.Lock()
	r.alerts = append(r.alerts, a)
	r.mu.Unlock()
	return r.answer, nil
}

func (r *recorder) got() ([]core.Alert, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]core.Alert(nil), r.alerts...), r.attempts
}

// events returns the events received, in order, without the sentinels
// (negative connection ids) that tests raise to settle a dispatcher.
func (r *recorder) events() []string {
	a, _ := r.got()
	out := []string{}
	for _, x := range a {
		if x.ConnectionID >= 0 {
			out = append(out, fmt.Sprintf("%s:%d", x.Event, x.ConnectionID))
		}
	}
	return out
}

// guard is a test URL guard: http(s) to a public address only.
func guard(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("%s is not an http(s) URL", raw)
	}
	host := u.Hostname()
	if host == "localhost" {
		return fmt.Errorf("%s is loopback", raw)
	}
	if ip := net.ParseIP(host); ip != nil && (ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast()) {
		return fmt.Errorf("%s is private", raw)
	}
	return nil
}

// syncBuffer is a log sink safe for the dispatcher's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type fixture struct {
	store    *apptest.NotificationStore
	channels *alerts.Channels
	log      *syncBuffer
}

func newFixture() *fixture {
	log := &syncBuffer{}
	store := apptest.NewNotificationStore()
	return &fixture{
		store: store,
		log:   log,
		channels: &alerts.Channels{
			Store: store, Cipher: apptest.Cipher{Key: "k"}, CheckURL: guard,
			Logger: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		},
	}
}

func ptr[T any](v T) *T { return &v }

// add creates an active recorder channel for events.
func (f *fixture) add(t *testing.T, r *recorder, events []string, extra core.Settings) *core.NotificationChannel {
	t.Helper()
	s := core.Settings{"sink": r.name}
	for k, v := range extra {
		s[k] = v
	}
	c, err := f.channels.Create(context.Background(), alerts.ChannelInput{
		Name: ptr("rec " + r.name), Type: ptr("test-recorder"), Events: &events, Settings: s,
	})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return c
}
