package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store/storetest"
	"github.com/mailsvc/mailsvc/core"
)

// TestReleaseExpiredLeasesPassesLockedRows: on MariaDB the reaper
// releases an expired lease while a worker's transaction holds another
// sending row locked (recording its outcome), without waiting for it,
// and leaves that row, whose lease runs, to its owner.
func TestReleaseExpiredLeasesPassesLockedRows(t *testing.T) {
	ctx := context.Background()
	db := storetest.OpenDialect(t, "mysql")
	for i := range 2 {
		if err := db.Logs().EnqueueLog(ctx, &core.Log{Message: batchMessage(i)}); err != nil {
			t.Fatal(err)
		}
	}
	dead, err := db.Logs().ClaimLogs(ctx, "dead", 1, -time.Second)
	if err != nil || len(dead) != 1 {
		t.Fatalf("claim for dead: %d logs, %v", len(dead), err)
	}
	alive, err := db.Logs().ClaimLogs(ctx, "alive", 1, time.Hour)
	if err != nil || len(alive) != 1 {
		t.Fatalf("claim for alive: %d logs, %v", len(alive), err)
	}
	tx := db.Gorm().Begin()
	defer tx.Rollback()
	var id int64
	if err := tx.Raw(`SELECT id FROM wp_mailsvc_logs WHERE id = ? FOR UPDATE`, alive[0].ID).Scan(&id).Error; err != nil || id != alive[0].ID {
		t.Fatalf("lock the live row: %d, %v", id, err)
	}
	// Lock waits last 50 s by default: a reaper that waited would fail
	// here on its context.
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	n, err := db.Logs().ReleaseExpiredLeases(wait)
	if err != nil || n != 1 {
		t.Fatalf("ReleaseExpiredLeases with a row locked = %d, %v; want 1", n, err)
	}
	tx.Rollback()
	got, err := db.Logs().ClaimLogs(ctx, "next", 10, time.Hour)
	if err != nil || len(got) != 1 || got[0].ID != dead[0].ID {
		t.Fatalf("after the release claimed %v (%v), want only %d", got, err, dead[0].ID)
	}
}
