package storetest

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// logContractTests are the contract tests of the log store and queue
// (core.LogStore, core.LogBodyStore): every implementation passes them.
func (s *suite) logContractTests() []struct {
	name string
	fn   func(t *testing.T)
} {
	return []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"LogRoundTrip", s.testLogRoundTrip},
		{"ClaimIsExclusive", s.testClaimExclusive},
		{"ClaimSkipsFutureAndLeased", s.testClaimSkipsFuture},
		{"ExpiredLeaseRequeues", s.testLeaseExpiry},
		{"RecordOutcomes", s.testRecordOutcomes},
		{"LogSearchEscapesWildcards", s.testLogSearch},
		{"QueueStatsAndDelete", s.testQueueStats},
		{"ResendLogs", s.testResend},
		{"PurgeInBatches", s.testPurge},
		{"LogBodies", s.testLogBodies},
		{"ImportLogs", s.testImportLogs},
	}
}

// logTests are the contract tests of package store's log service beyond
// the log store contract: leases, the address index and roll-ups.
func (s *suite) logTests() []struct {
	name string
	fn   func(t *testing.T)
} {
	return []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"AcquireLease", s.testAcquireLease},
		{"SearchRecipientsAndWords", s.testSearchRecipientsAndWords},
		{"SearchAddressParts", s.testSearchAddressParts},
		{"SearchCapped", s.testSearchCapped},
		{"SearchBackfill", s.testSearchBackfill},
		{"SearchDictionaryInTheBackground", s.testSearchDictionaryInTheBackground},
		{"OutcomeRollups", s.testOutcomeRollups},
		{"BridgeRowsBackfill", s.testBridgeRowsBackfill},
	}
}

// Message is a small message, distinct for each i.
func Message(i int) core.Message {
	return core.Message{
		From:    core.Address{Name: "Shop", Email: "shop@example.com"},
		To:      []core.Address{{Name: "Ann", Email: fmt.Sprintf("ann%d@example.com", i)}},
		Subject: fmt.Sprintf("Order %d", i),
		Text:    fmt.Sprintf("Hello %d", i),
	}
}

// Enqueue queues msg from the source "test".
func Enqueue(t *testing.T, db core.LogStore, msg core.Message) *core.Log {
	t.Helper()
	l := &core.Log{Message: msg, Source: "test"}
	if err := db.EnqueueLog(context.Background(), l); err != nil {
		t.Fatalf("EnqueueLog: %v", err)
	}
	return l
}

// Claim claims up to n logs for owner.
func Claim(t *testing.T, db core.LogStore, owner string, n int, lease time.Duration) []*core.Log {
	t.Helper()
	logs, err := db.ClaimLogs(context.Background(), owner, n, lease)
	if err != nil {
		t.Fatalf("ClaimLogs: %v", err)
	}
	return logs
}

func finish(t *testing.T, db LogStore, owner string, l *core.Log, status string) {
	t.Helper()
	conn := int64(1)
	n, err := db.RecordOutcomes(context.Background(), owner, []core.LogOutcome{{
		LogID: l.ID, Status: status, Attempts: 1, PhaseAttempts: 1, SentConnectionID: &conn,
		History: []core.Attempt{{LogID: l.ID, ConnectionID: conn, At: time.Now(), Outcome: core.OutcomeDelivered}},
	}})
	if err != nil || n != 1 {
		t.Fatalf("RecordOutcomes = %d, %v; want 1 applied", n, err)
	}
}

func (s *suite) testLogRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := s.logs(t)
	bin := make([]byte, 256)
	for i := range bin {
		bin[i] = byte(i)
	}
	conn := int64(7)
	msg := core.Message{
		From:    core.Address{Name: "Zoë \"Q\" Shop", Email: "shop@example.com"},
		To:      []core.Address{{Email: "a@example.com"}, {Name: "B", Email: "b@example.com"}},
		Cc:      []core.Address{{Email: "c@example.com"}},
		Bcc:     []core.Address{{Email: "d@example.com"}},
		ReplyTo: []core.Address{{Email: "r@example.com"}},
		Subject: "Ünïcode ✓ subject",
		Text:    "line1\r\nline2 <b>&",
		HTML:    "<p>Hi &amp; bye</p>",
		Headers: []core.Header{{Name: "X-Tag", Value: "1"}, {Name: "X-Tag", Value: "2"}},
		Attachments: []core.Attachment{
			{Filename: "all-bytes.bin", ContentType: "application/octet-stream", Data: bin},
			{Filename: "logo.png", ContentType: "image/png", Data: []byte{0x89, 'P', 'N', 'G', 0}, Inline: true, ContentID: "logo"},
		},
	}
	l := &core.Log{Message: msg, Source: "woocommerce", ConnectionID: &conn}
	if err := db.EnqueueLog(ctx, l); err != nil {
		t.Fatal(err)
	}
	if l.ID == 0 || l.Status != core.StatusQueued || l.CreatedAt.IsZero() {
		t.Fatalf("EnqueueLog set ID %d, status %q, created %v", l.ID, l.Status, l.CreatedAt)
	}
	got, err := db.FindLogByID(ctx, l.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Message, msg) {
		t.Fatalf("message round trip:\n got %+v\nwant %+v", got.Message, msg)
	}
	if got.Status != core.StatusQueued || got.Source != "woocommerce" || got.ConnectionID == nil || *got.ConnectionID != 7 || len(got.History) != 0 {
		t.Fatalf("log = %+v", got)
	}
	_, err = db.FindLogByID(ctx, l.ID+1000)
	WantCode(t, err, core.ENOTFOUND)

	bad := &core.Log{Message: msg, Status: core.StatusDelivered}
	if err := db.EnqueueLog(ctx, bad); err == nil {
		t.Fatal("EnqueueLog accepted a delivered log")
	}
}

func (s *suite) testClaimExclusive(t *testing.T) {
	st := s.factory(t)
	db := st.Logs
	const total = 120
	for i := range total {
		Enqueue(t, db, Message(i))
	}
	// Two claimers on separate handles, as two processes would be.
	other := db
	if st.Reopen != nil {
		other = st.Reopen(t)
	}
	var mu sync.Mutex
	seen := map[int64]string{}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for i, h := range []LogStore{db, other} {
		owner := fmt.Sprintf("claimer-%d", i)
		wg.Go(func() {
			for {
				logs, err := h.ClaimLogs(context.Background(), owner, 7, time.Hour)
				if err != nil {
					errs <- err
					return
				}
				if len(logs) == 0 {
					return
				}
				mu.Lock()
				for _, l := range logs {
					if prev, dup := seen[l.ID]; dup {
						errs <- fmt.Errorf("log %d claimed by %s and %s", l.ID, prev, owner)
					}
					seen[l.ID] = owner
					if l.Status != core.StatusSending || l.LeaseOwner != owner || l.LeaseUntil == nil {
						errs <- fmt.Errorf("claimed log %d: status %q owner %q", l.ID, l.Status, l.LeaseOwner)
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(seen) != total {
		t.Fatalf("claimed %d distinct logs, want %d", len(seen), total)
	}
}

func (s *suite) testClaimSkipsFuture(t *testing.T) {
	ctx := context.Background()
	db := s.logs(t)
	future := &core.Log{Message: Message(1), NextAttemptAt: time.Now().Add(time.Hour)}
	if err := db.EnqueueLog(ctx, future); err != nil {
		t.Fatal(err)
	}
	due := Enqueue(t, db, Message(2))
	got := Claim(t, db, "a", 10, time.Hour)
	if len(got) != 1 || got[0].ID != due.ID {
		t.Fatalf("claimed %v, want only the due log %d", ids(got), due.ID)
	}
	if again := Claim(t, db, "b", 10, time.Hour); len(again) != 0 {
		t.Fatalf("second claim got %v, want nothing (leased / not due)", ids(again))
	}
}

func ids(logs []*core.Log) []int64 {
	out := make([]int64, len(logs))
	for i, l := range logs {
		out[i] = l.ID
	}
	return out
}

func (s *suite) testLeaseExpiry(t *testing.T) {
	ctx := context.Background()
	db := s.logs(t)
	a := Enqueue(t, db, Message(1))
	if got := Claim(t, db, "dead", 1, -time.Second); len(got) != 1 || got[0].ID != a.ID {
		t.Fatalf("claim = %v", ids(got))
	}
	b := Enqueue(t, db, Message(2))
	if got := Claim(t, db, "alive", 1, time.Hour); len(got) != 1 || got[0].ID != b.ID {
		t.Fatalf("claim = %v", ids(got))
	}
	n, err := db.ReleaseExpiredLeases(ctx)
	if err != nil || n != 1 {
		t.Fatalf("ReleaseExpiredLeases = %d, %v; want 1", n, err)
	}
	got := Claim(t, db, "next", 10, time.Hour)
	if len(got) != 1 || got[0].ID != a.ID {
		t.Fatalf("after release claimed %v, want [%d]", ids(got), a.ID)
	}
	// The dead owner's late outcome is not applied over the new lease.
	if n, err := db.RecordOutcomes(ctx, "dead", []core.LogOutcome{{LogID: a.ID, Status: core.StatusDelivered}}); err != nil || n != 0 {
		t.Fatalf("stale RecordOutcomes = %d, %v; want 0 applied", n, err)
	}
	// Extending a lease works only for its owner.
	if n, err := db.ExtendLeases(ctx, "next", []int64{a.ID, b.ID}, time.Hour); err != nil || n != 1 {
		t.Fatalf("ExtendLeases = %d, %v; want 1", n, err)
	}
}

func (s *suite) testRecordOutcomes(t *testing.T) {
	ctx := context.Background()
	db := s.logs(t)
	var logs []*core.Log
	for i := range 3 {
		logs = append(logs, Enqueue(t, db, Message(i)))
	}
	Claim(t, db, "w", 10, time.Hour)
	c1, c2 := int64(1), int64(2)
	at := time.Now().UTC().Truncate(time.Millisecond)
	outs := []core.LogOutcome{
		{LogID: logs[0].ID, Status: core.StatusDelivered, Attempts: 2, PhaseAttempts: 1, UsedFallback: true,
			SentConnectionID: &c2, ProviderMessageID: "pm-1", History: []core.Attempt{
				{LogID: logs[0].ID, ConnectionID: c2, At: at, Outcome: core.OutcomeDelivered, Response: "250 ok", ProviderMessageID: "pm-1", DurationMS: 12},
			}},
		{LogID: logs[1].ID, Status: core.StatusQueued, NextAttemptAt: time.Now().Add(time.Hour), Attempts: 1, PhaseAttempts: 1,
			SentConnectionID: &c1, LastError: "451 try later", History: []core.Attempt{
				{LogID: logs[1].ID, ConnectionID: c1, At: at, Outcome: core.OutcomeTemporary, Error: "451 try later"},
			}},
		{LogID: logs[2].ID, Status: core.StatusDelivered, Delete: true, History: []core.Attempt{
			{LogID: logs[2].ID, ConnectionID: c1, At: at, Outcome: core.OutcomeDelivered},
		}},
	}
	if n, err := db.RecordOutcomes(ctx, "other", outs); err != nil || n != 0 {
		t.Fatalf("RecordOutcomes by a non-owner = %d, %v; want 0", n, err)
	}
	if n, err := db.RecordOutcomes(ctx, "w", outs); err != nil || n != 3 {
		t.Fatalf("RecordOutcomes = %d, %v; want 3", n, err)
	}
	got, err := db.FindLogByID(ctx, logs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != core.StatusDelivered || got.ProviderMessageID != "pm-1" || !got.UsedFallback ||
		got.Attempts != 2 || got.DeliveredAt == nil || *got.SentConnectionID != 2 || got.LeaseOwner != "" {
		t.Fatalf("delivered log = %+v", got)
	}
	want := outs[0].History[0]
	if len(got.History) != 1 {
		t.Fatalf("history = %+v", got.History)
	}
	h := got.History[0]
	h.ID = 0
	if !h.At.Equal(want.At) {
		t.Fatalf("attempt time %v, want %v", h.At, want.At)
	}
	h.At = want.At
	if !reflect.DeepEqual(h, want) {
		t.Fatalf("attempt = %+v, want %+v", h, want)
	}
	retry, err := db.FindLogByID(ctx, logs[1].ID)
	if err != nil {
		t.Fatal(err)
	}
	if retry.Status != core.StatusQueued || retry.LastError != "451 try later" || retry.DeliveredAt != nil || len(retry.History) != 1 {
		t.Fatalf("retried log = %+v", retry)
	}
	if again := Claim(t, db, "w", 10, time.Hour); len(again) != 0 {
		t.Fatalf("a retry due in an hour was claimed: %v", ids(again))
	}
	_, err = db.FindLogByID(ctx, logs[2].ID)
	WantCode(t, err, core.ENOTFOUND)
}

func (s *suite) testLogSearch(t *testing.T) {
	ctx := context.Background()
	db := s.logs(t)
	subjects := []string{"100% sure", "100 percent", "snake_case", "snakeXcase", "bang! yes", "plain"}
	byID := map[int64]string{}
	for i, subj := range subjects {
		m := Message(i)
		m.Subject = subj
		if subj == "plain" {
			m.To = []core.Address{{Name: "Ziggy Stardust", Email: "ziggy@mars.example"}}
			m.HTML = "<p>Needle in HTML</p>"
		}
		l := Enqueue(t, db, m)
		byID[l.ID] = subj
	}
	tests := []struct {
		search string
		want   []string
	}{
		{"%", []string{"100% sure"}},
		{"_", []string{"snake_case"}},
		{"e_c", nil}, // not the start of a word
		{"snake_c", []string{"snake_case"}},
		{"!", []string{"bang! yes"}},
		{"SURE", []string{"100% sure"}},
		{"100", []string{"100 percent", "100% sure"}},
		{"perc", []string{"100 percent"}},
		{"Ziggy@Mars.Example", []string{"plain"}},
		// A partial address, a recipient's name and the bodies are not
		// searched.
		{"ziggy@mars", nil},
		{"Stardust", nil},
		{"needle", nil},
		{"Hello 3", nil},
		{"nothing-matches", nil},
	}
	for _, tt := range tests {
		t.Run(tt.search, func(t *testing.T) {
			logs, total, err := db.FindLogs(ctx, core.LogFilter{Search: tt.search})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range logs {
				got = append(got, byID[l.ID])
			}
			sort.Strings(got)
			if !slices.Equal(got, tt.want) || total != len(tt.want) {
				t.Fatalf("search %q = %v (total %d), want %v", tt.search, got, total, tt.want)
			}
		})
	}
	// Paging: newest first, total before paging.
	page, total, err := db.FindLogs(ctx, core.LogFilter{Offset: 1, Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	if total != len(subjects) || len(page) != 2 || byID[page[0].ID] != "bang! yes" || byID[page[1].ID] != "snakeXcase" {
		t.Fatalf("page = %v total %d", ids(page), total)
	}
	queued, total, err := db.FindLogs(ctx, core.LogFilter{Status: core.StatusFailed})
	if err != nil || total != 0 || len(queued) != 0 {
		t.Fatalf("failed filter = %v, %d, %v", ids(queued), total, err)
	}
}

func (s *suite) testQueueStats(t *testing.T) {
	ctx := context.Background()
	db := s.logs(t)
	var logs []*core.Log
	for i := range 6 {
		logs = append(logs, Enqueue(t, db, Message(i)))
	}
	claimed := Claim(t, db, "w", 3, time.Hour)
	finish(t, db, "w", claimed[0], core.StatusDelivered)
	finish(t, db, "w", claimed[1], core.StatusFailed)
	st, err := db.QueueStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (core.QueueStats{Queued: 3, Sending: 1, Failed: 1, Delivered: 1}); st != want {
		t.Fatalf("stats = %+v, want %+v", st, want)
	}
	n, err := db.DeleteLogs(ctx, []int64{logs[4].ID, logs[5].ID, 99999})
	if err != nil || n != 2 {
		t.Fatalf("DeleteLogs = %d, %v; want 2", n, err)
	}
	if n, err := db.DeleteLogs(ctx, nil); err != nil || n != 0 {
		t.Fatalf("DeleteLogs(nil) = %d, %v", n, err)
	}
	st, _ = db.QueueStats(ctx)
	if st.Queued != 1 {
		t.Fatalf("queued after delete = %d, want 1", st.Queued)
	}
}

func (s *suite) testResend(t *testing.T) {
	ctx := context.Background()
	db := s.logs(t)
	conn := int64(3)
	a := &core.Log{Message: Message(1), ConnectionID: &conn}
	if err := db.EnqueueLog(ctx, a); err != nil {
		t.Fatal(err)
	}
	Claim(t, db, "w", 1, time.Hour)
	finish(t, db, "w", a, core.StatusFailed)
	b := Enqueue(t, db, Message(2))
	n, err := db.ResendLogs(ctx, []int64{a.ID, b.ID})
	if err != nil || n != 1 {
		t.Fatalf("ResendLogs = %d, %v; want 1 (the queued log is left alone)", n, err)
	}
	got, err := db.FindLogByID(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != core.StatusQueued || got.Attempts != 0 || got.PhaseAttempts != 0 ||
		got.ConnectionID == nil || *got.ConnectionID != 3 || len(got.History) != 1 {
		t.Fatalf("resent log = %+v", got)
	}
	// Each resend by hand is counted, and a claim reads the count (the
	// message's idempotency key differs from the first sending's).
	for want := 1; want <= 2; want++ {
		var resent *core.Log
		for _, l := range Claim(t, db, "w", 2, time.Hour) {
			if l.ID == a.ID {
				resent = l
			}
		}
		if resent == nil || resent.Resends != want {
			t.Fatalf("claim after resend %d: %+v; want log %d with Resends %d", want, resent, a.ID, want)
		}
		finish(t, db, "w", resent, core.StatusDelivered)
		if want == 1 {
			if n, err := db.ResendLogs(ctx, []int64{a.ID}); err != nil || n != 1 {
				t.Fatalf("ResendLogs again = %d, %v", n, err)
			}
		}
	}
}

func (s *suite) testPurge(t *testing.T) {
	ctx := context.Background()
	db := s.logs(t)
	var old []*core.Log
	for i := range 7 {
		old = append(old, Enqueue(t, db, Message(i)))
	}
	// An old message still waiting for a retry: never purged.
	waiting := &core.Log{Message: Message(7), NextAttemptAt: time.Now().Add(time.Hour)}
	if err := db.EnqueueLog(ctx, waiting); err != nil {
		t.Fatal(err)
	}
	old = append(old, waiting)
	claimed := Claim(t, db, "w", 7, time.Hour)
	for i, l := range claimed {
		status := core.StatusDelivered
		if i%2 == 1 {
			status = core.StatusFailed
		}
		finish(t, db, "w", l, status)
	}
	time.Sleep(20 * time.Millisecond)
	cut := time.Now()
	time.Sleep(20 * time.Millisecond)
	newer := Enqueue(t, db, Message(100))
	Claim(t, db, "w", 1, time.Hour)
	finish(t, db, "w", newer, core.StatusDelivered)

	n, err := db.PurgeLogs(ctx, cut, 3)
	if err != nil || n != 7 {
		t.Fatalf("PurgeLogs = %d, %v; want 7", n, err)
	}
	logs, total, err := db.FindLogs(ctx, core.LogFilter{})
	if err != nil {
		t.Fatal(err)
	}
	got := ids(logs)
	sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
	if total != 2 || !slices.Equal(got, []int64{old[7].ID, newer.ID}) {
		t.Fatalf("left after purge %v, want the old queued log %d and the newer %d", got, old[7].ID, newer.ID)
	}
	if n, err := db.PurgeLogs(ctx, cut, 3); err != nil || n != 0 {
		t.Fatalf("second PurgeLogs = %d, %v", n, err)
	}
}

func (s *suite) testAcquireLease(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	steps := []struct {
		owner string
		ttl   time.Duration
		want  bool
	}{
		{"a", time.Hour, true},
		{"b", time.Hour, false},
		{"a", time.Hour, true},
		{"a", -time.Second, true}, // a renews into the past: expired
		{"b", time.Hour, true},
		{"a", time.Hour, false},
	}
	for i, st := range steps {
		got, err := db.Leases().AcquireLease(ctx, "job", st.owner, st.ttl)
		if err != nil {
			t.Fatal(err)
		}
		if got != st.want {
			t.Fatalf("step %d: AcquireLease(%s) = %v, want %v", i, st.owner, got, st.want)
		}
	}
}
