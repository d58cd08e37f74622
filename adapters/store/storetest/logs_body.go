package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// testLogBodies checks what a final outcome's kept body does to the row
// (a redacted body, attachments reduced to names and sizes, full and
// none), that a retry outcome never touches the body, that only whole
// logs are resent, and the backfill reads and writes of `mailsvc logs
// redact` (on an imported row, whose attachments live in the message
// column).
func (s *suite) testLogBodies(t *testing.T) {
	ctx := context.Background()
	db := s.logs(t)
	link := "http://example.test/wp-login.php?action=rp&key=SECRET&login=bob"
	msg := Message(1)
	msg.Text, msg.HTML = "Reset: "+link, "<p>hi</p>"
	msg.Attachments = []core.Attachment{{Filename: "a.pdf", ContentType: "application/pdf", Data: []byte("12345")}}
	redacted, retried, full := Enqueue(t, db, msg), Enqueue(t, db, msg), Enqueue(t, db, Message(3))
	if got := Claim(t, db, "w", 3, time.Hour); len(got) != 3 {
		t.Fatalf("claimed %d", len(got))
	}
	conn := int64(1)
	kept := "Reset: http://example.test/wp-login.php?action=rp&key=[redacted]&login=bob"
	outs := []core.LogOutcome{
		{LogID: redacted.ID, Status: core.StatusDelivered, Attempts: 1, SentConnectionID: &conn,
			Body: &core.KeptBody{Mode: core.LogBodyRedacted, Text: kept, HTML: "<p>hi</p>", Changed: true, Redacted: 1, DropAttachments: true}},
		{LogID: retried.ID, Status: core.StatusQueued, Attempts: 1, SentConnectionID: &conn,
			Body: &core.KeptBody{Mode: core.LogBodyNone, Changed: true, DropAttachments: true}},
		{LogID: full.ID, Status: core.StatusFailed, Attempts: 1, SentConnectionID: &conn, Body: &core.KeptBody{Mode: core.LogBodyFull}},
	}
	if n, err := db.RecordOutcomes(ctx, "w", outs); err != nil || n != 3 {
		t.Fatalf("RecordOutcomes = %d, %v", n, err)
	}
	got, err := db.FindLogByID(ctx, redacted.ID)
	if err != nil {
		t.Fatal(err)
	}
	a := got.Message.Attachments
	if got.Message.Text != kept || got.BodyMode != core.LogBodyRedacted || got.RedactedCount != 1 || got.AttachmentsKept ||
		len(a) != 1 || a[0].Filename != "a.pdf" || a[0].ContentType != "application/pdf" || a[0].Data != nil || a[0].Size != 5 {
		t.Fatalf("redacted log = %+v", got)
	}
	got, err = db.FindLogByID(ctx, retried.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Message.Text != msg.Text || got.BodyMode != "" || !got.AttachmentsKept || string(got.Message.Attachments[0].Data) != "12345" {
		t.Fatalf("a retried log's body changed: %+v", got)
	}
	got, err = db.FindLogByID(ctx, full.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.BodyMode != core.LogBodyFull || got.Message.Text != "Hello 3" || !got.Resendable() {
		t.Fatalf("full log = %+v", got)
	}

	if n, err := db.ResendLogs(ctx, []int64{redacted.ID, full.ID}); err != nil || n != 1 {
		t.Fatalf("ResendLogs = %d, %v; want 1 (the redacted log is not whole)", n, err)
	}
	if got, _ := db.FindLogByID(ctx, full.ID); got.Status != core.StatusQueued || got.BodyMode != "" {
		t.Fatalf("resent log = %+v", got)
	}

	// An imported row (attachments inside the message column), done by
	// the backfill: read, then its body dropped.
	imp := Message(4)
	imp.Attachments = []core.Attachment{{Filename: "b.txt", ContentType: "text/plain", Data: []byte("abc")}}
	logs := []*core.Log{{Status: core.StatusDelivered, Source: "wpforms", Message: imp, CreatedAt: time.Now().Add(-time.Hour)}}
	if err := db.ImportLogs(ctx, logs); err != nil {
		t.Fatal(err)
	}
	last, err := db.LastLogID(ctx)
	if err != nil || last != logs[0].ID {
		t.Fatalf("LastLogID = %d, %v; want %d", last, err, logs[0].ID)
	}
	pending, err := db.FinalLogsAfter(ctx, 0, 10, true)
	if err != nil || len(pending) != 1 || pending[0].ID != logs[0].ID {
		t.Fatalf("FinalLogsAfter(pending) = %v, %v; want the imported log only", ids(pending), err)
	}
	every, err := db.FinalLogsAfter(ctx, redacted.ID, 10, false)
	if err != nil || len(every) != 1 {
		t.Fatalf("FinalLogsAfter(all, after %d) = %v, %v", redacted.ID, ids(every), err)
	}
	n, err := db.KeepLogBodies(ctx, map[int64]*core.KeptBody{
		logs[0].ID: {Mode: core.LogBodyNone, Changed: true, DropAttachments: true},
		full.ID:    {Mode: core.LogBodyNone, Changed: true}, // queued again: left alone
	})
	if err != nil || n != 1 {
		t.Fatalf("KeepLogBodies = %d, %v; want 1", n, err)
	}
	got, err = db.FindLogByID(ctx, logs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	a = got.Message.Attachments
	if got.Message.Text != "" || got.BodyMode != core.LogBodyNone || got.AttachmentsKept || len(a) != 1 || a[0].Data != nil || a[0].Size != 3 {
		t.Fatalf("backfilled log = %+v", got)
	}
	if got, _ := db.FindLogByID(ctx, full.ID); got.Message.Text != "Hello 3" {
		t.Fatal("KeepLogBodies rewrote a queued log")
	}
}
