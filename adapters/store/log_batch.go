package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// EnqueueLogs inserts logs as EnqueueLog does, all in one transaction
// (one commit, one log flush): on MySQL with their recipients and
// subjects rows, on
// SQLite as rows that the next claim indexes. It sets each log's ID,
// CreatedAt and UpdatedAt. On error nothing is inserted and no log is
// changed.
func (db *LogService) EnqueueLogs(ctx context.Context, logs []*core.Log) error {
	if len(logs) == 0 {
		return nil
	}
	rows := make([]encodedLog, len(logs))
	for i, l := range logs {
		if err := checkEnqueueStatus(l); err != nil {
			return fmt.Errorf("enqueue logs: %w", err)
		}
		js, err := encodeMessage(&l.Message)
		if err != nil {
			return fmt.Errorf("enqueue logs: %w", err)
		}
		rows[i].js = js
		if l.Status == core.StatusSending {
			rows[i].owner = l.LeaseOwner
		}
	}
	t := now()
	ids := make([]int64, len(logs))
	indexed := db.dialect != DialectSQLite
	err := retryDeadlock(func() error {
		return db.inBatchTx(ctx, func(tx *sql.Tx) error {
			var recips []recipientRow
			prepared := make([]*core.Log, len(logs))
			for i, l := range logs {
				// A copy keeps l untouched should the transaction fail.
				c := *l
				if c.Status == "" {
					c.Status = core.StatusQueued
				}
				if c.NextAttemptAt.IsZero() {
					c.NextAttemptAt = t
				}
				prepared[i] = &c
			}
			if step, ok := db.consecutiveIDs(ctx, tx); ok {
				// One multi-row INSERT per chunk: its rows get
				// consecutive ids from LastInsertId.
				for from := 0; from < len(prepared); from += insertChunk {
					to := min(from+insertChunk, len(prepared))
					first, err := db.insertLogRows(ctx, tx, prepared[from:to], rows[from:to], t, indexed)
					if err != nil {
						return err
					}
					for i := from; i < to; i++ {
						ids[i] = first + int64(i-from)*step
					}
				}
			} else {
				for i, c := range prepared {
					id, err := db.insertLogRow(ctx, tx, c, rows[i].js, rows[i].owner, t, indexed)
					if err != nil {
						return err
					}
					ids[i] = id
				}
			}
			if err := db.insertAttachmentsOf(ctx, tx, ids, logs); err != nil {
				return err
			}
			if !indexed {
				return nil
			}
			subjects := make([]subjectRow, len(logs))
			for i, l := range logs {
				recips = append(recips, recipientRows(ids[i], &l.Message)...)
				subjects[i] = subjectRow{LogID: ids[i], CreatedAt: t, Subject: l.Message.Subject}
			}
			if err := db.insertRecipients(ctx, tx, recips); err != nil {
				return err
			}
			return db.insertSubjects(ctx, tx, subjects)
		})
	})
	if err != nil {
		return fmt.Errorf("enqueue logs: %w", err)
	}
	for i, l := range logs {
		if l.Status == "" {
			l.Status = core.StatusQueued
		}
		if l.NextAttemptAt.IsZero() {
			l.NextAttemptAt = t
		}
		l.ID, l.CreatedAt, l.UpdatedAt = ids[i], t, t
		l.Attempts, l.PhaseAttempts = 0, 0
	}
	return nil
}

// insertChunk bounds the rows of one multi-row INSERT (21 placeholders
// each, far below the protocol's 65,535).
const insertChunk = 100

// autoIncrement caches, per DB, whether a multi-row INSERT gets
// consecutive ids and their step (see consecutiveIDs).
var autoIncrement sync.Map // *DB → autoIncrementMode

type autoIncrementMode struct {
	step int64
	ok   bool
}

// consecutiveIDs reports whether a multi-row INSERT of logs gets
// consecutive ids (first, first+step, ...): on MySQL/MariaDB when
// innodb_autoinc_lock_mode is 0 or 1 ("traditional" or "consecutive",
// MariaDB's default); never on SQLite, where rows go one by one in the
// transaction. An unreadable mode counts as no.
func (db *handle) consecutiveIDs(ctx context.Context, tx *sql.Tx) (int64, bool) {
	if db.dialect != DialectMySQL {
		return 0, false
	}
	if m, ok := autoIncrement.Load(db); ok {
		mode := m.(autoIncrementMode)
		return mode.step, mode.ok
	}
	var lockMode, step int64
	if err := tx.QueryRowContext(ctx, `SELECT @@innodb_autoinc_lock_mode, @@auto_increment_increment`).Scan(&lockMode, &step); err != nil {
		return 0, false
	}
	mode := autoIncrementMode{step: step, ok: lockMode <= 1 && step >= 1}
	autoIncrement.Store(db, mode)
	return mode.step, mode.ok
}

// insertLogRows inserts logs (prepared as insertLogRow takes them) with
// one multi-row INSERT and returns the first row's id.
func (db *handle) insertLogRows(ctx context.Context, tx *sql.Tx, logs []*core.Log, rows []encodedLog, t time.Time, indexed bool) (int64, error) {
	var b strings.Builder
	b.WriteString(`INSERT INTO {prefix}mailsvc_logs
		(status, connection_id, sent_connection_id, source, recipients, subject, text_body, html_body, message,
		 attempts, phase_attempts, used_fallback, simulated, provider_message_id, last_error,
		 next_attempt_at, lease_owner, lease_until, created_at, updated_at, recipients_indexed) VALUES `)
	args := make([]any, 0, 13*len(logs))
	for i, l := range logs {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("(?, ?, NULL, ?, ?, ?, ?, ?, ?, 0, 0, 0, 0, '', '', ?, ?, ?, ?, ?, ?)")
		args = append(args, l.Status, nullInt(l.ConnectionID), l.Source, recipientsText(&l.Message), l.Message.Subject,
			l.Message.Text, l.Message.HTML, rows[i].js, l.NextAttemptAt.UTC().Truncate(time.Microsecond),
			rows[i].owner, NullTime(l.LeaseUntil), t, t, indexed)
	}
	res, err := tx.ExecContext(ctx, db.expand(b.String()), args...)
	if err != nil {
		return 0, err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("read id: %w", err)
	}
	return id, nil
}

// errCommitUnknown marks a failed COMMIT: the transaction may or may not
// have been applied, so its logs must not be inserted again.
var errCommitUnknown = errors.New("commit outcome unknown")

// inBatchTx is inTx, but a failed COMMIT is wrapped with errCommitUnknown.
func (db *handle) inBatchTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return db.runTx(ctx, fn, true)
}

// checkEnqueueStatus applies EnqueueLog's rule on the status of a new log.
func checkEnqueueStatus(l *core.Log) error {
	switch l.Status {
	case "", core.StatusQueued:
		return nil
	case core.StatusSending:
		if l.LeaseOwner == "" || l.LeaseUntil == nil {
			return errors.New("a sending log needs a lease owner and expiry")
		}
		return nil
	}
	return fmt.Errorf("cannot insert a log as %q", l.Status)
}

// encodedLog is a log's message column and lease owner, as inserted.
type encodedLog struct {
	js    string
	owner any
}

// DefaultGroupCommitBatch is the most logs GroupCommit commits at once.
const DefaultGroupCommitBatch = 200

// groupCommitTimeout bounds one group's transaction.
const groupCommitTimeout = 30 * time.Second

// GroupCommit is the store with a group-committing EnqueueLog: concurrent
// calls (SMTP sessions, API requests) are committed together in one
// transaction, so that N messages cost one commit (one log flush) instead
// of N. Each call still returns only once its own log is committed, with
// its own error. A lone call is committed at once, with no added wait:
// the calls that arrive while a group commits form the next group. Every
// other method is the embedded LogService's.
type GroupCommit struct {
	*LogService
	// MaxBatch bounds a group; 0 means DefaultGroupCommitBatch.
	MaxBatch int
	// Groups is how many groups may commit at once (while one waits for
	// its log flush, the next is sent); 0 means DefaultGroupCommitGroups.
	Groups int

	mu      sync.Mutex
	pending []*groupEntry
	running int
}

// DefaultGroupCommitGroups is how many groups commit at once by default.
const DefaultGroupCommitGroups = 2

// groupEntry is one EnqueueLog call waiting for its group.
type groupEntry struct {
	ctx  context.Context
	log  *core.Log
	done chan error
}

// NewGroupCommit returns logs with a group-committing EnqueueLog.
func NewGroupCommit(logs *LogService) *GroupCommit { return &GroupCommit{LogService: logs} }

var _ core.LogStore = (*GroupCommit)(nil)

// EnqueueLog implements core.LogStore: l is committed with the calls
// made meanwhile, and the call returns once that commit is done. ctx
// bounds the wait for a group to start; once its group is committing,
// the call waits for the outcome, so that an accepted message is never
// reported as refused.
func (g *GroupCommit) EnqueueLog(ctx context.Context, l *core.Log) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("enqueue log: %w", err)
	}
	e := &groupEntry{ctx: ctx, log: l, done: make(chan error, 1)}
	g.mu.Lock()
	g.pending = append(g.pending, e)
	groups := g.Groups
	if groups <= 0 {
		groups = DefaultGroupCommitGroups
	}
	if g.running < groups {
		g.running++
		go g.flush()
	}
	g.mu.Unlock()
	return <-e.done
}

// flush commits the pending calls, group after group, until none is left.
func (g *GroupCommit) flush() {
	maxBatch := g.MaxBatch
	if maxBatch <= 0 {
		maxBatch = DefaultGroupCommitBatch
	}
	for {
		g.mu.Lock()
		if len(g.pending) == 0 {
			g.running--
			g.mu.Unlock()
			return
		}
		n := min(len(g.pending), maxBatch)
		group := make([]*groupEntry, n)
		copy(group, g.pending[:n])
		g.pending = append(g.pending[:0], g.pending[n:]...)
		g.mu.Unlock()
		g.commit(group)
	}
}

// commit writes one group. When the group's transaction fails before its
// COMMIT, each log is tried on its own, so that one bad log refuses only
// its own caller.
func (g *GroupCommit) commit(group []*groupEntry) {
	live := group[:0:0]
	for _, e := range group {
		if err := e.ctx.Err(); err != nil {
			e.done <- fmt.Errorf("enqueue log: %w", err)
			continue
		}
		live = append(live, e)
	}
	if len(live) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), groupCommitTimeout)
	defer cancel()
	if len(live) > 1 {
		logs := make([]*core.Log, len(live))
		for i, e := range live {
			logs[i] = e.log
		}
		err := g.LogService.EnqueueLogs(ctx, logs)
		if err == nil || errors.Is(err, errCommitUnknown) {
			// After a failed COMMIT the logs may be queued: trying them
			// again could queue them twice, so every caller hears the
			// error (the client retries, as after any unknown outcome).
			for _, e := range live {
				e.done <- err
			}
			return
		}
	}
	for _, e := range live {
		e.done <- g.LogService.EnqueueLog(ctx, e.log)
	}
}
