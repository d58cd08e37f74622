package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/core"
)

// floodTests returns the contract tests of the flood guard's part of the
// store.
func (s *suite) floodTests() []struct {
	name string
	fn   func(t *testing.T)
} {
	return []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"HeldReleasedOrDiscardedOnce", s.testHeldReleasedOrDiscardedOnce},
		{"SourceVolumes", s.testSourceVolumes},
	}
}

// holdLogs queues n logs from source, claims them and records them held.
func holdLogs(t *testing.T, db *store.DB, source string, n int) []int64 {
	t.Helper()
	ctx := context.Background()
	var ids []int64
	for i := range n {
		l := &core.Log{Source: source, Message: core.Message{From: core.Address{Email: "a@example.com"},
			To: []core.Address{{Email: "b@example.com"}}, Subject: "held", Text: string(rune('a' + i))}}
		if err := db.Logs().EnqueueLog(ctx, l); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, l.ID)
	}
	claimed, err := db.Logs().ClaimLogs(ctx, "w", n, time.Minute)
	if err != nil || len(claimed) != n {
		t.Fatalf("claim = %d, %v", len(claimed), err)
	}
	outs := make([]core.LogOutcome, len(claimed))
	for i, l := range claimed {
		if l.FloodReleased {
			t.Fatal("a new log is marked released from the flood guard")
		}
		outs[i] = core.LogOutcome{LogID: l.ID, Status: core.StatusHeld, History: []core.Attempt{{LogID: l.ID, At: time.Now(), Outcome: core.OutcomeHeld}}}
	}
	if got, err := db.Logs().RecordOutcomes(ctx, "w", outs); err != nil || got != n {
		t.Fatalf("record held = %d, %v", got, err)
	}
	return ids
}

// testHeldReleasedOrDiscardedOnce: held logs are neither backlog nor
// failures nor purged; concurrent releases and discards move each once
// (a released log is claimed with its mark, a discarded one failed with
// its error, the bridge's wp_mail_failed written for it).
func (s *suite) testHeldReleasedOrDiscardedOnce(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	ids := holdLogs(t, db, core.FloodSourceCore, 6)
	if n, err := db.Flood().CountHeld(ctx); err != nil || n != 6 {
		t.Fatalf("CountHeld = %d, %v", n, err)
	}
	if st, err := db.Logs().QueueStats(ctx); err != nil || st.Queued+st.Sending+st.Failed+st.Delivered != 0 {
		t.Fatalf("queue stats count held logs: %+v, %v", st, err)
	}
	if list, total, err := db.Logs().FindLogs(ctx, core.LogFilter{Status: core.StatusHeld}); err != nil || total != 6 || len(list) != 6 {
		t.Fatalf("FindLogs(held) = %d/%d, %v", len(list), total, err)
	}
	if n, err := db.Logs().PurgeLogs(ctx, time.Now().Add(time.Hour), 10); err != nil || n != 0 {
		t.Fatalf("purge of held logs = %d, %v; want none", n, err)
	}
	if err := db.Gorm().Exec("UPDATE "+db.TableName("logs")+" SET host_hooks = ? WHERE id IN ?", core.HostHookFlagWPMailFailed, ids).Error; err != nil {
		t.Fatal(err)
	}

	// Four releases and four discards of the first four at once: four
	// moves in all, each log once.
	var wg sync.WaitGroup
	var mu sync.Mutex
	released, discarded := 0, 0
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var n int
			var err error
			if i%2 == 0 {
				n, err = db.Flood().ReleaseHeld(ctx, ids[:4])
			} else {
				n, err = db.Flood().DiscardHeld(ctx, ids[:4])
			}
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			if i%2 == 0 {
				released += n
			} else {
				discarded += n
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	if released+discarded != 4 {
		t.Fatalf("concurrent releases and discards of 4 logs moved %d (released %d, discarded %d)", released+discarded, released, discarded)
	}
	again, err := db.Logs().ClaimLogs(ctx, "w2", 10, time.Minute)
	if err != nil || len(again) != released {
		t.Fatalf("claim released = %d, %v; want %d", len(again), err, released)
	}
	for _, l := range again {
		if !l.FloodReleased || l.CaptureReleased {
			t.Fatalf("released log %d claimed with flood mark %v, capture mark %v", l.ID, l.FloodReleased, l.CaptureReleased)
		}
	}
	failed, _, err := db.Logs().FindLogs(ctx, core.LogFilter{Status: core.StatusFailed})
	if err != nil || len(failed) != discarded {
		t.Fatalf("failed logs = %d, %v; want %d", len(failed), err, discarded)
	}
	for _, l := range failed {
		if l.LastError != core.FloodDiscardedError {
			t.Errorf("discarded log %d: error %q", l.ID, l.LastError)
		}
	}
	hooks := 0
	for _, r := range Outbox(t, db) {
		if r.Hook == core.HookWPMailFailed {
			hooks++
		}
	}
	if hooks != discarded {
		t.Errorf("%d wp_mail_failed hooks for %d discarded logs", hooks, discarded)
	}
	if n, err := db.Flood().DiscardHeld(ctx, ids); err != nil || n != 2 {
		t.Fatalf("discard of the rest = %d, %v; want 2", n, err)
	}
	if n, err := db.Flood().ReleaseHeld(ctx, ids); err != nil || n != 0 {
		t.Fatalf("release after everything moved = %d, %v", n, err)
	}
	if n, _ := db.Flood().CountHeld(ctx); n != 0 {
		t.Fatalf("%d held logs left", n)
	}
}

// testSourceVolumes: the volumes by site and source count the logs of
// the window and the hours they fall in, not the held ones nor those
// discarded from a hold.
func (s *suite) testSourceVolumes(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	held := holdLogs(t, db, "shop", 2)
	if _, err := db.Flood().DiscardHeld(ctx, held[:1]); err != nil {
		t.Fatal(err)
	}
	enqueue := func(source string, i int) {
		t.Helper()
		if err := db.Logs().EnqueueLog(ctx, &core.Log{Source: source, Message: Message(i)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		enqueue("shop", i)
	}
	enqueue("forms", 9)
	base := time.Now().UTC().Add(-3 * time.Hour).Truncate(time.Hour)
	// Spread the three shop logs over two hours.
	if err := db.Gorm().Exec("UPDATE "+db.TableName("logs")+" SET created_at = ? WHERE source = ?", base.Add(10*time.Minute), "shop").Error; err != nil {
		t.Fatal(err)
	}
	var first int64
	if err := db.Gorm().Raw("SELECT MAX(id) FROM "+db.TableName("logs")+" WHERE source = ?", "shop").Scan(&first).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Gorm().Exec("UPDATE "+db.TableName("logs")+" SET created_at = ? WHERE id = ?", base.Add(70*time.Minute), first).Error; err != nil {
		t.Fatal(err)
	}
	got, err := db.Flood().SourceVolumes(ctx, base.Add(-time.Hour), time.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]core.SourceVolume{}
	for _, v := range got {
		by[v.Source] = v
	}
	if v := by["shop"]; v.Messages != 3 || v.ActiveHours != 2 || v.SiteID != core.MainSiteID {
		t.Errorf("shop = %+v; want 3 messages over 2 hours of the main site", v)
	}
	if v := by["forms"]; v.Messages != 1 || v.ActiveHours != 1 {
		t.Errorf("forms = %+v; want 1 message in 1 hour", v)
	}
	if got, err := db.Flood().SourceVolumes(ctx, base.Add(-time.Hour), base.Add(-time.Minute)); err != nil || len(got) != 0 {
		t.Errorf("an empty window = %+v, %v", got, err)
	}
}
