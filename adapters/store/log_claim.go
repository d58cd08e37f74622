package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// ClaimLogs implements core.LogStore. On MySQL the due rows are read and
// locked in one statement, SELECT … FOR UPDATE SKIP LOCKED through the
// (status, next_attempt_at) index, so concurrent claimers (other workers,
// other processes) take disjoint rows without waiting; on SQLite the
// transaction holds the database's write lock. One UPDATE then leases
// them: three round trips in all, whatever the batch size.
func (db *LogService) ClaimLogs(ctx context.Context, owner string, limit int, lease time.Duration) ([]*core.Log, error) {
	if limit <= 0 {
		return nil, nil
	}
	var out []*core.Log
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		got, err := db.claimIn(ctx, tx, []string{owner}, []int{limit}, lease)
		if err != nil {
			return err
		}
		out = got[0]
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("claim logs: %w", err)
	}
	if len(out) == 0 {
		// An idle queue indexes older logs that have no recipients rows.
		if _, err := db.indexLogRecipients(ctx, 200); err != nil && ctx.Err() == nil {
			db.logger.Warn("index log recipients", "err", err)
		}
		// And one step of the search dictionary's background work, once
		// no message is being sent either: while other workers still
		// hold messages, its writes would slow the end of a drain (the
		// scheduler's search index job goes on meanwhile).
		if db.anySending(ctx) {
			return out, nil
		}
		if _, err := db.indexSearchAddresses(ctx); err != nil && ctx.Err() == nil {
			db.logger.Warn("index search addresses", "err", err)
		}
	}
	return out, nil
}

// anySending reports whether some log is being sent (one read of the
// claim index); when that cannot be read it answers no.
func (db *handle) anySending(ctx context.Context) bool {
	var one int
	err := db.sqlDB.QueryRowContext(ctx, db.expand(`SELECT 1 FROM {prefix}mailsvc_logs WHERE status = ? LIMIT 1`), core.StatusSending).Scan(&one)
	return err == nil
}

// claimIn claims, in tx, up to counts[i] due logs for each owners[i]:
// one SELECT … FOR UPDATE SKIP LOCKED (on MySQL) of them all, in due
// order, handed out to the owners in turn, and one UPDATE per owner that
// leases its share. It returns each owner's logs, as leased.
func (db *handle) claimIn(ctx context.Context, tx *sql.Tx, owners []string, counts []int, lease time.Duration) ([][]*core.Log, error) {
	out := make([][]*core.Log, len(owners))
	total := 0
	for _, n := range counts {
		total += max(n, 0)
	}
	if total == 0 {
		return out, nil
	}
	t := now()
	sel := `SELECT ` + logColumns + `, recipients_indexed, capture_released, flood_released, resends FROM {prefix}mailsvc_logs
		WHERE status = ? AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?`
	if db.dialect == DialectMySQL {
		sel += " FOR UPDATE SKIP LOCKED"
	}
	rows, err := tx.QueryContext(ctx, db.expand(sel), core.StatusQueued, t, total)
	if err != nil {
		return nil, fmt.Errorf("select due logs: %w", err)
	}
	var due, pending []*core.Log
	var indexed, released, floodReleased bool
	var resends int
	row := &withExtra{r: rows, extra: []any{&indexed, &released, &floodReleased, &resends}}
	for rows.Next() {
		indexed, released, floodReleased, resends = false, false, false, 0
		l, err := scanLog(row)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("read due log: %w", err)
		}
		l.CaptureReleased, l.FloodReleased, l.Resends = released, floodReleased, resends
		due = append(due, l)
		if !indexed {
			pending = append(pending, l)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("select due logs: %w", err)
	}
	until := t.Add(lease)
	for i, owner := range owners {
		n := min(max(counts[i], 0), len(due))
		if n == 0 {
			continue
		}
		mine := due[:n:n]
		due = due[n:]
		ids := make([]int64, len(mine))
		for j, l := range mine {
			ids[j] = l.ID
			l.Status, l.LeaseOwner, l.UpdatedAt = core.StatusSending, owner, t
			l.LeaseUntil = &until
		}
		in, args := inList(ids)
		set := `status = ?, lease_owner = ?, lease_until = ?, updated_at = ?`
		upd := []any{core.StatusSending, owner, until, t}
		if db.dialect == DialectMySQL {
			// The row's size stays the same (see queue_reserve.go).
			cut := claimReserveCut(owner)
			set += `, queue_reserve = IF(LENGTH(queue_reserve) > ?, LEFT(queue_reserve, LENGTH(queue_reserve) - ?), NULL)`
			upd = append(upd, cut, cut)
		}
		upd = append(upd, args...)
		if _, err := tx.ExecContext(ctx, db.expand(`UPDATE {prefix}mailsvc_logs
			SET `+set+` WHERE id IN (`+in+`)`), upd...); err != nil {
			return nil, fmt.Errorf("lease due logs: %w", err)
		}
		out[i] = mine
		// The attachments' bytes, for the send path only.
		if err := db.loadAttachments(ctx, tx, mine); err != nil {
			return nil, err
		}
	}
	// Logs queued by the PHP bridge get their recipients rows here if
	// the bridge could not write them.
	if err := db.indexPending(ctx, tx, pending); err != nil {
		return nil, err
	}
	return out, nil
}

// RecordOutcomes implements core.LogStore.
func (db *LogService) RecordOutcomes(ctx context.Context, owner string, outs []core.LogOutcome) (int, error) {
	if len(outs) == 0 {
		return 0, nil
	}
	applied, err := db.RecordOutcomesOfOwners(ctx, []string{owner}, [][]core.LogOutcome{outs})
	if err != nil {
		return 0, err
	}
	return applied[0], nil
}

// RecordOutcomesOfOwners records the outcomes of several lease owners
// (the workers of a process) in one transaction, one commit for them
// all: outs[i] as RecordOutcomes(ctx, owners[i], outs[i]) would apply
// them. It returns how many of each owner's outcomes applied. On error
// nothing is recorded.
func (db *LogService) RecordOutcomesOfOwners(ctx context.Context, owners []string, outs [][]core.LogOutcome) ([]int, error) {
	if len(owners) != len(outs) {
		return nil, fmt.Errorf("record outcomes: %d owners for %d outcome lists", len(owners), len(outs))
	}
	var applied []int
	var hooked bool
	err := retryDeadlock(func() error {
		return db.inTx(ctx, func(tx *sql.Tx) error {
			var err error
			applied, hooked, err = db.recordOutcomes(ctx, tx, owners, outs)
			return err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("record outcomes: %w", err)
	}
	if hooked {
		db.hostHooksWritten()
	}
	return applied, nil
}

// recordOutcomes is RecordOutcomesOfOwners inside its transaction, in a
// fixed number of statements whatever the batch size and the number of
// owners: the logs still sending under their owner are read (and on
// MySQL locked) in one SELECT, then updated with one multi-row UPDATE
// (and the deleted ones removed with one DELETE) per outcomeChunk, the
// attempts appended with multi-row INSERTs, and the roll-ups by
// connection grown with one upsert, then the modules' outcome counters
// (module_outcomes.go: the Pro roll-ups by site and by source) run, last,
// so their shared rows stay locked for the shortest time. Only the first outcome
// of a log applies. A log failed for good gets its failure mark
// (failure_marks.go), in one multi-row INSERT when any failed. The host hooks of the applied outcomes are written
// too (outcomeHostHooks); hooked reports whether there were any, so the
// caller signals them once the transaction has committed.
func (db *handle) recordOutcomes(ctx context.Context, tx *sql.Tx, owners []string, outs [][]core.LogOutcome) (applied []int, hooked bool, err error) {
	t := now()
	held, err := db.heldLogs(ctx, tx, outs)
	if err != nil {
		return nil, false, err
	}
	tally := outcomeTally{}
	// counts: the final outcomes for the modules' outcome counters
	// (module_outcomes.go), gathered only when there are any.
	var counts []OutcomeCount
	if len(outcomeCounters) > 0 {
		counts = make([]OutcomeCount, 0, len(held))
	}
	var (
		history []core.Attempt
		bodies  map[int64]*core.KeptBody
		upd     []core.LogOutcome
		del     []int64
		// withHooks: the outcomes whose host hooks to write; perRecipient:
		// those with recipient outcomes or further provider ids to write
		// (seldom any).
		withHooks    []core.LogOutcome
		perRecipient []core.LogOutcome
		// failed: the logs failed for good, marked for the alert
		// thresholds (failure_marks.go).
		failed      []int64
		appliedOnce = make(map[int64]bool, len(held))
	)
	applied = make([]int, len(owners))
	for i, owner := range owners {
		for _, o := range outs[i] {
			h, ok := held[o.LogID]
			if !ok || h.owner != owner || owner == "" || appliedOnce[o.LogID] {
				continue
			}
			appliedOnce[o.LogID] = true
			applied[i]++
			tally.add(t, o.SentConnectionID, o.Status)
			partial := o.Status == core.StatusDelivered && o.Recipients.Count(core.RecipientRefused) > 0
			if partial {
				tally.add(t, o.SentConnectionID, core.OutcomeCountPartial)
			}
			if counts != nil && (o.Status == core.StatusDelivered || o.Status == core.StatusFailed) {
				counts = append(counts, OutcomeCount{At: t, SiteID: h.site, ConnectionID: o.SentConnectionID,
					Source: h.source, Status: o.Status, Partial: partial})
			}
			if o.Status == core.StatusFailed {
				failed = append(failed, o.LogID)
			}
			if h.hostHooks != 0 || len(o.HostHooks) > 0 {
				withHooks = append(withHooks, o)
			}
			if o.Delete {
				del = append(del, o.LogID)
				continue
			}
			upd = append(upd, o)
			if o.Recipients != nil || len(o.ProviderMessageIDs) > 0 {
				perRecipient = append(perRecipient, o)
			}
			history = append(history, o.History...)
			if b := finalBody(&o); b != nil && (b.Changed || b.DropAttachments) {
				if bodies == nil {
					bodies = map[int64]*core.KeptBody{}
				}
				bodies[o.LogID] = o.Body
			}
		}
	}
	var hooks []core.HostHook
	if len(withHooks) > 0 {
		if hooks, err = db.outcomeHostHooks(ctx, tx, held, withHooks); err != nil {
			return nil, false, err
		}
	}
	for part := range slices.Chunk(upd, outcomeChunk) {
		if err := db.updateOutcomes(ctx, tx, t, part); err != nil {
			return nil, false, err
		}
	}
	if err := db.writeRecipientOutcomes(ctx, tx, perRecipient); err != nil {
		return nil, false, err
	}
	for part := range slices.Chunk(del, outcomeChunk) {
		in, args := inList(part)
		if _, err := tx.ExecContext(ctx, db.expand(`DELETE FROM {prefix}mailsvc_logs WHERE id IN (`+in+`)`), args...); err != nil {
			return nil, false, fmt.Errorf("delete delivered logs: %w", err)
		}
	}
	if _, err := db.keepBodies(ctx, tx, bodies, false); err != nil {
		return nil, false, err
	}
	if err := db.insertAttempts(ctx, tx, history); err != nil {
		return nil, false, err
	}
	if len(hooks) > 0 {
		if err := db.insertHostHooks(ctx, tx, hooks); err != nil {
			return nil, false, err
		}
		hooked = true
	}
	if err := db.insertFailureMarks(ctx, tx, t, failed); err != nil {
		return nil, false, err
	}
	if err := tally.write(ctx, db, tx); err != nil {
		return nil, false, err
	}
	if err := countOutcomes(ctx, db.db, tx, counts); err != nil {
		return nil, false, err
	}
	return applied, hooked, nil
}

// outcomeChunk bounds the logs of one outcome UPDATE or DELETE (and so
// its placeholders: at most 2 per log and column).
const outcomeChunk = 200

// heldLog is a log in sending state: its lease owner and its source.
type heldLog struct {
	owner  string
	source string
	// site is the log's site (multisite).
	site int64
	// hostHooks are the log's host hook flags (core.HostHookFlag*).
	hostHooks int
}

// heldLogs returns the lease owner and source of each log of outs that is
// sending, locked on MySQL until tx ends so the updates that follow apply
// to exactly them.
func (db *handle) heldLogs(ctx context.Context, tx *sql.Tx, outs [][]core.LogOutcome) (map[int64]heldLog, error) {
	var ids []int64
	for _, list := range outs {
		for _, o := range list {
			ids = append(ids, o.LogID)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	lock := ""
	if db.dialect == DialectMySQL {
		lock = " FOR UPDATE"
	}
	held := make(map[int64]heldLog, len(ids))
	for part := range slices.Chunk(ids, idChunk) {
		in, args := inList(part)
		// The ids alone choose the rows (primary-key lookups): a status
		// filter could let the planner scan the claim index and wait on
		// the rows other workers are recording.
		rows, err := tx.QueryContext(ctx, db.expand(`SELECT id, status, lease_owner, source, host_hooks, site_id FROM {prefix}mailsvc_logs
			WHERE id IN (`+in+`)`+lock), args...)
		if err != nil {
			return nil, fmt.Errorf("read held logs: %w", err)
		}
		for rows.Next() {
			var id int64
			var status, source string
			var leaseOwner sql.NullString
			var flags int
			var site int64
			if err := rows.Scan(&id, &status, &leaseOwner, &source, &flags, &site); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read held logs: %w", err)
			}
			if status == core.StatusSending {
				held[id] = heldLog{owner: leaseOwner.String, source: source, site: site, hostHooks: flags}
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("read held logs: %w", err)
		}
	}
	return held, nil
}

// RecordOutcomesAndClaim records the outcomes of several lease owners as
// RecordOutcomesOfOwners does and, in the same transaction, claims up to
// claims[i] further due logs for owners[i] as ClaimLogs does (under a
// lease of lease): one commit (one log flush) where a record and a claim
// would cost two. The claim comes after the record, so a log the
// outcomes make due at once (a move to the fallback) may be claimed
// again. It returns how many of each owner's outcomes applied and each
// owner's claimed logs. On error nothing is recorded and nothing
// claimed.
func (db *LogService) RecordOutcomesAndClaim(ctx context.Context, owners []string, outs [][]core.LogOutcome, claims []int, lease time.Duration) ([]int, [][]*core.Log, error) {
	if len(owners) != len(outs) || len(owners) != len(claims) {
		return nil, nil, fmt.Errorf("record outcomes and claim: %d owners for %d outcome lists and %d claims", len(owners), len(outs), len(claims))
	}
	var (
		applied []int
		claimed [][]*core.Log
		hooked  bool
	)
	err := retryDeadlock(func() error {
		return db.inTx(ctx, func(tx *sql.Tx) error {
			var err error
			if applied, hooked, err = db.recordOutcomes(ctx, tx, owners, outs); err != nil {
				return err
			}
			claimed, err = db.claimIn(ctx, tx, owners, claims, lease)
			return err
		})
	})
	if err != nil {
		return nil, nil, fmt.Errorf("record outcomes and claim: %w", err)
	}
	if hooked {
		db.hostHooksWritten()
	}
	return applied, claimed, nil
}
