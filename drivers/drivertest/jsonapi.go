package drivertest

import (
	"context"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
)

// RunJSONAPI runs the whole suite (Run) on a driver whose fake is built
// on fakeapi.NewServer (start starts one accepting a key), then the
// limits every such driver keeps (Limits). The suite's own
// RateLimitHonoured checks the 429 of every fake that has RateLimitNext.
func RunJSONAPI(t *testing.T, h Harness, start func(key string) *fakeapi.Server) {
	h.Start = func() Fake {
		f := start(h.Key)
		return NewFake(f, f.URL, f.Messages)
	}
	Run(t, h)
	t.Run("Limits", func(t *testing.T) { Limits(t, h, start) })
}

// Limits checks what a JSON API driver does at the provider's limits and
// with its secret:
//
//   - RecipientCap: a message to more recipients than the driver's
//     RecipientCaps allow is refused whole by the fake (the provider's
//     cap) and goes through in the parts the delivery engine makes.
//   - VerifySendsNothing: the credentials check reaches no send route.
//   - SecretStaysWithItsHost: base_url is a destination that takes the
//     provider's own hosts only, the default among them.
//   - ForceFrom: with force_from off, from_email and from_name name the
//     sender only of a message without one.
func Limits(t *testing.T, h Harness, start func(key string) *fakeapi.Server) {
	d, ok := core.LookupDriver(h.Slug)
	if !ok {
		t.Fatalf("driver %s is not registered", h.Slug)
	}
	t.Run("RecipientCap", func(t *testing.T) {
		limit := d.RecipientCaps.PerMessage
		if limit == 0 {
			limit = d.RecipientCaps.To
		}
		if limit == 0 {
			t.Fatalf("driver %s declares no recipient cap", h.Slug)
		}
		f := start(h.Key)
		defer f.Close()
		n := 2*limit + 1
		parts := SendInParts(t, h.Slug, h.newTransport(t, h.settings(f.URL, h.Key)), n)
		CheckParts(t, parts, Recorded(f.Messages()), 3, n)
	})
	t.Run("VerifySendsNothing", func(t *testing.T) {
		f := start(h.Key)
		defer f.Close()
		if err := h.newTransport(t, h.settings(f.URL, h.Key)).(core.Verifier).Verify(context.Background()); err != nil {
			t.Fatalf("Verify: %v", err)
		}
		if f.SendCalls() != 0 || f.Requests() != 1 {
			t.Errorf("verify made %d requests, %d of them to the send route", f.Requests(), f.SendCalls())
		}
	})
	t.Run("ForceFrom", func(t *testing.T) {
		f := start(h.Key)
		defer f.Close()
		tests := []struct {
			name     string
			force    any
			from     core.Address
			wantFrom core.Address
		}{
			{"on by default", nil, core.Address{Name: "Shop", Email: "shop@example.com"}, core.Address{Name: "Net", Email: "noreply@example.net"}},
			{"off keeps the message's sender", false, core.Address{Name: "Shop", Email: "shop@example.com"}, core.Address{Name: "Shop", Email: "shop@example.com"}},
			{"off names a message without one", false, core.Address{}, core.Address{Name: "Net", Email: "noreply@example.net"}},
		}
		for i, tc := range tests {
			s := h.settings(f.URL, h.Key)
			s["from_email"], s["from_name"] = "noreply@example.net", "Net"
			if tc.force != nil {
				s["force_from"] = tc.force
			}
			msg := h.message()
			msg.From = tc.from
			_, m := SendRecorded(t, h.newTransport(t, s), msg, f.Messages, i+1)
			if got := (core.Address{Name: m.From.Name, Email: m.From.Email}); got != tc.wantFrom {
				t.Errorf("%s: from %+v, want %+v", tc.name, got, tc.wantFrom)
			}
		}
	})
	t.Run("SecretStaysWithItsHost", func(t *testing.T) {
		f := d.Field("base_url")
		if f == nil || !f.Destination || len(f.Hosts) == 0 {
			t.Fatalf("base_url = %+v, want a destination with the provider's hosts", f)
		}
		if msg := core.CheckEndpoint(h.DefaultBaseURL, f.Hosts); msg != "" {
			t.Errorf("the default %s is refused: %s", h.DefaultBaseURL, msg)
		}
		for _, u := range []string{"https://collector.example.net", "http://127.0.0.1:8080"} {
			if core.CheckEndpoint(u, f.Hosts) == "" {
				t.Errorf("base_url takes %s, which is not the provider's", u)
			}
		}
	})
}

// ContentIDName is a Harness.AttachmentName for the providers that name
// an inline image by its Content-ID (and any other attachment by its
// file name).
func ContentIDName(a core.Attachment) string {
	if a.Inline {
		return a.ContentID
	}
	return a.Filename
}

// FirstRecipientID is a Harness.CheckReceipt for the providers that give
// each recipient its own message id (Mandrill, Mailtrap), which their
// fakes make of the message's id and the recipient's place: the receipt
// keeps the first recipient's.
func FirstRecipientID(t *testing.T, rc core.Receipt, m Message) {
	t.Helper()
	if rc.MessageID == "" || !strings.HasPrefix(rc.MessageID, m.ID) || !strings.Contains(rc.Response, rc.MessageID) {
		t.Errorf("receipt %+v: want the first recipient's id of message %s, named in the response", rc, m.ID)
	}
}
