package postmark

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// MetadataKey is the Metadata key under which every message is sent with
// its Message-ID (see metadataValue), so that Find can search for it:
// Postmark's outbound message search filters by metadata, not by
// Message-ID.
const MetadataKey = "mailsvc_message_id"

// metadataLimit is the longest metadata value Postmark keeps.
const metadataLimit = 80

var _ core.Finder = (*Transport)(nil)

// metadataValue returns the MetadataKey value of a message with the
// Message-ID header id: the Message-ID without brackets, or, when that
// is longer than Postmark's 80 characters, "sha256:" and the first 64
// hex digits of its SHA-256. "" when id is empty.
func metadataValue(id string) string {
	id = strings.Trim(id, "<> ")
	if id == "" || len(id) <= metadataLimit {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Find implements core.Finder with the outbound message search, GET
// /messages/outbound?metadata_mailsvc_message_id=...: Postmark holds the
// message when the search returns it (in the connection's stream). The
// receipt carries Postmark's MessageID, as a send's does.
func (t *Transport) Find(ctx context.Context, msg *core.Message) (core.Receipt, bool, error) {
	v := metadataValue(msg.MessageID())
	if v == "" {
		return core.Receipt{}, false, nil
	}
	c := t.newCall(ctx)
	list, _, err := c.client.GetOutboundMessages(1, 0, map[string]any{"metadata_" + MetadataKey: v, "messagestream": t.stream})
	if err := t.outcome("look up message", c.rt, err); err != nil {
		return core.Receipt{}, false, err
	}
	if len(list) == 0 {
		return core.Receipt{}, false, nil
	}
	return core.Receipt{MessageID: list[0].MessageID, Response: "Postmark status " + list[0].Status}, true, nil
}
