package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// captureTests returns the contract tests of the staging guard's part of
// the store.
func (s *suite) captureTests() []struct {
	name string
	fn   func(t *testing.T)
} {
	return []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"FingerprintFirstRecordWins", s.testFingerprintFirstRecordWins},
		{"ReleaseCapturedOnce", s.testReleaseCapturedOnce},
		{"CapturedKeptByErase", s.testCapturedKeptByErase},
	}
}

// testFingerprintFirstRecordWins: of processes recording at once, one
// fingerprint stands; replace overwrites it.
func (s *suite) testFingerprintFirstRecordWins(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	if f, err := db.Capture().LiveFingerprint(ctx); err != nil || f != nil {
		t.Fatalf("LiveFingerprint on a new database = %+v, %v", f, err)
	}
	var wg sync.WaitGroup
	got := make([]core.Fingerprint, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := db.Capture().RecordFingerprint(ctx, core.Fingerprint{SiteURL: "https://site.example", DBName: "db", DBHost: string(rune('a' + i))}, false)
			if err != nil {
				t.Error(err)
			}
			got[i] = f
		}()
	}
	wg.Wait()
	for _, f := range got[1:] {
		if f != got[0] {
			t.Fatalf("concurrent first records disagree: %+v vs %+v", f, got[0])
		}
	}
	adopted := core.Fingerprint{SiteURL: "https://copy.example", Home: "https://copy.example", DBName: "db2", DBHost: "h", TablePrefix: "wp_"}
	if f, err := db.Capture().RecordFingerprint(ctx, adopted, true); err != nil || f != adopted {
		t.Fatalf("replace = %+v, %v", f, err)
	}
	if f, err := db.Capture().LiveFingerprint(ctx); err != nil || f == nil || *f != adopted {
		t.Fatalf("after replace: %+v, %v", f, err)
	}
}

// testReleaseCapturedOnce: captured logs are released once each, by ids
// or all, even by concurrent callers; a released log is claimed with its
// mark, and neither counts nor purges as queued backlog.
func (s *suite) testReleaseCapturedOnce(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	var ids []int64
	for i := range 5 {
		l := &core.Log{Message: core.Message{From: core.Address{Email: "a@example.com"}, To: []core.Address{{Email: "b@example.com"}}, Subject: "captured", Text: string(rune('a' + i))}}
		if err := db.Logs().EnqueueLog(ctx, l); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, l.ID)
	}
	claimed, err := db.Logs().ClaimLogs(ctx, "w", 10, time.Minute)
	if err != nil || len(claimed) != 5 {
		t.Fatalf("claim = %d, %v", len(claimed), err)
	}
	outs := make([]core.LogOutcome, len(claimed))
	for i, l := range claimed {
		if l.CaptureReleased {
			t.Fatal("a new log is marked released")
		}
		outs[i] = core.LogOutcome{LogID: l.ID, Status: core.StatusCaptured, History: []core.Attempt{{LogID: l.ID, At: time.Now(), Outcome: core.OutcomeCaptured}}}
	}
	if n, err := db.Logs().RecordOutcomes(ctx, "w", outs); err != nil || n != 5 {
		t.Fatalf("record captured = %d, %v", n, err)
	}
	if n, err := db.Capture().CountCaptured(ctx); err != nil || n != 5 {
		t.Fatalf("CountCaptured = %d, %v", n, err)
	}
	if st, err := db.Logs().QueueStats(ctx); err != nil || st.Queued+st.Sending+st.Failed+st.Delivered != 0 {
		t.Fatalf("queue stats count captured logs: %+v, %v", st, err)
	}
	if old, err := db.Logs().OldestQueuedAt(ctx); err != nil || old != nil {
		t.Fatalf("OldestQueuedAt counts captured logs: %v, %v", old, err)
	}
	if list, total, err := db.Logs().FindLogs(ctx, core.LogFilter{Status: core.StatusCaptured}); err != nil || total != 5 || len(list) != 5 {
		t.Fatalf("FindLogs(captured) = %d/%d, %v", len(list), total, err)
	}

	// Four callers release the first two at once: two moves in all.
	var wg sync.WaitGroup
	var mu sync.Mutex
	moved := 0
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := db.Capture().ReleaseCaptured(ctx, ids[:2], false)
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			moved += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	if moved != 2 {
		t.Fatalf("concurrent releases of 2 logs moved %d", moved)
	}
	again, err := db.Logs().ClaimLogs(ctx, "w2", 10, time.Minute)
	if err != nil || len(again) != 2 {
		t.Fatalf("claim released = %d, %v", len(again), err)
	}
	for _, l := range again {
		if !l.CaptureReleased {
			t.Fatalf("released log %d claimed without its mark", l.ID)
		}
	}
	if n, err := db.Capture().ReleaseCaptured(ctx, nil, true); err != nil || n != 3 {
		t.Fatalf("release all = %d, %v", n, err)
	}
	if n, err := db.Capture().ReleaseCaptured(ctx, nil, true); err != nil || n != 0 {
		t.Fatalf("a second release all = %d, %v", n, err)
	}
	// A resend of a delivered log clears the mark.
	if _, err := db.Logs().RecordOutcomes(ctx, "w2", []core.LogOutcome{{LogID: again[0].ID, Status: core.StatusDelivered, History: []core.Attempt{{LogID: again[0].ID, At: time.Now(), Outcome: core.OutcomeDelivered}}}}); err != nil {
		t.Fatal(err)
	}
	if n, err := db.Logs().ResendLogs(ctx, []int64{again[0].ID}); err != nil || n != 1 {
		t.Fatalf("resend = %d, %v", n, err)
	}
	resent, err := db.Logs().ClaimLogs(ctx, "w3", 10, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range resent {
		if l.ID == again[0].ID && l.CaptureReleased {
			t.Fatal("a resent log kept the released mark")
		}
	}
	// Captured logs are purged with the retention, like final ones.
	for _, l := range resent {
		_, _ = db.Logs().RecordOutcomes(ctx, "w3", []core.LogOutcome{{LogID: l.ID, Status: core.StatusCaptured}})
	}
	if n, err := db.Logs().PurgeLogs(ctx, time.Now().Add(time.Hour), 2); err != nil || n < len(resent) {
		t.Fatalf("purge = %d, %v (captured: %d)", n, err, len(resent))
	}
	if n, _ := db.Capture().CountCaptured(ctx); n != 0 {
		t.Fatalf("%d captured logs left after the purge", n)
	}
}

// testCapturedKeptByErase: a personal data erase keeps a captured message
// (it may still be released and sent) and reports it as pending.
func (s *suite) testCapturedKeptByErase(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	l := &core.Log{Message: core.Message{From: core.Address{Email: "site@example.com"}, To: []core.Address{{Email: "pat@example.com"}}, Subject: "held", Text: "b"}}
	if err := db.Logs().EnqueueLog(ctx, l); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Logs().ClaimLogs(ctx, "w", 1, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Logs().RecordOutcomes(ctx, "w", []core.LogOutcome{{LogID: l.ID, Status: core.StatusCaptured}}); err != nil {
		t.Fatal(err)
	}
	erased, pending, err := db.Privacy().EraseLogsNaming(ctx, "pat@example.com", core.ErasedAddress, 10)
	if err != nil || erased != 0 || pending != 1 {
		t.Fatalf("erase = %d erased, %d pending, %v; want 0 and 1", erased, pending, err)
	}
	got, err := db.Logs().FindLogByID(ctx, l.ID)
	if err != nil || got.Message.To[0].Email != "pat@example.com" {
		t.Fatalf("the captured log after the erase: %+v, %v", got, err)
	}
}
