package postmark_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/drivertest"
	"github.com/mailsvc/mailsvc/drivers/postmark"
	"github.com/mailsvc/mailsvc/test/fakes/postmarkfake"
)

const testKey = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"

// startFake starts the Postmark fake as the conformance suite drives it.
func startFake() drivertest.Fake {
	f := postmarkfake.New(testKey)
	return drivertest.NewFake(f, f.URL, f.Messages)
}

// startPostmark starts a Postmark fake of the test's token, closed when
// t ends.
func startPostmark(t *testing.T) *postmarkfake.Server {
	f := postmarkfake.New(testKey)
	t.Cleanup(f.Close)
	return f
}

func TestConformance(t *testing.T) {
	drivertest.Run(t, drivertest.Harness{
		Slug:           postmark.Slug,
		Key:            testKey,
		WrongKey:       "11111111-2222-3333-4444-555555555555",
		Start:          startFake,
		DefaultBaseURL: postmark.DefaultBaseURL,
		APIKeyConstant: "MAILSVC_POSTMARK_API_KEY",
		UnknownKey:     "region",
		Defaulted:      []string{"message_stream"},
		SchemaCases: []drivertest.SchemaCase{
			{Name: "valid stream", Settings: core.Settings{"api_key": "k", "message_stream": "resets_2"}},
			{Name: "bad stream", Settings: core.Settings{"api_key": "k", "message_stream": "bad stream!"}, WantFields: []string{"message_stream"}},
		},
	})
}

func newTransport(t *testing.T, settings core.Settings) core.Transport {
	t.Helper()
	return drivertest.NewTransport(t, postmark.Slug, settings)
}

func TestMessageStream(t *testing.T) {
	fake := startPostmark(t)
	fake.AddStream("password-resets")
	tests := []struct {
		name          string
		stream        any // nil: not set
		wantSent      string
		wantPermanent bool
	}{
		{name: "default outbound", stream: nil, wantSent: "outbound"},
		{name: "empty means outbound", stream: "", wantSent: "outbound"},
		{name: "custom stream", stream: "password-resets", wantSent: "password-resets"},
		{name: "broadcast", stream: "broadcast", wantSent: "broadcast"},
		{name: "unknown stream is rejected", stream: "nope", wantPermanent: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			settings := core.Settings{"api_key": testKey, "base_url": fake.URL}
			if tc.stream != nil {
				settings["message_stream"] = tc.stream
			}
			before := len(fake.Messages())
			_, err := newTransport(t, settings).Send(context.Background(), drivertest.FullMessage())
			if tc.wantPermanent {
				if err == nil || core.IsTemporary(err) || !strings.Contains(err.Error(), "1235") {
					t.Fatalf("err = %v, want a permanent error with Postmark code 1235", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			got := fake.Messages()
			if len(got) != before+1 || got[before].MessageStream != tc.wantSent {
				t.Fatalf("recorded stream %q, want %q", got[len(got)-1].MessageStream, tc.wantSent)
			}
		})
	}
}

func TestRejectedRequestIsPermanent(t *testing.T) {
	fake := startPostmark(t)
	msg := drivertest.FullMessage()
	msg.To = nil
	for i := range postmarkfake.MaxPerField + 1 {
		msg.To = append(msg.To, core.Address{Email: fmt.Sprintf("r%d@example.org", i)})
	}
	_, err := newTransport(t, core.Settings{"api_key": testKey, "base_url": fake.URL}).Send(context.Background(), msg)
	if err == nil || core.IsTemporary(err) || !strings.Contains(err.Error(), "HTTP 422") {
		t.Fatalf("err = %v, want a permanent HTTP 422 error", err)
	}
}

// TestEmptyBodyGoesAsTextBody: a message with neither text nor HTML goes
// with a TextBody of one line break (Postmark requires one of the two).
func TestEmptyBodyGoesAsTextBody(t *testing.T) {
	fake := startPostmark(t)
	msg := drivertest.FullMessage()
	msg.Text, msg.HTML = "", ""
	if _, err := newTransport(t, core.Settings{"api_key": testKey, "base_url": fake.URL}).Send(context.Background(), msg); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if got := fake.Messages(); len(got) != 1 || got[0].Text != "\r\n" || got[0].HTML != "" {
		t.Fatalf("recorded %+v", got)
	}
}

func TestDefaults(t *testing.T) {
	tr := newTransport(t, core.Settings{"api_key": testKey}).(*postmark.Transport)
	if tr.BaseURL() != postmark.DefaultBaseURL || tr.MessageStream() != "outbound" {
		t.Errorf("BaseURL, MessageStream = %q, %q; want %q, outbound", tr.BaseURL(), tr.MessageStream(), postmark.DefaultBaseURL)
	}
}

// TestUncertainSendAndFind: a send whose answer is lost is uncertain,
// and Find (the outbound message search by the Message-ID the message
// carries in its metadata) tells whether Postmark kept it.
func TestUncertainSendAndFind(t *testing.T) {
	long := "<" + strings.Repeat("x", 90) + "@example.com>"
	tests := []struct {
		name          string
		messageID     string
		inject        func(f *postmarkfake.Server)
		wantUncertain bool
		wantFound     bool
	}{
		{name: "taken, answer lost", messageID: "<uncertain.1@example.com>", inject: func(f *postmarkfake.Server) { f.TakeAndDropNext(1) }, wantUncertain: true, wantFound: true},
		{name: "no answer, not taken", messageID: "<uncertain.1@example.com>", inject: func(f *postmarkfake.Server) { f.StallNext(1) }, wantUncertain: true},
		{name: "accepted", messageID: "<uncertain.1@example.com>", inject: func(*postmarkfake.Server) {}, wantFound: true},
		{name: "accepted, a Message-ID longer than Postmark's metadata", messageID: long, inject: func(*postmarkfake.Server) {}, wantFound: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fake := startPostmark(t)
			tr := newTransport(t, core.Settings{"api_key": testKey, "base_url": fake.URL})
			msg := drivertest.FullMessage().WithMessageID(tc.messageID)
			tc.inject(fake)
			rc, found := drivertest.SendThenFind(t, tr, msg, tc.wantUncertain)
			if found != tc.wantFound {
				t.Fatalf("Find = %+v, %v; want found %v", rc, found, tc.wantFound)
			}
			if found && (len(fake.Messages()) != 1 || rc.MessageID != fake.Messages()[0].ID) {
				t.Errorf("Find receipt %+v, want Postmark's MessageID of the message kept", rc)
			}
			for _, m := range fake.Messages() {
				if v := m.Metadata[postmark.MetadataKey]; v == "" || len(v) > 80 {
					t.Errorf("metadata %s = %q, want the Message-ID in at most 80 characters", postmark.MetadataKey, v)
				}
			}
		})
	}
	t.Run("another message is not found", func(t *testing.T) {
		fake := startPostmark(t)
		tr := newTransport(t, core.Settings{"api_key": testKey, "base_url": fake.URL})
		if _, err := tr.Send(context.Background(), drivertest.FullMessage().WithMessageID("<a@example.com>")); err != nil {
			t.Fatal(err)
		}
		if _, found, err := tr.(core.Finder).Find(context.Background(), drivertest.FullMessage().WithMessageID("<b@example.com>")); err != nil || found {
			t.Errorf("Find = %v, %v; want not found", found, err)
		}
	})
}
