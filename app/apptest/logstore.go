package apptest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/mailsvc/mailsvc/core"
)

// LogStore is an in-memory core.LogStore with the real stores' claim,
// lease and outcome rules.
type LogStore struct {
	mu       sync.Mutex
	nextID   int64
	nextAtID int64
	rows     map[int64]*core.Log
	// buckets are the outcome roll-ups, grown by RecordOutcomes and
	// ImportLogs and never lowered, as in the real stores.
	buckets map[outcomeKey]int64
}

// outcomeKey is one roll-up counter.
type outcomeKey struct {
	start  time.Time
	conn   int64
	status string
}

// NewLogStore returns an empty store.
func NewLogStore() *LogStore {
	return &LogStore{rows: map[int64]*core.Log{}, buckets: map[outcomeKey]int64{}}
}

func cloneLog(l *core.Log) *core.Log {
	out := *l
	out.History = append([]core.Attempt(nil), l.History...)
	return &out
}

// EnqueueLog implements core.LogStore.
func (s *LogStore) EnqueueLog(_ context.Context, l *core.Log) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch l.Status {
	case "":
		l.Status = core.StatusQueued
	case core.StatusQueued:
	case core.StatusSending:
		if l.LeaseOwner == "" || l.LeaseUntil == nil {
			return errors.New("enqueue log: a sending log needs a lease")
		}
	default:
		return fmt.Errorf("enqueue log: cannot insert a log as %q", l.Status)
	}
	now := time.Now().UTC()
	s.nextID++
	l.ID = s.nextID
	l.CreatedAt, l.UpdatedAt = now, now
	if l.NextAttemptAt.IsZero() {
		l.NextAttemptAt = now
	}
	l.Attempts, l.PhaseAttempts = 0, 0
	l.History = nil
	l.BodyMode, l.RedactedCount, l.AttachmentsKept = "", 0, true
	s.rows[l.ID] = cloneLog(l)
	return nil
}

// ClaimLogs implements core.LogStore.
func (s *LogStore) ClaimLogs(_ context.Context, owner string, limit int, lease time.Duration) ([]*core.Log, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now().UTC()
	var due []*core.Log
	for _, l := range s.rows {
		if l.Status == core.StatusQueued && !l.NextAttemptAt.After(now) {
			due = append(due, l)
		}
	}
	sort.Slice(due, func(i, j int) bool {
		if !due[i].NextAttemptAt.Equal(due[j].NextAttemptAt) {
			return due[i].NextAttemptAt.Before(due[j].NextAttemptAt)
		}
		return due[i].ID < due[j].ID
	})
	if len(due) > limit {
		due = due[:limit]
	}
	out := make([]*core.Log, 0, len(due))
	until := now.Add(lease)
	for _, l := range due {
		l.Status, l.LeaseOwner, l.LeaseUntil, l.UpdatedAt = core.StatusSending, owner, &until, now
		c := cloneLog(l)
		c.History = nil
		out = append(out, c)
	}
	return out, nil
}

// ExtendLeases implements core.LogStore.
func (s *LogStore) ExtendLeases(_ context.Context, owner string, ids []int64, lease time.Duration) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	until := time.Now().UTC().Add(lease)
	for _, id := range ids {
		if l, ok := s.rows[id]; ok && l.Status == core.StatusSending && l.LeaseOwner == owner {
			l.LeaseUntil = &until
			n++
		}
	}
	return n, nil
}

// ReleaseExpiredLeases implements core.LogStore.
func (s *LogStore) ReleaseExpiredLeases(context.Context) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now().UTC()
	n := 0
	for _, l := range s.rows {
		if l.Status == core.StatusSending && l.LeaseUntil != nil && l.LeaseUntil.Before(now) {
			l.Status, l.LeaseOwner, l.LeaseUntil, l.NextAttemptAt = core.StatusQueued, "", nil, now
			n++
		}
	}
	return n, nil
}

// RecordOutcomes implements core.LogStore.
func (s *LogStore) RecordOutcomes(_ context.Context, owner string, outs []core.LogOutcome) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now().UTC()
	n := 0
	for _, o := range outs {
		l, ok := s.rows[o.LogID]
		if !ok || l.Status != core.StatusSending || l.LeaseOwner != owner {
			continue
		}
		n++
		s.countOutcome(now, o.SentConnectionID, o.Status)
		if o.Status == core.StatusDelivered && o.Recipients.Count(core.RecipientRefused) > 0 {
			s.countOutcome(now, o.SentConnectionID, core.OutcomeCountPartial)
		}
		if o.Delete {
			delete(s.rows, o.LogID)
			continue
		}
		l.Status = o.Status
		l.NextAttemptAt = o.NextAttemptAt
		if l.NextAttemptAt.IsZero() {
			l.NextAttemptAt = now
		}
		l.Attempts, l.PhaseAttempts = o.Attempts, o.PhaseAttempts
		l.UsedFallback, l.Simulated = o.UsedFallback, o.Simulated
		l.SentConnectionID = o.SentConnectionID
		l.ProviderMessageID, l.LastError = o.ProviderMessageID, o.LastError
		if o.Recipients != nil {
			l.SetRecipients(o.Recipients)
		}
		l.LeaseOwner, l.LeaseUntil, l.UpdatedAt = "", nil, now
		l.DeliveredAt = nil
		if o.Status == core.StatusDelivered {
			l.DeliveredAt = &now
		}
		for _, a := range o.History {
			s.nextAtID++
			a.ID = s.nextAtID
			l.History = append(l.History, a)
		}
		if o.Body != nil && (o.Status == core.StatusDelivered || o.Status == core.StatusFailed) {
			keepBody(l, o.Body)
		}
	}
	return n, nil
}

// FindLogByID implements core.LogStore.
func (s *LogStore) FindLogByID(_ context.Context, id int64) (*core.Log, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out, err := rowByID(s.rows, id, cloneLog, "Log %d not found.")
	if err != nil {
		return nil, err
	}
	if out.History == nil {
		out.History = []core.Attempt{}
	}
	return out, nil
}

// logMatches applies the stores' search rule: an address matches a To,
// Cc or Bcc recipient exactly (ignoring case); other terms match a subject
// with a word starting with each of the term's words of three letters or
// more and, unless the term is only such words, that contains the term as
// typed (ignoring case).
func logMatches(l *core.Log, search string) bool {
	term := strings.ToLower(strings.TrimSpace(search))
	if core.SearchIsAddress(term) {
		for _, a := range l.Message.Recipients() {
			if strings.ToLower(strings.TrimSpace(a.Email)) == term {
				return true
			}
		}
		return false
	}
	subject := strings.ToLower(l.Message.Subject)
	if !onlyWords(term) && !strings.Contains(subject, term) {
		return false
	}
	var subjectWords []string
	for _, w := range words(subject) {
		subjectWords = append(subjectWords, w)
		subjectWords = append(subjectWords, strings.Split(w, "_")...)
	}
	for _, w := range words(term) {
		if len([]rune(w)) < 3 {
			continue
		}
		found := false
		for _, sw := range subjectWords {
			found = found || strings.HasPrefix(sw, w)
		}
		if !found {
			return false
		}
	}
	return true
}

// onlyWords reports whether term is words of three or more letters and
// digits separated by spaces: the stores answer those from the full-text
// index alone, in any order, without matching the term as typed.
func onlyWords(term string) bool {
	fields := strings.Fields(term)
	for _, f := range fields {
		if len([]rune(f)) < 3 {
			return false
		}
		for _, r := range f {
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
				return false
			}
		}
	}
	return len(fields) > 0
}

// words splits s into runs of letters, digits and underscores.
func words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' })
}

// FindLogs implements core.LogStore.
func (s *LogStore) FindLogs(_ context.Context, f core.LogFilter) ([]*core.Log, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var all []*core.Log
	for _, l := range s.rows {
		if f.Status != "" && l.Status != f.Status {
			continue
		}
		if !f.CreatedFrom.IsZero() && l.CreatedAt.Before(f.CreatedFrom) {
			continue
		}
		if !f.CreatedBefore.IsZero() && !l.CreatedAt.Before(f.CreatedBefore) {
			continue
		}
		if strings.TrimSpace(f.Search) != "" && !logMatches(l, f.Search) {
			continue
		}
		c := cloneLog(l)
		c.History = nil
		all = append(all, c)
	}
	sort.Slice(all, func(i, j int) bool {
		if !all[i].CreatedAt.Equal(all[j].CreatedAt) {
			return all[i].CreatedAt.After(all[j].CreatedAt)
		}
		return all[i].ID > all[j].ID
	})
	total := len(all)
	if f.CountUpTo > 0 && total > f.CountUpTo {
		total = f.CountUpTo + 1
	}
	if f.Offset >= len(all) {
		return nil, total, nil
	}
	all = all[max(f.Offset, 0):]
	if f.Limit > 0 && f.Limit < len(all) {
		all = all[:f.Limit]
	}
	return all, total, nil
}

// PendingCounts returns the queued and sending counts of QueueStats.
func (s *LogStore) PendingCounts(ctx context.Context) (core.QueueStats, error) {
	st, err := s.QueueStats(ctx)
	return core.QueueStats{Queued: st.Queued, Sending: st.Sending}, err
}

// QueueStats implements core.LogStore.
func (s *LogStore) QueueStats(context.Context) (core.QueueStats, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var st core.QueueStats
	for _, l := range s.rows {
		switch l.Status {
		case core.StatusQueued:
			st.Queued++
		case core.StatusSending:
			st.Sending++
		case core.StatusFailed:
			st.Failed++
		case core.StatusDelivered:
			st.Delivered++
		}
	}
	return st, nil
}

// DeleteLogs implements core.LogStore.
func (s *LogStore) DeleteLogs(_ context.Context, ids []int64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return deleteRows(s.rows, ids), nil
}

// ResendLogs implements core.LogStore.
func (s *LogStore) ResendLogs(_ context.Context, ids []int64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now().UTC()
	n := 0
	for _, id := range ids {
		l, ok := s.rows[id]
		if !ok || (l.Status != core.StatusDelivered && l.Status != core.StatusFailed) || !l.Resendable() {
			continue
		}
		l.Status, l.NextAttemptAt, l.UpdatedAt = core.StatusQueued, now, now
		l.BodyMode = ""
		l.Attempts, l.PhaseAttempts, l.UsedFallback, l.Simulated = 0, 0, false, false
		l.ProviderMessageID, l.LastError, l.DeliveredAt = "", "", nil
		l.CaptureReleased = false
		l.Resends++
		l.SetRecipients(nil)
		n++
	}
	return n, nil
}

// PurgeLogs implements core.LogStore.
func (s *LogStore) PurgeLogs(_ context.Context, before time.Time, _ int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id, l := range s.rows {
		if (l.Status == core.StatusDelivered || l.Status == core.StatusFailed || l.Status == core.StatusCaptured) && l.CreatedAt.Before(before) {
			delete(s.rows, id)
			n++
		}
	}
	return n, nil
}

// OldestQueuedAt implements core.LogStore.
func (s *LogStore) OldestQueuedAt(context.Context) (*time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var oldest *time.Time
	for _, l := range s.rows {
		if l.Status == core.StatusQueued && (oldest == nil || l.CreatedAt.Before(*oldest)) {
			t := l.CreatedAt
			oldest = &t
		}
	}
	return oldest, nil
}

// SetCreatedAt backdates a log, for retention tests.
func (s *LogStore) SetCreatedAt(id int64, t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.rows[id]; ok {
		l.CreatedAt = t
	}
}

// MakeDue makes a queued log due now, as if its retry delay had passed.
func (s *LogStore) MakeDue(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.rows[id]; ok {
		l.NextAttemptAt = time.Now().UTC().Add(-time.Second)
	}
}

// keepBody applies a kept body to a stored log, as the store's outcome
// write does.
func keepBody(l *core.Log, b *core.KeptBody) {
	l.BodyMode, l.RedactedCount = b.Mode, b.Redacted
	if b.Changed {
		l.Message.Text, l.Message.HTML = b.Text, b.HTML
	}
	if b.DropAttachments && len(l.Message.Attachments) > 0 {
		l.Message.Attachments = append([]core.Attachment(nil), l.Message.Attachments...)
		for i := range l.Message.Attachments {
			a := &l.Message.Attachments[i]
			a.Size = max(a.Size, len(a.Data))
			a.Data = nil
		}
		l.AttachmentsKept = false
	}
}

var _ core.LogBodyStore = (*LogStore)(nil)

// FinalLogsAfter implements core.LogBodyStore.
func (s *LogStore) FinalLogsAfter(_ context.Context, afterID int64, limit int, pendingOnly bool) ([]*core.Log, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*core.Log
	for _, l := range s.rows {
		if l.ID > afterID && (l.Status == core.StatusDelivered || l.Status == core.StatusFailed) && (!pendingOnly || l.BodyMode == "") {
			c := cloneLog(l)
			c.History = nil
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// LastLogID implements core.LogBodyStore.
func (s *LogStore) LastLogID(context.Context) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var last int64
	for id := range s.rows {
		last = max(last, id)
	}
	return last, nil
}

// KeepLogBodies implements core.LogBodyStore.
func (s *LogStore) KeepLogBodies(_ context.Context, bodies map[int64]*core.KeptBody) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id, b := range bodies {
		if l, ok := s.rows[id]; ok && (l.Status == core.StatusDelivered || l.Status == core.StatusFailed) {
			keepBody(l, b)
			n++
		}
	}
	return n, nil
}

// ReleaseCaptured is core.CaptureStore's ReleaseCaptured.
func (s *LogStore) ReleaseCaptured(_ context.Context, ids []int64, all bool) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now().UTC()
	want := map[int64]bool{}
	for _, id := range ids {
		want[id] = true
	}
	n := 0
	for id, l := range s.rows {
		if l.Status != core.StatusCaptured || (!all && !want[id]) {
			continue
		}
		l.Status, l.NextAttemptAt, l.UpdatedAt, l.CaptureReleased = core.StatusQueued, now, now, true
		n++
	}
	return n, nil
}

// CountCaptured is core.CaptureStore's CountCaptured.
func (s *LogStore) CountCaptured(context.Context) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, l := range s.rows {
		if l.Status == core.StatusCaptured {
			n++
		}
	}
	return n, nil
}
