package http_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// TestLogResendToOthers covers POST /logs/{id}/resend and POST
// /logs/resend with to, cc and bcc: a new log to the new recipients only,
// pointing to its original (left as it was), its raw header's recipients
// and Message-ID dropped; bad lists are 422 per field; a redacted log
// stays refused with 409.
func TestLogResendToOthers(t *testing.T) {
	f := newDeliveryServer(t)
	ctx := context.Background()
	final := func(m core.Message, body *core.KeptBody) int64 {
		l := &core.Log{Message: m, Source: "wp_mail"}
		if err := f.logs.EnqueueLog(ctx, l); err != nil {
			t.Fatal(err)
		}
		if _, err := f.logs.ClaimLogs(ctx, "w", 1, time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := f.logs.RecordOutcomes(ctx, "w", []core.LogOutcome{{LogID: l.ID, Status: core.StatusDelivered, Body: body}}); err != nil {
			t.Fatal(err)
		}
		return l.ID
	}
	m := core.Message{
		From: core.Address{Email: "shop@example.com"}, To: []core.Address{{Email: "bob@example.com"}},
		Cc: []core.Address{{Email: "boss@example.com"}}, Bcc: []core.Address{{Email: "archive@example.com"}},
		Subject: "Invoice 7", Text: "Your invoice",
		Headers:     []core.Header{{Name: "Message-ID", Value: "<orig@example.com>"}, {Name: "X-Order", Value: "7"}},
		Attachments: []core.Attachment{{Filename: "inv.pdf", ContentType: "application/pdf", Data: []byte("%PDF-7")}},
	}
	orig := final(m, &core.KeptBody{Mode: core.LogBodyFull})
	raw := m
	raw.Headers = nil
	raw.RawHeader = "Received: from x\r\nTo: bob@example.com\r\nCc: boss@example.com\r\nMessage-ID: <raw@example.com>\r\n" +
		"X-Campaign: spring\r\n sale\r\nDKIM-Signature: v=1; d=example.com\r\nSubject: Invoice 7\r\n"
	rawID := final(raw, &core.KeptBody{Mode: core.LogBodyFull})
	redacted := final(m, &core.KeptBody{Mode: core.LogBodyRedacted, Text: "[redacted]", Changed: true, Redacted: 1})
	queued := &core.Log{Message: m}
	if err := f.logs.EnqueueLog(ctx, queued); err != nil {
		t.Fatal(err)
	}

	post := func(path, body string) reply {
		return do(t, f.ts, "POST", ns+path, "admin", strings.NewReader(body))
	}
	id := strconv.FormatInt

	r := post("/logs/"+id(orig, 10)+"/resend", `{"to":["Ann <ann@example.net>"],"cc":["carl@example.net","CARL@example.net"]}`)
	var one struct {
		Resent bool  `json:"resent"`
		ID     int64 `json:"id"`
		NewID  int64 `json:"new_id"`
	}
	r.json(t, &one)
	if r.Status != 200 || !one.Resent || one.ID != orig || one.NewID == 0 || one.NewID == orig {
		t.Fatalf("resend to others: %d %s", r.Status, r.Body)
	}
	nl, err := f.logs.FindLogByID(ctx, one.NewID)
	if err != nil {
		t.Fatal(err)
	}
	if nl.Status != core.StatusQueued || nl.ResentFrom == nil || *nl.ResentFrom != orig {
		t.Fatalf("new log: status %s, resent_from %v", nl.Status, nl.ResentFrom)
	}
	got := nl.Message
	if !slices.Equal(got.To, []core.Address{{Name: "Ann", Email: "ann@example.net"}}) ||
		!slices.Equal(got.Cc, []core.Address{{Email: "carl@example.net"}}) || len(got.Bcc) != 0 {
		t.Fatalf("new recipients: to %v cc %v bcc %v", got.To, got.Cc, got.Bcc)
	}
	if got.MessageID() != "" || !slices.Contains(got.Headers, core.Header{Name: "X-Order", Value: "7"}) ||
		got.Subject != m.Subject || got.Text != m.Text || len(got.Attachments) != 1 || string(got.Attachments[0].Data) != "%PDF-7" {
		t.Fatalf("new message: %+v", got)
	}
	if ol, _ := f.logs.FindLogByID(ctx, orig); ol.Status != core.StatusDelivered || ol.ResentFrom != nil || len(ol.Message.Bcc) != 1 {
		t.Fatalf("the original changed: %+v", ol)
	}
	// GET shows the link.
	r = do(t, f.ts, "GET", ns+"/logs/"+id(one.NewID, 10), "admin", nil)
	if !strings.Contains(string(r.Body), `"resent_from":`+id(orig, 10)) {
		t.Fatalf("GET the new log: %s", r.Body)
	}

	// A raw message: its raw recipients, trace, signature and Message-ID
	// do not follow; its other fields become headers.
	r = post("/logs/"+id(rawID, 10)+"/resend", `{"bcc":["audit@example.net"]}`)
	r.json(t, &one)
	if r.Status != 200 {
		t.Fatalf("resend a raw message: %d %s", r.Status, r.Body)
	}
	nl, _ = f.logs.FindLogByID(ctx, one.NewID)
	if nl.Message.RawHeader != "" || len(nl.Message.To) != 0 || len(nl.Message.Cc) != 0 ||
		!slices.Equal(nl.Message.Bcc, []core.Address{{Email: "audit@example.net"}}) ||
		!slices.Equal(nl.Message.Headers, []core.Header{{Name: "X-Campaign", Value: "spring sale"}}) {
		t.Fatalf("raw resend message: %+v", nl.Message)
	}

	// Bulk: each resendable log gets a new log; the others are skipped.
	r = post("/logs/resend", `{"ids":[`+id(orig, 10)+`,`+id(redacted, 10)+`,`+id(queued.ID, 10)+`,999],"to":["zed@example.net"]}`)
	var bulk struct {
		Resent int     `json:"resent"`
		NewIDs []int64 `json:"new_ids"`
	}
	r.json(t, &bulk)
	if r.Status != 200 || bulk.Resent != 1 || len(bulk.NewIDs) != 1 {
		t.Fatalf("bulk resend to others: %d %s", r.Status, r.Body)
	}
	if nl, _ = f.logs.FindLogByID(ctx, bulk.NewIDs[0]); *nl.ResentFrom != orig || nl.Message.To[0].Email != "zed@example.net" || len(nl.Message.Cc) != 0 {
		t.Fatalf("bulk new log: %+v", nl)
	}

	tests := []struct {
		name, path, body string
		status           int
		field            string
	}{
		{"bad to", "/logs/" + id(orig, 10) + "/resend", `{"to":["not an address"]}`, 422, "to"},
		{"bad cc", "/logs/" + id(orig, 10) + "/resend", `{"to":["a@example.net"],"cc":["x@"]}`, 422, "cc"},
		{"bad bcc in bulk", "/logs/resend", `{"ids":[1],"bcc":["<>"]}`, 422, "bcc"},
		{"all lists empty", "/logs/" + id(orig, 10) + "/resend", `{"to":[],"cc":[]}`, 422, "to"},
		{"to not a list", "/logs/" + id(orig, 10) + "/resend", `{"to":"a@example.net"}`, 400, "to"},
		{"too many", "/logs/" + id(orig, 10) + "/resend", `{"to":[` + strings.TrimSuffix(manyAddresses(101), ",") + `]}`, 422, "to"},
		{"redacted stays refused", "/logs/" + id(redacted, 10) + "/resend", `{"to":["a@example.net"]}`, 409, ""},
		{"queued", "/logs/" + id(queued.ID, 10) + "/resend", `{"to":["a@example.net"]}`, 422, "status"},
		{"unknown", "/logs/999/resend", `{"to":["a@example.net"]}`, 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := post(tt.path, tt.body)
			if r.Status != tt.status {
				t.Fatalf("%d %s, want %d", r.Status, r.Body, tt.status)
			}
			if tt.field != "" {
				if _, _, fields := r.errorCode(t); fields[tt.field] == "" {
					t.Fatalf("errors %v do not name %s", fields, tt.field)
				}
			}
		})
	}
}

// manyAddresses returns n distinct quoted addresses, each followed by a
// comma.
func manyAddresses(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(`"u` + strconv.Itoa(i) + `@example.net",`)
	}
	return b.String()
}
