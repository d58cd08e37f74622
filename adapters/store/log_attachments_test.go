package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/internal/testdb"
)

// attachmentMessage carries a file of several chunks (the last one
// partial), an inline image, an empty file and one of exactly one chunk.
func attachmentMessage(t *testing.T, to string) core.Message {
	t.Helper()
	big := make([]byte, 2*attachmentChunk+12345)
	if _, err := rand.Read(big); err != nil {
		t.Fatal(err)
	}
	one := bytes.Repeat([]byte{0, '\'', '\\', '\n', 0x1a, 0xff}, attachmentChunk/6+1)[:attachmentChunk]
	return core.Message{
		From: core.Address{Email: "shop@example.com"}, To: []core.Address{{Email: to}},
		Subject: "with files", Text: "see attached", HTML: `<img src="cid:logo">`,
		Attachments: []core.Attachment{
			{Filename: "report.bin", ContentType: "application/octet-stream", Data: big},
			{Filename: "logo.png", ContentType: "image/png", Data: []byte("\x89PNG\r\n\x1a\n"), Inline: true, ContentID: "logo"},
			{Filename: "empty.txt", ContentType: "text/plain", Data: []byte{}},
			{Filename: "one.bin", ContentType: "application/octet-stream", Data: one},
		},
	}
}

// sameAttachments fails unless got has want's attachments, byte-exact and
// in order.
func sameAttachments(t *testing.T, what string, got, want []core.Attachment) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d attachments, want %d", what, len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Filename != w.Filename || g.ContentType != w.ContentType || g.Inline != w.Inline || g.ContentID != w.ContentID {
			t.Errorf("%s: attachment %d is %+v, want %s %s inline=%v cid=%q", what, i, g, w.Filename, w.ContentType, w.Inline, w.ContentID)
		}
		if !bytes.Equal(g.Data, w.Data) {
			t.Errorf("%s: attachment %d (%s): %d bytes differ from the %d sent", what, i, w.Filename, len(g.Data), len(w.Data))
		}
	}
}

// messageColumn returns the stored message column of log id.
func messageColumn(t *testing.T, db *DB, id int64) string {
	t.Helper()
	var js string
	if err := db.sqlDB.QueryRow(db.expand(`SELECT message FROM {prefix}mailsvc_logs WHERE id = ?`), id).Scan(&js); err != nil {
		t.Fatal(err)
	}
	return js
}

// attachmentRowCount counts the attachments rows of log id.
func attachmentRowCount(t *testing.T, db *DB, id int64) int {
	t.Helper()
	var n int
	if err := db.sqlDB.QueryRow(db.expand(`SELECT COUNT(*) FROM {prefix}mailsvc_log_attachments WHERE log_id = ?`), id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Attachment bytes go to the attachments table in chunks, not into the
// message column, whichever enqueue path writes them; the claim and a
// single log's view read them back byte-exact, listings do not read
// them, and deleting the log deletes them. A row whose column still holds
// the bytes (the WordPress bridge, older rows) reads as before.
func TestAttachmentStorage(t *testing.T) {
	for _, tc := range []struct {
		name string
		dsn  func(testing.TB) string
	}{
		{"sqlite", testdb.SQLite},
		{"mysql", testdb.MySQL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db, err := Open(ctx, tc.dsn(t), DefaultPrefix, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()

			single := &core.Log{Message: attachmentMessage(t, "one@example.org"), Source: "test"}
			if err := db.Logs().EnqueueLog(ctx, single); err != nil {
				t.Fatal(err)
			}
			batch := []*core.Log{
				{Message: attachmentMessage(t, "two@example.org")},
				{Message: core.Message{From: core.Address{Email: "shop@example.com"}, To: []core.Address{{Email: "plain@example.org"}}, Subject: "no files", Text: "x"}},
				{Message: attachmentMessage(t, "three@example.org")},
			}
			if err := db.Logs().EnqueueLogs(ctx, batch); err != nil {
				t.Fatal(err)
			}
			want := map[int64]core.Message{single.ID: single.Message}
			for _, l := range batch {
				want[l.ID] = l.Message
			}
			wantRows := 3 + 1 // report.bin's chunks, logo.png; none for empty.txt
			wantRows++        // one.bin, exactly one chunk
			for _, id := range []int64{single.ID, batch[0].ID, batch[2].ID} {
				if js := messageColumn(t, db, id); len(js) > 2048 {
					t.Errorf("log %d: message column is %d bytes: the attachments are still inside it", id, len(js))
				}
				if n := attachmentRowCount(t, db, id); n != wantRows {
					t.Errorf("log %d: %d attachments rows, want %d", id, n, wantRows)
				}
			}

			// A row as the WordPress bridge writes it: bytes inside the
			// column, base64.
			bridge := &core.Log{Message: attachmentMessage(t, "bridge@example.org")}
			if err := db.Logs().EnqueueLog(ctx, bridge); err != nil {
				t.Fatal(err)
			}
			inline, err := encodeMessageInline(&bridge.Message)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.sqlDB.Exec(db.expand(`DELETE FROM {prefix}mailsvc_log_attachments WHERE log_id = ?`), bridge.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := db.sqlDB.Exec(db.expand(`UPDATE {prefix}mailsvc_logs SET message = ? WHERE id = ?`), inline, bridge.ID); err != nil {
				t.Fatal(err)
			}
			want[bridge.ID] = bridge.Message

			// Listings carry the attachments' names, not their bytes.
			listed, _, err := db.Logs().FindLogs(ctx, core.LogFilter{Limit: 50})
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range listed {
				if l.ID == bridge.ID {
					continue
				}
				for _, a := range l.Message.Attachments {
					if len(a.Data) > 0 {
						t.Errorf("listed log %d: attachment %s read (%d bytes)", l.ID, a.Filename, len(a.Data))
					}
				}
				if len(l.Message.Attachments) != len(want[l.ID].Attachments) {
					t.Errorf("listed log %d: %d attachments, want %d", l.ID, len(l.Message.Attachments), len(want[l.ID].Attachments))
				}
			}

			claimed, err := db.Logs().ClaimLogs(ctx, "w1", 10, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if len(claimed) != len(want) {
				t.Fatalf("claimed %d logs, want %d", len(claimed), len(want))
			}
			for _, l := range claimed {
				sameAttachments(t, "claimed", l.Message.Attachments, want[l.ID].Attachments)
			}
			for id, m := range want {
				l, err := db.Logs().FindLogByID(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				sameAttachments(t, "found", l.Message.Attachments, m.Attachments)
			}

			if n, err := db.Logs().DeleteLogs(ctx, []int64{single.ID}); err != nil || n != 1 {
				t.Fatalf("delete: %d, %v", n, err)
			}
			if n := attachmentRowCount(t, db, single.ID); n != 0 {
				t.Errorf("%d attachments rows left after the log was deleted", n)
			}
		})
	}
}
