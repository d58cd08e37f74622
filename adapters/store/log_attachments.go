package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/mailsvc/mailsvc/core"
)

// Attachment bytes live in {prefix}mailsvc_log_attachments (schema 12),
// not in the message column: one row per chunk of at most
// attachmentChunk bytes, keyed by (log id, attachment position, chunk
// number), each row carrying the attachment's whole size. The message
// column keeps each attachment's name, type and size with "data": null.
//
// Only the send path (ClaimLogs) and a single log's view (FindLogByID)
// read the bytes; listings and searches never do. A reader allocates each
// attachment once, at its size, and copies the chunks into it as they
// arrive, so a claimed 10 MB attachment costs its 10 MB and no more, where
// the base64 JSON cost the encoded column, a string of it, a []byte of
// that and the decoded bytes. Chunks also keep every statement far below
// max_allowed_packet, whatever the attachment's size.
//
// Rows written before schema 12, by the WordPress bridge (which inserts
// the message column through $wpdb) and by imports keep the bytes inside
// the column, base64; they are read as before. The rows go with their log
// (ON DELETE CASCADE), whichever path deletes it.

// attachmentChunk is the most bytes of one attachments row: small enough
// that the MySQL driver reads each row into the connection's reusable
// buffer (it keeps buffers up to 256 KiB; a larger row is a fresh
// allocation, garbage once copied).
const attachmentChunk = 240 << 10

// attachmentLoadIDs bounds the log ids of one attachments read.
const attachmentLoadIDs = 500

// separateAttachments reports whether m has bytes that go to the
// attachments table.
func separateAttachments(m *core.Message) bool {
	for _, a := range m.Attachments {
		if len(a.Data) > 0 {
			return true
		}
	}
	return false
}

// insertAttachments writes the bytes of m's attachments for log id, one
// statement per chunk (an empty attachment has no row).
func (db *handle) insertAttachments(ctx context.Context, q execer, id int64, m *core.Message) error {
	stmt := db.expand(`INSERT INTO {prefix}mailsvc_log_attachments (log_id, position, chunk, size, data) VALUES (?, ?, ?, ?, ?)`)
	for pos, a := range m.Attachments {
		for c, off := 0, 0; off < len(a.Data); c, off = c+1, off+attachmentChunk {
			end := min(off+attachmentChunk, len(a.Data))
			if _, err := q.ExecContext(ctx, stmt, id, pos, c, len(a.Data), a.Data[off:end]); err != nil {
				return fmt.Errorf("insert attachment %d of log %d: %w", pos, id, err)
			}
		}
	}
	return nil
}

// insertAttachmentsOf is insertAttachments for each of logs, whose ids
// are ids.
func (db *handle) insertAttachmentsOf(ctx context.Context, q execer, ids []int64, logs []*core.Log) error {
	for i, l := range logs {
		if err := db.insertAttachments(ctx, q, ids[i], &l.Message); err != nil {
			return err
		}
	}
	return nil
}

// Querier is a *sql.DB or a *sql.Tx.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// loadAttachments fills in the bytes of the logs' attachments that the
// attachments table keeps (those the message column left null).
func (db *handle) loadAttachments(ctx context.Context, q Querier, logs []*core.Log) error {
	byID := map[int64]*core.Log{}
	var ids []int64
	for _, l := range logs {
		for _, a := range l.Message.Attachments {
			if a.Data == nil {
				byID[l.ID] = l
				ids = append(ids, l.ID)
				break
			}
		}
	}
	for from := 0; from < len(ids); from += attachmentLoadIDs {
		part := ids[from:min(from+attachmentLoadIDs, len(ids))]
		if err := db.loadAttachmentRows(ctx, q, part, byID); err != nil {
			return err
		}
	}
	return nil
}

// errAttachmentRows marks attachments rows that do not add up to their
// attachment.
var errAttachmentRows = errors.New("attachment rows do not match their attachment")

// loadAttachmentRows reads the attachments rows of ids into byID's logs.
func (db *handle) loadAttachmentRows(ctx context.Context, q Querier, ids []int64, byID map[int64]*core.Log) error {
	in, args := inList(ids)
	rows, err := q.QueryContext(ctx, db.expand(`SELECT log_id, position, chunk, size, data
		FROM {prefix}mailsvc_log_attachments WHERE log_id IN (`+in+`) ORDER BY log_id, position, chunk`), args...)
	if err != nil {
		return fmt.Errorf("read attachments: %w", err)
	}
	defer rows.Close()
	var loaded []*core.Attachment
	for rows.Next() {
		var (
			id               int64
			pos, chunk, size int
			data             sql.RawBytes // the driver's buffer: copied once, into the attachment
		)
		if err := rows.Scan(&id, &pos, &chunk, &size, &data); err != nil {
			return fmt.Errorf("read attachments: %w", err)
		}
		l := byID[id]
		if l == nil || pos < 0 || pos >= len(l.Message.Attachments) {
			continue
		}
		a := &l.Message.Attachments[pos]
		if chunk == 0 {
			a.Data, a.Size = make([]byte, 0, size), 0
			loaded = append(loaded, a)
		}
		if a.Data == nil || len(a.Data) != chunk*attachmentChunk || len(a.Data)+len(data) > cap(a.Data) {
			return fmt.Errorf("log %d, attachment %d, chunk %d: %w", id, pos, chunk, errAttachmentRows)
		}
		a.Data = append(a.Data, data...)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read attachments: %w", err)
	}
	for _, a := range loaded {
		if len(a.Data) != cap(a.Data) {
			return fmt.Errorf("attachment %q: %d of %d bytes: %w", a.Filename, len(a.Data), cap(a.Data), errAttachmentRows)
		}
	}
	return nil
}
