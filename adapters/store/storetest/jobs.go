package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/core"
)

// jobTests returns the contract tests of this part of the store.
func (s *suite) jobTests() []struct {
	name string
	fn   func(t *testing.T)
} {
	return []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"JobClaimOncePerInterval", s.testJobClaimOncePerInterval},
		{"JobClaimConcurrentHandles", s.testJobClaimConcurrent},
		{"JobClaimRejectsBadInput", s.testJobClaimBadInput},
		{"OldestQueuedAt", s.testOldestQueuedAt},
		{"QueueDepthAndPendingCounts", s.testQueueDepth},
		{"PruneJobRunsByPrefixAndAge", s.testPruneJobRuns},
	}
}

// claimWithin claims job name with interval until it wins or a deadline
// passes (the interval has to elapse on the deciding clock first).
func claimWithin(t *testing.T, db *store.DB, name, owner string, interval time.Duration) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		ok, err := db.Jobs().ClaimJobRun(context.Background(), name, owner, interval)
		if err != nil {
			t.Fatalf("ClaimJobRun(%s, %s, %v): %v", name, owner, interval, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("ClaimJobRun(%s, %s, %v) never won", name, owner, interval)
		}
		time.Sleep(time.Millisecond)
	}
}

func jobRun(t *testing.T, db *store.DB, name string) core.JobRun {
	t.Helper()
	runs, err := db.Jobs().FindJobRuns(context.Background())
	if err != nil {
		t.Fatalf("FindJobRuns: %v", err)
	}
	for _, r := range runs {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no run of job %q in %+v", name, runs)
	return core.JobRun{}
}

func (s *suite) testJobClaimOncePerInterval(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	if runs, err := db.Jobs().FindJobRuns(ctx); err != nil || len(runs) != 0 {
		t.Fatalf("FindJobRuns on an empty store = %+v, %v; want none", runs, err)
	}
	before := time.Now().UTC().Add(-time.Minute) // generous: the DB clock may differ a little
	steps := []struct {
		name, owner string
		interval    time.Duration
		want        bool
	}{
		{"health_check", "a", time.Hour, true},  // first run ever
		{"health_check", "b", time.Hour, false}, // inside the interval
		{"health_check", "a", time.Hour, false}, // the winner too
		{"log_purge", "b", time.Hour, true},     // jobs are independent
		{"health_check", "b", 24 * time.Hour, false},
	}
	for i, st := range steps {
		got, err := db.Jobs().ClaimJobRun(ctx, st.name, st.owner, st.interval)
		if err != nil {
			t.Fatalf("step %d: ClaimJobRun: %v", i, err)
		}
		if got != st.want {
			t.Fatalf("step %d: ClaimJobRun(%s, %s, %v) = %v, want %v", i, st.name, st.owner, st.interval, got, st.want)
		}
	}
	r := jobRun(t, db, "health_check")
	if r.Owner != "a" || r.FinishedAt != nil || r.LastError != "" || r.LastRunAt.Before(before) {
		t.Fatalf("running job recorded as %+v; want owner a, not finished, started after %v", r, before)
	}

	// Finishing by someone else changes nothing; by the owner records it.
	if err := db.Jobs().FinishJobRun(ctx, "health_check", "b", "not mine"); err != nil {
		t.Fatal(err)
	}
	if r := jobRun(t, db, "health_check"); r.FinishedAt != nil || r.LastError != "" {
		t.Fatalf("a finish by a non-owner was recorded: %+v", r)
	}
	if err := db.Jobs().FinishJobRun(ctx, "health_check", "a", "smtp: connection refused"); err != nil {
		t.Fatal(err)
	}
	fin := jobRun(t, db, "health_check")
	if fin.FinishedAt == nil || fin.FinishedAt.Before(fin.LastRunAt) || fin.LastError != "smtp: connection refused" {
		t.Fatalf("finished run recorded as %+v", fin)
	}

	// A shorter interval applies at once: the run that started a moment
	// ago is now old enough, and the claim resets the record.
	claimWithin(t, db, "health_check", "b", time.Millisecond)
	r = jobRun(t, db, "health_check")
	if r.Owner != "b" || r.FinishedAt != nil || r.LastError != "" || r.LastRunAt.Before(fin.LastRunAt) {
		t.Fatalf("after b's claim: %+v; want owner b, a fresh unfinished run", r)
	}
	if err := db.Jobs().FinishJobRun(ctx, "health_check", "b", ""); err != nil {
		t.Fatal(err)
	}
	if r := jobRun(t, db, "health_check"); r.FinishedAt == nil || r.LastError != "" {
		t.Fatalf("successful finish recorded as %+v", r)
	}
	// Back to an hour: b's fresh run blocks everyone again.
	for _, owner := range []string{"a", "b", "c"} {
		if ok, err := db.Jobs().ClaimJobRun(ctx, "health_check", owner, time.Hour); err != nil || ok {
			t.Fatalf("ClaimJobRun(%s, 1h) right after a run = %v, %v; want false", owner, ok, err)
		}
	}
	runs, err := db.Jobs().FindJobRuns(ctx)
	if err != nil || len(runs) != 2 || runs[0].Name != "health_check" || runs[1].Name != "log_purge" {
		t.Fatalf("FindJobRuns = %+v, %v; want health_check and log_purge, by name", runs, err)
	}
}

func (s *suite) testJobClaimConcurrent(t *testing.T) {
	const claimers = 10
	prefix := s.prefix()
	dbs := make([]*store.DB, claimers)
	for i := range dbs {
		dbs[i] = s.open(t, prefix)
	}
	ctx := context.Background()
	// Round 0 races on a job that never ran (the INSERT path), round 1 on
	// one whose last run is two hours old (the UPDATE path).
	for round := range 2 {
		if round == 1 {
			if err := dbs[0].Gorm().Exec("UPDATE "+dbs[0].TableName("jobs")+" SET last_run_at = ? WHERE name = ?",
				time.Now().UTC().Add(-2*time.Hour), "race").Error; err != nil {
				t.Fatalf("backdate the last run: %v", err)
			}
		}
		start := make(chan struct{})
		var wg sync.WaitGroup
		wins := make([]bool, claimers)
		errs := make([]error, claimers)
		for i := range claimers {
			wg.Go(func() {
				<-start
				wins[i], errs[i] = dbs[i].Jobs().ClaimJobRun(ctx, "race", fmt.Sprintf("replica-%d", i), time.Hour)
			})
		}
		close(start)
		wg.Wait()
		winners := 0
		winner := ""
		for i := range claimers {
			if errs[i] != nil {
				t.Fatalf("round %d: claimer %d: %v", round, i, errs[i])
			}
			if wins[i] {
				winners++
				winner = fmt.Sprintf("replica-%d", i)
			}
		}
		if winners != 1 {
			t.Fatalf("round %d: %d of %d concurrent claimers won, want exactly one", round, winners, claimers)
		}
		if r := jobRun(t, dbs[3], "race"); r.Owner != winner || time.Since(r.LastRunAt) > time.Hour {
			t.Fatalf("round %d: the record is %+v, the winner was %q", round, r, winner)
		}
	}
	// With an hour interval after all that: nobody wins.
	start := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	winners := 0
	for i := range claimers {
		wg.Go(func() {
			<-start
			ok, err := dbs[i].Jobs().ClaimJobRun(ctx, "race", fmt.Sprintf("replica-%d", i), time.Hour)
			if err != nil {
				t.Errorf("claimer %d: %v", i, err)
			}
			if ok {
				mu.Lock()
				winners++
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	if winners != 0 {
		t.Fatalf("%d claimers won inside the hour", winners)
	}
}

func (s *suite) testJobClaimBadInput(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	tests := []struct {
		name, job, owner string
		interval         time.Duration
	}{
		{"zero interval", "j", "a", 0},
		{"negative interval", "j", "a", -time.Second},
		{"no name", "", "a", time.Minute},
		{"no owner", "j", "", time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, err := db.Jobs().ClaimJobRun(ctx, tt.job, tt.owner, tt.interval)
			if err == nil || ok {
				t.Fatalf("ClaimJobRun = %v, %v; want an error", ok, err)
			}
		})
	}
	if runs, err := db.Jobs().FindJobRuns(ctx); err != nil || len(runs) != 0 {
		t.Fatalf("bad claims stored %+v, %v", runs, err)
	}
}

func (s *suite) testOldestQueuedAt(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	got, err := db.Logs().OldestQueuedAt(ctx)
	if err != nil || got != nil {
		t.Fatalf("OldestQueuedAt on an empty queue = %v, %v; want nil", got, err)
	}
	var logs []*core.Log
	for i := range 3 {
		logs = append(logs, Enqueue(t, db.Logs(), Message(i)))
	}
	// A queued log waiting for a retry counts: it is still in the queue.
	later := &core.Log{Message: Message(9), NextAttemptAt: time.Now().Add(time.Hour)}
	if err := db.Logs().EnqueueLog(ctx, later); err != nil {
		t.Fatal(err)
	}
	oldest := func(ls []*core.Log) time.Time {
		o := ls[0].CreatedAt
		for _, l := range ls[1:] {
			if l.CreatedAt.Before(o) {
				o = l.CreatedAt
			}
		}
		return o
	}
	check := func(step string, want *time.Time) {
		t.Helper()
		got, err := db.Logs().OldestQueuedAt(ctx)
		if err != nil {
			t.Fatalf("%s: OldestQueuedAt: %v", step, err)
		}
		switch {
		case want == nil && got != nil:
			t.Fatalf("%s: OldestQueuedAt = %v, want nil", step, got)
		case want != nil && (got == nil || !got.Equal(*want)):
			t.Fatalf("%s: OldestQueuedAt = %v, want %v", step, got, *want)
		}
	}
	all := append(append([]*core.Log(nil), logs...), later)
	w := oldest(all)
	check("four queued", &w)

	// Claimed (sending), delivered and failed logs are not queued.
	claimed := Claim(t, db.Logs(), "w", 2, time.Hour)
	if len(claimed) != 2 {
		t.Fatalf("claimed %d, want 2", len(claimed))
	}
	finish(t, db.Logs(), "w", claimed[0], core.StatusDelivered)
	finish(t, db.Logs(), "w", claimed[1], core.StatusFailed)
	var left []*core.Log
	for _, l := range all {
		if l.ID != claimed[0].ID && l.ID != claimed[1].ID {
			left = append(left, l)
		}
	}
	w = oldest(left)
	check("two queued", &w)

	rest := Claim(t, db.Logs(), "w", 10, time.Hour) // the due one; `later` waits
	if len(rest) != 1 {
		t.Fatalf("claimed %d, want 1 (the other waits for its retry)", len(rest))
	}
	check("one waiting for a retry", &later.CreatedAt)
	if n, err := db.Logs().DeleteLogs(ctx, []int64{later.ID}); err != nil || n != 1 {
		t.Fatalf("DeleteLogs = %d, %v", n, err)
	}
	check("none queued (one sending)", nil)
}

// testQueueDepth: QueueDepth counts every status as QueueStats does;
// PendingCounts only the queued and sending ones.
func (s *suite) testQueueDepth(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	for i := range 6 {
		Enqueue(t, db.Logs(), Message(i))
	}
	claimed := Claim(t, db.Logs(), "w1", 3, time.Minute)
	finish(t, db.Logs(), "w1", claimed[0], core.StatusDelivered)
	finish(t, db.Logs(), "w1", claimed[1], core.StatusFailed)
	want := core.QueueStats{Queued: 3, Sending: 1, Delivered: 1, Failed: 1}
	if got, err := db.Logs().QueueDepth(ctx); err != nil || got != want {
		t.Fatalf("QueueDepth = %+v, %v; want %+v", got, err, want)
	}
	if got, err := db.Logs().QueueStats(ctx); err != nil || got != want {
		t.Fatalf("QueueStats = %+v, %v; want %+v", got, err, want)
	}
	if got, err := db.Logs().PendingCounts(ctx); err != nil || got != (core.QueueStats{Queued: 3, Sending: 1}) {
		t.Fatalf("PendingCounts = %+v, %v; want queued 3, sending 1 and nothing else", got, err)
	}
}

// testPruneJobRuns checks that PruneJobRuns deletes only the records whose
// name starts with the prefix, taken literally ("_" is no wildcard), and
// whose last run started before the cut-off.
func (s *suite) testPruneJobRuns(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	now := time.Now().UTC()
	ages := map[string]time.Duration{
		"summary_report:daily:2024-01-01":  500 * 24 * time.Hour, // old: pruned
		"summary_report:daily:2024-06-01":  401 * 24 * time.Hour, // old: pruned
		"summary_report:daily:2025-06-01":  399 * 24 * time.Hour, // recent: kept
		"summary_report:daily:today":       0,                    // recent: kept
		"summary_report:armed":             900 * 24 * time.Hour, // other prefix: kept
		"summaryXreport:daily:2024-01-01":  500 * 24 * time.Hour, // "_" matched literally: kept
		"summary_report:weekly:2024-01-01": 500 * 24 * time.Hour, // other prefix: kept
		"log_purge":                        500 * 24 * time.Hour, // other job: kept
	}
	for name, age := range ages {
		if _, err := db.Jobs().ClaimJobRun(ctx, name, "a", time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := db.Gorm().Exec("UPDATE "+db.TableName("jobs")+" SET last_run_at = ? WHERE name = ?", now.Add(-age), name).Error; err != nil {
			t.Fatal(err)
		}
	}
	n, err := db.Jobs().PruneJobRuns(ctx, "summary_report:daily:", now.Add(-400*24*time.Hour))
	if err != nil || n != 2 {
		t.Fatalf("PruneJobRuns = %d, %v; want 2", n, err)
	}
	runs, err := db.Jobs().FindJobRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	left := map[string]bool{}
	for _, r := range runs {
		left[r.Name] = true
	}
	for name, age := range ages {
		pruned := name == "summary_report:daily:2024-01-01" || name == "summary_report:daily:2024-06-01"
		if left[name] == pruned {
			t.Errorf("%s (%v old): kept %v, want %v", name, age, left[name], !pruned)
		}
	}
	if _, err := db.Jobs().PruneJobRuns(ctx, "", now); err == nil {
		t.Error("an empty prefix was accepted")
	}
}
