package logbody

import (
	"context"
	"fmt"

	"github.com/mailsvc/mailsvc/core"
)

// DefaultBackfillBatch is how many logs one Backfill transaction
// rewrites at most.
const DefaultBackfillBatch = 500

// Backfill applies the log body settings to delivered and failed logs
// that were stored whole: before the modes existed, or imported from
// another plugin (`mailsvc logs redact`). It walks the logs by id, a
// batch at a time: each batch is read without locks and rewritten in one
// short transaction touching only its own rows, so the queue and the
// site go on while it runs, over any number of rows. It is resumable: a
// log it has done has its mode recorded and is not read again, and
// Run can start after the last id a previous run reported.
type Backfill struct {
	Store    core.LogBodyStore
	Policy   Policy
	Redactor *Redactor
	// Batch is how many logs one transaction rewrites; 0 means
	// DefaultBackfillBatch.
	Batch int
	// All also goes over logs that already have a mode: a log kept in
	// full whose mode is now redacted or none, or a redacted one whose
	// mode is now none, gets the stricter mode, and a redacted one is
	// redacted again with the current patterns. A body is never made
	// whole again.
	All bool
}

// BackfillProgress counts a Backfill's work so far.
type BackfillProgress struct {
	// LastID is the highest log id done: a later run may start after it.
	LastID int64 `json:"last_id"`
	// UpTo is the highest log id when the run started; logs stored after
	// are the workers' to keep.
	UpTo int64 `json:"up_to"`
	// Read counts the logs read, Rewritten those whose stored body or
	// mode changed, Redacted the values replaced.
	Read      int `json:"read"`
	Rewritten int `json:"rewritten"`
	Redacted  int `json:"redacted"`
}

// Run processes the logs with an id above after, up to the highest id at
// its start, calling progress (when set) after each batch. On error or
// cancellation the batches done stay done, and the returned progress
// says where to resume.
func (b *Backfill) Run(ctx context.Context, after int64, progress func(BackfillProgress)) (BackfillProgress, error) {
	batch := b.Batch
	if batch <= 0 {
		batch = DefaultBackfillBatch
	}
	p := BackfillProgress{LastID: after}
	var err error
	if p.UpTo, err = b.Store.LastLogID(ctx); err != nil {
		return p, fmt.Errorf("redact stored logs: %w", err)
	}
	for p.LastID < p.UpTo {
		if err := ctx.Err(); err != nil {
			return p, fmt.Errorf("redact stored logs: %w", err)
		}
		logs, err := b.Store.FinalLogsAfter(ctx, p.LastID, batch, !b.All)
		if err != nil {
			return p, fmt.Errorf("redact stored logs: %w", err)
		}
		bodies := map[int64]*core.KeptBody{}
		// A short batch is the last one; a full one goes on after its
		// last log.
		last := p.UpTo
		if len(logs) == batch {
			last = min(logs[len(logs)-1].ID, p.UpTo)
		}
		for _, l := range logs {
			if l.ID > p.UpTo {
				break
			}
			p.Read++
			if k := b.keep(l); k != nil {
				bodies[l.ID] = k
				p.Redacted += k.Redacted
			}
		}
		n, err := b.Store.KeepLogBodies(ctx, bodies)
		if err != nil {
			return p, fmt.Errorf("redact stored logs after %d: %w", p.LastID, err)
		}
		p.Rewritten += n
		p.LastID = last
		if progress != nil {
			progress(p)
		}
	}
	return p, nil
}

// strictness orders the modes: a log's mode only ever moves up.
var strictness = map[string]int{"": 0, core.LogBodyFull: 0, core.LogBodyRedacted: 1, core.LogBodyNone: 2}

// keep returns what l keeps now, or nil when it stays as it is.
func (b *Backfill) keep(l *core.Log) *core.KeptBody {
	mode := b.Policy.ModeFor(l.Source)
	switch {
	case l.BodyMode == "":
	case strictness[mode] < strictness[l.BodyMode], l.BodyMode == core.LogBodyNone:
		return nil
	case mode == l.BodyMode && mode != core.LogBodyRedacted:
		return nil
	}
	k := b.Policy.Keep(&l.Message, l.Source, b.Redactor)
	if !l.AttachmentsKept {
		k.DropAttachments = false
	}
	if l.BodyMode == core.LogBodyRedacted && k.Mode == core.LogBodyRedacted {
		if !k.Changed && !k.DropAttachments {
			return nil
		}
		k.Redacted += l.RedactedCount
	}
	return k
}
