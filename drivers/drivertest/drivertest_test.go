package drivertest_test

import (
	"reflect"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/drivertest"
)

// Shapes of a fake's own recorded types.
type fakeAddress struct{ Name, Email string }

type fakeAttachment struct {
	Filename, ContentType, PartContentType string
	Data                                   []byte
	Inline                                 bool
	ContentID                              string
}

type fakeMessage struct {
	ID            string
	MessageStream string // not in drivertest.Message
	From          fakeAddress
	To, Cc        []fakeAddress
	Subject, HTML string
	Headers       map[string]string
	Attachments   []fakeAttachment
}

func TestRecorded(t *testing.T) {
	full := fakeMessage{ID: "m1", MessageStream: "outbound", From: fakeAddress{"Shop", "shop@example.com"},
		To: []fakeAddress{{"Ann", "ann@example.org"}, {"", "bob@example.org"}}, Subject: "Hi", HTML: "<p>x</p>",
		Headers:     map[string]string{"X-Order": "42"},
		Attachments: []fakeAttachment{{Filename: "a.pdf", ContentType: "application/pdf", PartContentType: "x/y", Data: []byte{0, 0xff}, Inline: true, ContentID: "c1"}}}
	want := drivertest.Message{ID: "m1", From: core.Address{Name: "Shop", Email: "shop@example.com"},
		To: []core.Address{{Name: "Ann", Email: "ann@example.org"}, {Email: "bob@example.org"}}, Subject: "Hi", HTML: "<p>x</p>",
		Headers:     map[string]string{"X-Order": "42"},
		Attachments: []drivertest.Attachment{{Filename: "a.pdf", ContentType: "application/pdf", Data: []byte{0, 0xff}, Inline: true, ContentID: "c1"}}}
	tests := []struct {
		name string
		in   any
		want []drivertest.Message
	}{
		{"values", []fakeMessage{full}, []drivertest.Message{want}},
		{"pointers", []*fakeMessage{&full, nil}, []drivertest.Message{want, {}}},
		{"fields missing in the fake stay zero", []struct{ ID, Text string }{{"m2", "body"}}, []drivertest.Message{{ID: "m2", Text: "body"}}},
		{"nothing recorded", []fakeMessage(nil), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := drivertest.Recorded(tc.in); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Recorded = %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestFullMessagePayloads(t *testing.T) {
	m := drivertest.FullMessage()
	for _, a := range m.Attachments {
		seen := map[byte]bool{}
		for _, b := range a.Data {
			seen[b] = true
		}
		if len(seen) != 256 {
			t.Errorf("%s holds %d distinct byte values, want all 256", a.Filename, len(seen))
		}
	}
	if len(m.To) == 0 || len(m.Cc) == 0 || len(m.Bcc) == 0 || len(m.ReplyTo) == 0 || m.Text == "" || m.HTML == "" {
		t.Errorf("FullMessage leaves a part empty: %+v", m)
	}
}
