package storetest

import (
	"context"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// notificationTests returns the contract tests of this part of the store.
func (s *suite) notificationTests() []struct {
	name string
	fn   func(t *testing.T)
} {
	return []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"NotificationCRUD", s.testNotificationCRUD},
		{"NotificationNotFound", s.testNotificationNotFound},
		{"NotificationBulk", s.testNotificationBulk},
		{"ReleaseLease", s.testReleaseLease},
		{"NotificationThreshold", s.testNotificationThreshold},
		{"LogResentFrom", s.testLogResentFrom},
	}
}

// testNotificationThreshold: the threshold fields round-trip; the
// failures counted are the logs whose failure for good RecordOutcomes
// recorded (not a log failed in another way: updated later, moved to
// failed by a provider's event, imported), each time it failed, within
// (from, to]; old marks are pruned; and of two claims inside the quiet
// time only the first wins.
func (s *suite) testNotificationThreshold(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	c := &core.NotificationChannel{Name: "sms", Type: "twilio", IsActive: true, Events: []string{},
		ThresholdCount: 3, ThresholdMinutes: 10, Settings: core.Settings{}}
	if err := db.Notifications().CreateNotificationChannel(ctx, c); err != nil {
		t.Fatal(err)
	}
	got, err := db.Notifications().FindNotificationChannelByID(ctx, c.ID)
	if err != nil || got.ThresholdCount != 3 || got.ThresholdMinutes != 10 || got.ThresholdAlertedAt != nil {
		t.Fatalf("stored %+v, %v", got, err)
	}
	c.ThresholdCount, c.ThresholdMinutes = 5, 30
	if err := db.Notifications().UpdateNotificationChannel(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got, _ = db.Notifications().FindNotificationChannelByID(ctx, c.ID); got.ThresholdCount != 5 || got.ThresholdMinutes != 30 {
		t.Fatalf("after update %+v", got)
	}

	// Failures recorded as outcomes, now.
	before := time.Now().Add(-time.Second)
	var logs []*core.Log
	for i := range 4 {
		l := &core.Log{Message: Message(i)}
		if err := db.Logs().EnqueueLog(ctx, l); err != nil {
			t.Fatal(err)
		}
		logs = append(logs, l)
	}
	if got := Claim(t, db.Logs(), "w1", 4, time.Minute); len(got) != 4 {
		t.Fatalf("claimed %d, want 4", len(got))
	}
	out := func(l *core.Log, status string) core.LogOutcome {
		return core.LogOutcome{LogID: l.ID, Status: status, Attempts: 1, PhaseAttempts: 1, LastError: "550 no"}
	}
	record := func(owner string, want int, outs ...core.LogOutcome) {
		t.Helper()
		if n, err := db.Logs().RecordOutcomes(ctx, owner, outs); err != nil || n != want {
			t.Fatalf("RecordOutcomes = %d, %v; want %d", n, err, want)
		}
	}
	count := func(from, to time.Time) int {
		t.Helper()
		n, err := db.Logs().CountFailedLogs(ctx, from, to)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// Failed, delivered, a retry (not final), and a failure of another
	// owner (not applied).
	record("w1", 3, out(logs[0], core.StatusFailed), out(logs[1], core.StatusDelivered), out(logs[2], core.StatusQueued))
	record("someone-else", 0, out(logs[3], core.StatusFailed))
	if n := count(before, time.Now().Add(time.Second)); n != 1 {
		t.Fatalf("after one failure: %d counted", n)
	}
	record("w1", 1, out(logs[3], core.StatusFailed))
	record("w1", 0, out(logs[0], core.StatusFailed)) // no longer sending
	if n := count(before, time.Now().Add(time.Second)); n != 2 {
		t.Fatalf("after two failures: %d counted", n)
	}
	if n := count(before.Add(-time.Hour), before); n != 0 {
		t.Fatalf("a window before the failures counted %d", n)
	}

	// A failed log changed later and an imported failed log are no new
	// failures (nor is a delivered log moved to failed by a provider's
	// bounce: adapters/pro/store's BounceIsNoNewFailure).
	if err := db.Gorm().Table(db.TableName("logs")).Where("id = ?", logs[0].ID).
		Updates(map[string]any{"status": core.StatusFailed, "last_error": "edited", "updated_at": time.Now().UTC()}).Error; err != nil {
		t.Fatal(err)
	}
	if err := db.Logs().ImportLogs(ctx, []*core.Log{{Status: core.StatusFailed, Source: "import", Message: Message(9), CreatedAt: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	if n := count(before, time.Now().Add(time.Second)); n != 2 {
		t.Fatalf("after later changes: %d counted, want the 2 failures still", n)
	}
	// A failed log resent that fails again is a new failure.
	if n, err := db.Logs().ResendLogs(ctx, []int64{logs[3].ID}); err != nil || n != 1 {
		t.Fatalf("ResendLogs = %d, %v", n, err)
	}
	// (The retry of logs[2] is due too.)
	if got := Claim(t, db.Logs(), "w2", 3, time.Minute); len(got) != 2 {
		t.Fatalf("claimed %d after the resend, want 2", len(got))
	}
	record("w2", 2, out(logs[3], core.StatusFailed), out(logs[2], core.StatusDelivered))
	if n := count(before, time.Now().Add(time.Second)); n != 3 {
		t.Fatalf("after the resent log failed again: %d counted, want 3", n)
	}

	// The window is (from, to]: marks at known times, two days back.
	t0 := time.Now().UTC().Add(-48 * time.Hour).Truncate(time.Second)
	for i, at := range []time.Duration{0, 5 * time.Minute, 20 * time.Minute} {
		if err := db.Gorm().Table(db.TableName("failure_marks")).
			Create(map[string]any{"failed_at": t0.Add(at), "log_id": int64(1000 + i)}).Error; err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		from, to time.Duration
		want     int
	}{{-time.Minute, 10 * time.Minute, 2}, {0, 10 * time.Minute, 1}, {time.Minute, 20 * time.Minute, 2}, {21 * time.Minute, time.Hour, 0}} {
		if n, err := db.Logs().CountFailedLogs(ctx, t0.Add(tt.from), t0.Add(tt.to)); err != nil || n != tt.want {
			t.Errorf("CountFailedLogs(%s, %s) = %d, %v; want %d", tt.from, tt.to, n, err, tt.want)
		}
	}
	// Pruning deletes the marks before its time only.
	if n, err := db.Logs().PruneFailureMarks(ctx, t0.Add(10*time.Minute)); err != nil || n != 2 {
		t.Fatalf("PruneFailureMarks = %d, %v; want 2", n, err)
	}
	if n := count(t0.Add(-time.Hour), t0.Add(time.Hour)); n != 1 {
		t.Fatalf("after the prune: %d counted, want 1", n)
	}
	if n := count(before, time.Now().Add(time.Second)); n != 3 {
		t.Fatalf("after the prune: %d recent failures counted, want 3", n)
	}

	if won, err := db.Notifications().ClaimNotificationThreshold(ctx, c.ID, t0, 10*time.Minute); err != nil || !won {
		t.Fatalf("first claim = %v, %v", won, err)
	}
	if won, _ := db.Notifications().ClaimNotificationThreshold(ctx, c.ID, t0.Add(9*time.Minute), 10*time.Minute); won {
		t.Fatal("a second claim inside the quiet time won")
	}
	if won, _ := db.Notifications().ClaimNotificationThreshold(ctx, c.ID, t0.Add(10*time.Minute), 10*time.Minute); !won {
		t.Fatal("a claim after the quiet time lost")
	}
	if got, _ = db.Notifications().FindNotificationChannelByID(ctx, c.ID); got.ThresholdAlertedAt == nil || !got.ThresholdAlertedAt.Equal(t0.Add(10*time.Minute)) {
		t.Fatalf("threshold_alerted_at = %v", got.ThresholdAlertedAt)
	}
	if won, _ := db.Notifications().ClaimNotificationThreshold(ctx, c.ID+100, t0, time.Minute); won {
		t.Fatal("a claim on a missing channel won")
	}
}

// testLogResentFrom: a log's resent_from round-trips, null by default.
func (s *suite) testLogResentFrom(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	msg := core.Message{From: core.Address{Email: "a@example.com"}, To: []core.Address{{Email: "b@example.com"}}, Subject: "s"}
	first := &core.Log{Message: msg}
	if err := db.Logs().EnqueueLog(ctx, first); err != nil {
		t.Fatal(err)
	}
	second := &core.Log{Message: msg, ResentFrom: &first.ID}
	if err := db.Logs().EnqueueLog(ctx, second); err != nil {
		t.Fatal(err)
	}
	a, _ := db.Logs().FindLogByID(ctx, first.ID)
	b, err := db.Logs().FindLogByID(ctx, second.ID)
	if err != nil || a.ResentFrom != nil || b.ResentFrom == nil || *b.ResentFrom != first.ID {
		t.Fatalf("resent_from: %v and %v (%v)", a.ResentFrom, b.ResentFrom, err)
	}
}

func (s *suite) testNotificationCRUD(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())

	list, err := db.Notifications().FindNotificationChannels(ctx)
	if err != nil || len(list) != 0 {
		t.Fatalf("FindNotificationChannels on an empty table = %v, %v; want none", list, err)
	}
	c := &core.NotificationChannel{
		Name: "Ops Slack", Type: "slack", IsActive: true,
		Events:   []string{core.EventConnectionDown, core.EventConnectionRecovered},
		Settings: core.Settings{"webhook_url": "enc:v1:abc", "retries": int64(3), "nested": map[string]any{"n": int64(1)}},
	}
	before := time.Now().UTC().Add(-time.Second)
	if err := db.Notifications().CreateNotificationChannel(ctx, c); err != nil {
		t.Fatalf("CreateNotificationChannel: %v", err)
	}
	if c.ID <= 0 || c.CreatedAt.Before(before) || !c.UpdatedAt.Equal(c.CreatedAt) {
		t.Fatalf("Create set ID %d, CreatedAt %v, UpdatedAt %v", c.ID, c.CreatedAt, c.UpdatedAt)
	}
	second := &core.NotificationChannel{Name: "All events", Type: "webhook", Settings: core.Settings{}}
	if err := db.Notifications().CreateNotificationChannel(ctx, second); err != nil {
		t.Fatalf("CreateNotificationChannel: %v", err)
	}

	got, err := db.Notifications().FindNotificationChannelByID(ctx, c.ID)
	if err != nil {
		t.Fatalf("FindNotificationChannelByID: %v", err)
	}
	if got.Name != c.Name || got.Type != c.Type || !got.IsActive ||
		!reflect.DeepEqual(got.Events, c.Events) || !reflect.DeepEqual(got.Settings, c.Settings) ||
		!got.CreatedAt.Equal(c.CreatedAt) {
		t.Fatalf("read back %+v, want %+v", got, c)
	}
	got2, err := db.Notifications().FindNotificationChannelByID(ctx, second.ID)
	if err != nil {
		t.Fatalf("FindNotificationChannelByID: %v", err)
	}
	if got2.IsActive || got2.Events == nil || len(got2.Events) != 0 || got2.Settings == nil {
		t.Fatalf("channel without events read back as %+v; want inactive, empty (non-nil) events and settings", got2)
	}

	list, err = db.Notifications().FindNotificationChannels(ctx)
	if err != nil || len(list) != 2 || list[0].ID != c.ID || list[1].ID != second.ID {
		t.Fatalf("FindNotificationChannels = %v, %v; want both in id order", list, err)
	}

	time.Sleep(2 * time.Millisecond) // UpdatedAt must move past CreatedAt
	c.Name, c.Type, c.IsActive = "Renamed", "discord", false
	c.Events = []string{core.EventQueueStalled}
	c.Settings = core.Settings{"webhook_url": "enc:v1:def"}
	if err := db.Notifications().UpdateNotificationChannel(ctx, c); err != nil {
		t.Fatalf("UpdateNotificationChannel: %v", err)
	}
	if !c.UpdatedAt.After(c.CreatedAt) {
		t.Fatalf("UpdatedAt %v not after CreatedAt %v", c.UpdatedAt, c.CreatedAt)
	}
	// An update that changes nothing succeeds (MySQL reports 0 changed rows).
	if err := db.Notifications().UpdateNotificationChannel(ctx, c); err != nil {
		t.Fatalf("UpdateNotificationChannel without change: %v", err)
	}
	got, err = db.Notifications().FindNotificationChannelByID(ctx, c.ID)
	if err != nil {
		t.Fatalf("FindNotificationChannelByID: %v", err)
	}
	if got.Name != "Renamed" || got.Type != "discord" || got.IsActive ||
		!reflect.DeepEqual(got.Events, []string{core.EventQueueStalled}) ||
		!reflect.DeepEqual(got.Settings, core.Settings{"webhook_url": "enc:v1:def"}) ||
		!got.CreatedAt.Equal(c.CreatedAt) {
		t.Fatalf("after update read back %+v", got)
	}
}

func (s *suite) testNotificationNotFound(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	_, err := db.Notifications().FindNotificationChannelByID(ctx, 42)
	WantCode(t, err, core.ENOTFOUND)
	err = db.Notifications().UpdateNotificationChannel(ctx, &core.NotificationChannel{ID: 42, Name: "x", Type: "slack"})
	WantCode(t, err, core.ENOTFOUND)
	if n, err := db.Notifications().DeleteNotificationChannels(ctx, []int64{42}); err != nil || n != 0 {
		t.Fatalf("DeleteNotificationChannels(missing) = %d, %v; want 0, nil", n, err)
	}
	if n, err := db.Notifications().SetNotificationChannelsActive(ctx, []int64{42}, true); err != nil || n != 0 {
		t.Fatalf("SetNotificationChannelsActive(missing) = %d, %v; want 0, nil", n, err)
	}
	if n, err := db.Notifications().DeleteNotificationChannels(ctx, nil); err != nil || n != 0 {
		t.Fatalf("DeleteNotificationChannels(nil) = %d, %v; want 0, nil", n, err)
	}
}

func (s *suite) testNotificationBulk(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	var ids []int64
	for i := 0; i < 4; i++ {
		c := &core.NotificationChannel{Name: "c", Type: "slack", IsActive: i%2 == 0, Settings: core.Settings{}}
		if err := db.Notifications().CreateNotificationChannel(ctx, c); err != nil {
			t.Fatalf("CreateNotificationChannel: %v", err)
		}
		ids = append(ids, c.ID)
	}
	// ids[0] is already active: it still counts; the repeat and the
	// missing id do not.
	n, err := db.Notifications().SetNotificationChannelsActive(ctx, []int64{ids[0], ids[1], ids[1], 9999}, true)
	if err != nil || n != 2 {
		t.Fatalf("SetNotificationChannelsActive = %d, %v; want 2", n, err)
	}
	active := func() map[int64]bool {
		list, err := db.Notifications().FindNotificationChannels(ctx)
		if err != nil {
			t.Fatalf("FindNotificationChannels: %v", err)
		}
		out := map[int64]bool{}
		for _, c := range list {
			out[c.ID] = c.IsActive
		}
		return out
	}
	want := map[int64]bool{ids[0]: true, ids[1]: true, ids[2]: true, ids[3]: false}
	if got := active(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after enable: %v, want %v", got, want)
	}
	if n, err := db.Notifications().SetNotificationChannelsActive(ctx, []int64{ids[0], ids[2]}, false); err != nil || n != 2 {
		t.Fatalf("disable = %d, %v; want 2", n, err)
	}
	want = map[int64]bool{ids[0]: false, ids[1]: true, ids[2]: false, ids[3]: false}
	if got := active(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after disable: %v, want %v", got, want)
	}
	n, err = db.Notifications().DeleteNotificationChannels(ctx, []int64{ids[1], ids[3], ids[3], 9999})
	if err != nil || n != 2 {
		t.Fatalf("DeleteNotificationChannels = %d, %v; want 2", n, err)
	}
	want = map[int64]bool{ids[0]: false, ids[2]: false}
	if got := active(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after delete: %v, want %v", got, want)
	}
}

func (s *suite) testReleaseLease(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	acquire := func(name, owner string, ttl time.Duration) bool {
		t.Helper()
		ok, err := db.Leases().AcquireLease(ctx, name, owner, ttl)
		if err != nil {
			t.Fatalf("AcquireLease(%s, %s): %v", name, owner, err)
		}
		return ok
	}
	release := func(name, owner string) bool {
		t.Helper()
		ok, err := db.Leases().ReleaseLease(ctx, name, owner)
		if err != nil {
			t.Fatalf("ReleaseLease(%s, %s): %v", name, owner, err)
		}
		return ok
	}
	if release("none", "") {
		t.Fatal("ReleaseLease of a lease never taken reported true")
	}
	if !acquire("flag", "a", time.Hour) {
		t.Fatal("first AcquireLease lost")
	}
	if release("flag", "b") {
		t.Fatal("another owner released the lease")
	}
	if acquire("flag", "b", time.Hour) {
		t.Fatal("lease still held by a was taken by b")
	}
	if !release("flag", "a") {
		t.Fatal("the holder could not release its lease")
	}
	if release("flag", "a") {
		t.Fatal("a released lease was released twice")
	}
	if !acquire("flag", "b", time.Hour) {
		t.Fatal("a released lease could not be taken")
	}
	if !release("flag", "") {
		t.Fatal("release by any owner failed")
	}
	if !acquire("gone", "a", -time.Second) || release("gone", "") {
		t.Fatal("an expired lease was reported released")
	}

	// Of concurrent releases of one lease exactly one wins.
	acquire("race", "a", time.Hour)
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := db.Leases().ReleaseLease(ctx, "race", "a")
			if err != nil {
				t.Errorf("ReleaseLease: %v", err)
			}
			if ok {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d concurrent releases won, want 1", wins)
	}
}
