package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// ImportLogs inserts logs taken from another mail plugin, with their own
// times, in one transaction: all of them or none. Each log's Status must
// be StatusDelivered or StatusFailed (an imported message is history,
// never sent again); CreatedAt is kept (zero: now), UpdatedAt (zero:
// CreatedAt), DeliveredAt of a delivered log (nil: UpdatedAt), Attempts,
// SentConnectionID, ConnectionID, ProviderMessageID, LastError, Source and
// the whole Message are kept, and History (if any) is appended with each
// attempt's LogID set. It sets each log's ID. The recipients rows and the
// subject's full-text entry (MySQL: the subjects row) are written in the same transaction, and the
// outcome roll-ups (OutcomeBuckets) grow by one per log, in the bucket of
// its DeliveredAt (delivered) or UpdatedAt (failed), under
// SentConnectionID (0 when nil). Not idempotent: the caller keeps track of
// what it imported.
func (db *LogService) ImportLogs(ctx context.Context, logs []*core.Log) error {
	if len(logs) == 0 {
		return nil
	}
	for i, l := range logs {
		if l == nil || (l.Status != core.StatusDelivered && l.Status != core.StatusFailed) {
			return core.InvalidField("status", fmt.Sprintf("Imported log %d must be delivered or failed.", i))
		}
	}
	type prepared struct {
		js           string
		created, upd time.Time
		delivered    *time.Time
		next         time.Time
	}
	preps := make([]prepared, len(logs))
	t := now()
	for i, l := range logs {
		js, err := encodeMessageInline(&l.Message)
		if err != nil {
			return fmt.Errorf("import logs: %w", err)
		}
		p := prepared{js: js, created: l.CreatedAt.UTC().Truncate(time.Microsecond)}
		if l.CreatedAt.IsZero() {
			p.created = t
		}
		p.upd = l.UpdatedAt.UTC().Truncate(time.Microsecond)
		if l.UpdatedAt.IsZero() {
			p.upd = p.created
		}
		if l.Status == core.StatusDelivered {
			d := p.upd
			if l.DeliveredAt != nil && !l.DeliveredAt.IsZero() {
				d = l.DeliveredAt.UTC().Truncate(time.Microsecond)
			}
			p.delivered = &d
		}
		p.next = p.created
		preps[i] = p
	}
	ids := make([]int64, len(logs))
	err := retryDeadlock(func() error {
		return db.inTx(ctx, func(tx *sql.Tx) error {
			// Imported logs are history: no room is reserved in them
			// for a claim (see queue_reserve.go).
			reserveCol, reserveVal := "", ""
			if db.dialect == DialectMySQL {
				reserveCol, reserveVal = ", queue_reserve", ", NULL"
			}
			ins, err := tx.PrepareContext(ctx, db.expand(`INSERT INTO {prefix}mailsvc_logs
				(status, connection_id, sent_connection_id, source, recipients, subject, text_body, html_body, message,
				 attempts, phase_attempts, used_fallback, simulated, provider_message_id, last_error,
				 next_attempt_at, lease_owner, lease_until, created_at, updated_at, delivered_at, recipients_indexed`+reserveCol+`)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?, ?, ?, 1`+reserveVal+`)`))
			if err != nil {
				return fmt.Errorf("prepare log insert: %w", err)
			}
			defer ins.Close()
			var recips []recipientRow
			var subjects []subjectRow
			var history []core.Attempt
			tally := outcomeTally{}
			// counts: the outcomes for the modules' outcome counters
			// (module_outcomes.go), gathered only when there are any.
			var counts []OutcomeCount
			if len(outcomeCounters) > 0 {
				counts = make([]OutcomeCount, 0, len(logs))
			}
			for i, l := range logs {
				p := preps[i]
				res, err := ins.ExecContext(ctx, l.Status, nullInt(l.ConnectionID), nullInt(l.SentConnectionID), l.Source,
					recipientsText(&l.Message), l.Message.Subject, l.Message.Text, l.Message.HTML, p.js,
					l.Attempts, l.PhaseAttempts, l.UsedFallback, l.Simulated, l.ProviderMessageID, l.LastError,
					p.next, p.created, p.upd, NullTime(p.delivered))
				if err != nil {
					return fmt.Errorf("insert log %d: %w", i, err)
				}
				id, err := res.LastInsertId()
				if err != nil {
					return fmt.Errorf("insert log %d: read id: %w", i, err)
				}
				ids[i] = id
				recips = append(recips, recipientRows(id, &l.Message)...)
				subjects = append(subjects, subjectRow{LogID: id, CreatedAt: p.created, Subject: l.Message.Subject})
				for _, a := range l.History {
					a.LogID = id
					history = append(history, a)
				}
				at := p.upd
				if p.delivered != nil {
					at = *p.delivered
				}
				tally.add(at, l.SentConnectionID, l.Status)
				if counts != nil {
					// The log as inserted: the main site's, its own
					// source, its outcome time as the roll-ups count it.
					counts = append(counts, OutcomeCount{At: at, SiteID: core.MainSiteID, ConnectionID: l.SentConnectionID,
						Source: l.Source, Status: l.Status})
				}
			}
			if err := db.insertRecipients(ctx, tx, recips); err != nil {
				return err
			}
			if err := db.insertSubjects(ctx, tx, subjects); err != nil {
				return err
			}
			if db.dialect == DialectSQLite {
				in, args := inList(ids)
				if _, err := tx.ExecContext(ctx, db.expand(`INSERT INTO {prefix}mailsvc_logs_fts (rowid, subject)
					SELECT id, subject FROM {prefix}mailsvc_logs WHERE id IN (`+in+`)`), args...); err != nil {
					return fmt.Errorf("index subjects: %w", err)
				}
			}
			if err := db.insertAttempts(ctx, tx, history); err != nil {
				return err
			}
			if err := countOutcomes(ctx, db.db, tx, counts); err != nil {
				return err
			}
			return tally.write(ctx, db.handle, tx)
		})
	})
	if err != nil {
		return fmt.Errorf("import logs: %w", err)
	}
	for i, l := range logs {
		p := preps[i]
		l.ID, l.CreatedAt, l.UpdatedAt, l.NextAttemptAt, l.DeliveredAt = ids[i], p.created, p.upd, p.next, p.delivered
		l.LeaseOwner, l.LeaseUntil = "", nil
	}
	return nil
}
