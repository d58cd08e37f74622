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

// testNotificationThreshold: the threshold fields round-trip, failed logs
// are counted by their last change within (from, to], and of two claims
// inside the quiet time only the first wins.
func (s *suite) testNotificationThreshold(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	c := &core.NotificationChannel{Name: "sms", Type: "twilio", IsActive: true, Events: []string{},
		ThresholdCount: 3, ThresholdMinutes: 10, Settings: core.Settings{}}
	if err := db.CreateNotificationChannel(ctx, c); err != nil {
		t.Fatal(err)
	}
	got, err := db.FindNotificationChannelByID(ctx, c.ID)
	if err != nil || got.ThresholdCount != 3 || got.ThresholdMinutes != 10 || got.ThresholdAlertedAt != nil {
		t.Fatalf("stored %+v, %v", got, err)
	}
	c.ThresholdCount, c.ThresholdMinutes = 5, 30
	if err := db.UpdateNotificationChannel(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got, _ = db.FindNotificationChannelByID(ctx, c.ID); got.ThresholdCount != 5 || got.ThresholdMinutes != 30 {
		t.Fatalf("after update %+v", got)
	}

	t0 := time.Now().UTC().Truncate(time.Second)
	for i, st := range []struct {
		status string
		at     time.Duration
	}{{core.StatusFailed, 0}, {core.StatusFailed, 5 * time.Minute}, {core.StatusDelivered, 6 * time.Minute}, {core.StatusFailed, 20 * time.Minute}} {
		l := &core.Log{Message: core.Message{From: core.Address{Email: "a@example.com"}, To: []core.Address{{Email: "b@example.com"}}, Subject: "s"}}
		if err := db.EnqueueLog(ctx, l); err != nil {
			t.Fatal(err)
		}
		if err := db.Gorm().Table(db.TableName("logs")).Where("id = ?", l.ID).
			Updates(map[string]any{"status": st.status, "updated_at": t0.Add(st.at)}).Error; err != nil {
			t.Fatalf("log %d: %v", i, err)
		}
	}
	for _, tt := range []struct {
		from, to time.Duration
		want     int
	}{{-time.Minute, 10 * time.Minute, 2}, {0, 10 * time.Minute, 1}, {time.Minute, 20 * time.Minute, 2}, {21 * time.Minute, time.Hour, 0}} {
		if n, err := db.CountFailedLogs(ctx, t0.Add(tt.from), t0.Add(tt.to)); err != nil || n != tt.want {
			t.Errorf("CountFailedLogs(%s, %s) = %d, %v; want %d", tt.from, tt.to, n, err, tt.want)
		}
	}

	if won, err := db.ClaimNotificationThreshold(ctx, c.ID, t0, 10*time.Minute); err != nil || !won {
		t.Fatalf("first claim = %v, %v", won, err)
	}
	if won, _ := db.ClaimNotificationThreshold(ctx, c.ID, t0.Add(9*time.Minute), 10*time.Minute); won {
		t.Fatal("a second claim inside the quiet time won")
	}
	if won, _ := db.ClaimNotificationThreshold(ctx, c.ID, t0.Add(10*time.Minute), 10*time.Minute); !won {
		t.Fatal("a claim after the quiet time lost")
	}
	if got, _ = db.FindNotificationChannelByID(ctx, c.ID); got.ThresholdAlertedAt == nil || !got.ThresholdAlertedAt.Equal(t0.Add(10*time.Minute)) {
		t.Fatalf("threshold_alerted_at = %v", got.ThresholdAlertedAt)
	}
	if won, _ := db.ClaimNotificationThreshold(ctx, c.ID+100, t0, time.Minute); won {
		t.Fatal("a claim on a missing channel won")
	}
}

// testLogResentFrom: a log's resent_from round-trips, null by default.
func (s *suite) testLogResentFrom(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	msg := core.Message{From: core.Address{Email: "a@example.com"}, To: []core.Address{{Email: "b@example.com"}}, Subject: "s"}
	first := &core.Log{Message: msg}
	if err := db.EnqueueLog(ctx, first); err != nil {
		t.Fatal(err)
	}
	second := &core.Log{Message: msg, ResentFrom: &first.ID}
	if err := db.EnqueueLog(ctx, second); err != nil {
		t.Fatal(err)
	}
	a, _ := db.FindLogByID(ctx, first.ID)
	b, err := db.FindLogByID(ctx, second.ID)
	if err != nil || a.ResentFrom != nil || b.ResentFrom == nil || *b.ResentFrom != first.ID {
		t.Fatalf("resent_from: %v and %v (%v)", a.ResentFrom, b.ResentFrom, err)
	}
}

func (s *suite) testNotificationCRUD(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())

	list, err := db.FindNotificationChannels(ctx)
	if err != nil || len(list) != 0 {
		t.Fatalf("FindNotificationChannels on an empty table = %v, %v; want none", list, err)
	}
	c := &core.NotificationChannel{
		Name: "Ops Slack", Type: "slack", IsActive: true,
		Events:   []string{core.EventConnectionDown, core.EventConnectionRecovered},
		Settings: core.Settings{"webhook_url": "enc:v1:abc", "retries": int64(3), "nested": map[string]any{"n": int64(1)}},
	}
	before := time.Now().UTC().Add(-time.Second)
	if err := db.CreateNotificationChannel(ctx, c); err != nil {
		t.Fatalf("CreateNotificationChannel: %v", err)
	}
	if c.ID <= 0 || c.CreatedAt.Before(before) || !c.UpdatedAt.Equal(c.CreatedAt) {
		t.Fatalf("Create set ID %d, CreatedAt %v, UpdatedAt %v", c.ID, c.CreatedAt, c.UpdatedAt)
	}
	second := &core.NotificationChannel{Name: "All events", Type: "webhook", Settings: core.Settings{}}
	if err := db.CreateNotificationChannel(ctx, second); err != nil {
		t.Fatalf("CreateNotificationChannel: %v", err)
	}

	got, err := db.FindNotificationChannelByID(ctx, c.ID)
	if err != nil {
		t.Fatalf("FindNotificationChannelByID: %v", err)
	}
	if got.Name != c.Name || got.Type != c.Type || !got.IsActive ||
		!reflect.DeepEqual(got.Events, c.Events) || !reflect.DeepEqual(got.Settings, c.Settings) ||
		!got.CreatedAt.Equal(c.CreatedAt) {
		t.Fatalf("read back %+v, want %+v", got, c)
	}
	got2, err := db.FindNotificationChannelByID(ctx, second.ID)
	if err != nil {
		t.Fatalf("FindNotificationChannelByID: %v", err)
	}
	if got2.IsActive || got2.Events == nil || len(got2.Events) != 0 || got2.Settings == nil {
		t.Fatalf("channel without events read back as %+v; want inactive, empty (non-nil) events and settings", got2)
	}

	list, err = db.FindNotificationChannels(ctx)
	if err != nil || len(list) != 2 || list[0].ID != c.ID || list[1].ID != second.ID {
		t.Fatalf("FindNotificationChannels = %v, %v; want both in id order", list, err)
	}

	time.Sleep(2 * time.Millisecond) // UpdatedAt must move past CreatedAt
	c.Name, c.Type, c.IsActive = "Renamed", "discord", false
	c.Events = []string{core.EventQueueStalled}
	c.Settings = core.Settings{"webhook_url": "enc:v1:def"}
	if err := db.UpdateNotificationChannel(ctx, c); err != nil {
		t.Fatalf("UpdateNotificationChannel: %v", err)
	}
	if !c.UpdatedAt.After(c.CreatedAt) {
		t.Fatalf("UpdatedAt %v not after CreatedAt %v", c.UpdatedAt, c.CreatedAt)
	}
	// An update that changes nothing succeeds (MySQL reports 0 changed rows).
	if err := db.UpdateNotificationChannel(ctx, c); err != nil {
		t.Fatalf("UpdateNotificationChannel without change: %v", err)
	}
	got, err = db.FindNotificationChannelByID(ctx, c.ID)
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
	_, err := db.FindNotificationChannelByID(ctx, 42)
	wantCode(t, err, core.ENOTFOUND)
	err = db.UpdateNotificationChannel(ctx, &core.NotificationChannel{ID: 42, Name: "x", Type: "slack"})
	wantCode(t, err, core.ENOTFOUND)
	if n, err := db.DeleteNotificationChannels(ctx, []int64{42}); err != nil || n != 0 {
		t.Fatalf("DeleteNotificationChannels(missing) = %d, %v; want 0, nil", n, err)
	}
	if n, err := db.SetNotificationChannelsActive(ctx, []int64{42}, true); err != nil || n != 0 {
		t.Fatalf("SetNotificationChannelsActive(missing) = %d, %v; want 0, nil", n, err)
	}
	if n, err := db.DeleteNotificationChannels(ctx, nil); err != nil || n != 0 {
		t.Fatalf("DeleteNotificationChannels(nil) = %d, %v; want 0, nil", n, err)
	}
}

func (s *suite) testNotificationBulk(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	var ids []int64
	for i := 0; i < 4; i++ {
		c := &core.NotificationChannel{Name: "c", Type: "slack", IsActive: i%2 == 0, Settings: core.Settings{}}
		if err := db.CreateNotificationChannel(ctx, c); err != nil {
			t.Fatalf("CreateNotificationChannel: %v", err)
		}
		ids = append(ids, c.ID)
	}
	// ids[0] is already active: it still counts; the repeat and the
	// missing id do not.
	n, err := db.SetNotificationChannelsActive(ctx, []int64{ids[0], ids[1], ids[1], 9999}, true)
	if err != nil || n != 2 {
		t.Fatalf("SetNotificationChannelsActive = %d, %v; want 2", n, err)
	}
	active := func() map[int64]bool {
		list, err := db.FindNotificationChannels(ctx)
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
	if n, err := db.SetNotificationChannelsActive(ctx, []int64{ids[0], ids[2]}, false); err != nil || n != 2 {
		t.Fatalf("disable = %d, %v; want 2", n, err)
	}
	want = map[int64]bool{ids[0]: false, ids[1]: true, ids[2]: false, ids[3]: false}
	if got := active(); !reflect.DeepEqual(got, want) {
		t.Fatalf("after disable: %v, want %v", got, want)
	}
	n, err = db.DeleteNotificationChannels(ctx, []int64{ids[1], ids[3], ids[3], 9999})
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
		ok, err := db.AcquireLease(ctx, name, owner, ttl)
		if err != nil {
			t.Fatalf("AcquireLease(%s, %s): %v", name, owner, err)
		}
		return ok
	}
	release := func(name, owner string) bool {
		t.Helper()
		ok, err := db.ReleaseLease(ctx, name, owner)
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
			ok, err := db.ReleaseLease(ctx, "race", "a")
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
