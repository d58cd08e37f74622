package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/mailsvc/mailsvc/core"
)

// writeRecipientOutcomes writes, for the few outcomes that carry them,
// the per-recipient outcomes and refused count of their log and its
// further provider message ids ({prefix}mailsvc_log_provider_ids). The
// common outcome (every recipient delivered in one call) never comes
// here.
func (db *handle) writeRecipientOutcomes(ctx context.Context, tx *sql.Tx, outs []core.LogOutcome) error {
	for _, o := range outs {
		if o.Recipients != nil {
			js, err := json.Marshal(o.Recipients)
			if err != nil {
				return fmt.Errorf("encode recipient outcomes of log %d: %w", o.LogID, err)
			}
			if _, err := tx.ExecContext(ctx, db.expand(`UPDATE {prefix}mailsvc_logs SET recipient_outcomes = ?, recipients_refused = ? WHERE id = ?`),
				string(js), o.Recipients.Count(core.RecipientRefused), o.LogID); err != nil {
				return fmt.Errorf("record recipient outcomes of log %d: %w", o.LogID, err)
			}
		}
		if err := db.insertProviderIDs(ctx, tx, o.LogID, o.ProviderMessageIDs); err != nil {
			return err
		}
	}
	return nil
}

// insertProviderIDs records ids as further provider message ids of log
// id (an id already recorded is kept once).
func (db *handle) insertProviderIDs(ctx context.Context, tx *sql.Tx, id int64, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	ins := `INSERT IGNORE INTO {prefix}mailsvc_log_provider_ids (provider_message_id, log_id) VALUES `
	if db.dialect == DialectSQLite {
		ins = `INSERT OR IGNORE INTO {prefix}mailsvc_log_provider_ids (provider_message_id, log_id) VALUES `
	}
	args := make([]any, 0, 2*len(ids))
	for i, pid := range ids {
		if i > 0 {
			ins += ","
		}
		ins += "(?,?)"
		args = append(args, pid, id)
	}
	if _, err := tx.ExecContext(ctx, db.expand(ins), args...); err != nil {
		return fmt.Errorf("record provider message ids of log %d: %w", id, err)
	}
	return nil
}
