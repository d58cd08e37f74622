package webhooks_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/pro/events"
	"github.com/mailsvc/mailsvc/app/pro/webhooks"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/snsfake"
)

// memHostHooks is core.HostHooks in memory: it listens to the hooks in
// listens and keeps what Record writes.
type memHostHooks struct {
	listens  map[string]bool
	mu       sync.Mutex
	recorded []core.HostHook
}

func (h *memHostHooks) Listens(_ context.Context, name string) bool { return h.listens[name] }

func (h *memHostHooks) Record(_ context.Context, hooks []core.HostHook) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recorded = append(h.recorded, hooks...)
	return nil
}

// TestHostHooks: while the host listens, a matched event's
// mail_svc_pro_webhook_received travels with its log event (one
// transaction), an unmatched one is recorded on its own with log id 0,
// and the SES notification goes to mail_svc_pro_webhook_ses with its
// topic and SNS envelope; a replay records nothing more, and a host that
// does not listen gets nothing.
func TestHostHooks(t *testing.T) {
	now := time.Now()
	s := newSigner(t, now)
	for _, listening := range []bool{true, false} {
		f := newFixture(t, s.conns(), now, &webhooks.SNSVerifier{Client: s.sns.Client()})
		host := &memHostHooks{listens: map[string]bool{core.HookWebhookReceived: listening, core.HookWebhookSES: listening}}
		f.svc.HostHooks = host
		f.store.addLog(7, "sesid")
		ctx := context.Background()
		bounce := s.sns.Notification(s.topic, snsfake.SESBounce("sesid", "gone@example.com", true), now, "2")
		if _, err := f.svc.Receive(ctx, webhooks.ProviderSES, sns(bounce)); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.Receive(ctx, webhooks.ProviderSES, sns(bounce)); codeOf(err) != core.ECONFLICT {
			t.Fatalf("replay: %v", err)
		}
		unknown := s.sns.Notification(s.topic, snsfake.SESDelivery("not-ours", "a@example.com"), now, "2")
		if _, err := f.svc.Receive(ctx, webhooks.ProviderSES, sns(unknown)); err != nil {
			t.Fatal(err)
		}
		if len(f.store.events) != 1 {
			t.Fatalf("log events %+v", f.store.events)
		}
		if !listening {
			if len(host.recorded) != 0 || len(f.store.events[0].HostHooks) != 0 {
				t.Fatalf("a host that does not listen got %+v and %+v", host.recorded, f.store.events[0].HostHooks)
			}
			continue
		}
		withEvent := f.store.events[0].HostHooks
		if len(withEvent) != 1 || withEvent[0].Name != core.HookWebhookReceived {
			t.Fatalf("host hooks with the log event: %+v", withEvent)
		}
		a := withEvent[0].Args
		raw, _ := a[5].(map[string]any)
		if len(a) != 6 || a[0] != "ses" || a[1] != events.EventBounced || a[2] != int64(7) || a[3] != "sesid" || a[4] != "gone@example.com" || raw["notificationType"] != "Bounce" {
			t.Fatalf("mail_svc_pro_webhook_received args %v", a)
		}
		var names []string
		for _, h := range host.recorded {
			names = append(names, h.Name)
		}
		if len(host.recorded) != 3 || host.recorded[0].Name != core.HookWebhookSES || host.recorded[1].Name != core.HookWebhookSES || host.recorded[2].Name != core.HookWebhookReceived {
			t.Fatalf("recorded on their own: %v", names)
		}
		ses := host.recorded[0].Args
		n, _ := ses[0].(map[string]any)
		env, _ := ses[2].(map[string]any)
		if len(ses) != 3 || n["notificationType"] != "Bounce" || ses[1] != s.topic || env["Type"] != "Notification" || env["TopicArn"] != s.topic {
			t.Fatalf("mail_svc_pro_webhook_ses args %v", ses)
		}
		if u := host.recorded[2].Args; u[2] != int64(0) || u[3] != "not-ours" || u[1] != events.EventDelivered {
			t.Fatalf("the unmatched event's args %v", u)
		}
	}
}
