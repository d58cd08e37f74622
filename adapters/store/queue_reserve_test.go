package store

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/internal/testdb"
)

// TestQueueRowsNeverGrow follows logs through the queue on MariaDB and
// measures, after each step, the bytes of the columns the queue writes
// as InnoDB stores them (a NULL takes none, a variable-length value its
// length and a length byte, a DATETIME(6) or BIGINT eight): the claim
// and every kind of outcome leave a row no bigger than before, so InnoDB
// rewrites it in its own space (see queue_reserve.go). The reserve is
// cut by the claim, released by an outcome that ends the log, kept by
// one that queues it again, and never given to imported history.
func TestQueueRowsNeverGrow(t *testing.T) {
	ctx := context.Background()
	dsn := testdb.MySQL(t)
	db, err := Open(ctx, dsn, DefaultPrefix, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })

	// rowBytes returns the stored bytes of the columns the queue writes
	// and the reserve's length (-1 for NULL).
	rowBytes := func(id int64) (size, reserve int) {
		t.Helper()
		err := db.sqlDB.QueryRowContext(ctx, db.expand(`SELECT
			LENGTH(status) + 1
			+ IF(lease_owner IS NULL, 0, LENGTH(lease_owner) + 1)
			+ IF(lease_until IS NULL, 0, 8)
			+ IF(sent_connection_id IS NULL, 0, 8)
			+ IF(delivered_at IS NULL, 0, 8)
			+ LENGTH(provider_message_id) + IF(LENGTH(provider_message_id) > 127, 2, 1)
			+ LENGTH(last_error) + IF(LENGTH(last_error) > 127, 2, 1)
			+ IF(queue_reserve IS NULL, 0, LENGTH(queue_reserve) + 1),
			IFNULL(LENGTH(queue_reserve), -1)
			FROM {prefix}mailsvc_logs WHERE id = ?`), id).Scan(&size, &reserve)
		if err != nil {
			t.Fatal(err)
		}
		return size, reserve
	}

	logs := make([]*core.Log, 4)
	for i := range logs {
		logs[i] = &core.Log{Source: "test", Message: core.Message{From: core.Address{Email: "shop@example.com"},
			To: []core.Address{{Email: "buyer@example.com"}}, Subject: "order", Text: strings.Repeat("x", 900)}}
	}
	if err := db.Logs().EnqueueLogs(ctx, logs[:3]); err != nil {
		t.Fatal(err)
	}
	if err := db.Logs().EnqueueLog(ctx, logs[3]); err != nil {
		t.Fatal(err)
	}
	size := map[int64]int{}
	for _, l := range logs {
		s, r := rowBytes(l.ID)
		if r != queueReserve {
			t.Fatalf("queued log %d reserves %d bytes, want %d", l.ID, r, queueReserve)
		}
		size[l.ID] = s
	}

	// step checks that every log of ids is no bigger than before and
	// that its reserve is now wantReserve.
	step := func(what string, ids []int64, wantReserve int) {
		t.Helper()
		for _, id := range ids {
			s, r := rowBytes(id)
			if s > size[id] {
				t.Errorf("%s: log %d grew from %d to %d bytes", what, id, size[id], s)
			}
			if r != wantReserve {
				t.Errorf("%s: log %d reserves %d bytes, want %d", what, id, r, wantReserve)
			}
			size[id] = s
		}
	}

	const owner = "mail-7.eu-west-1.compute.internal-4194303-0a1b2c3d/w15"
	claimed, err := db.Logs().ClaimLogs(ctx, owner, 10, time.Minute)
	if err != nil || len(claimed) != len(logs) {
		t.Fatalf("claimed %d logs (%v), want %d", len(claimed), err, len(logs))
	}
	afterClaim := queueReserve - claimReserveCut(owner)
	step("claim", []int64{logs[0].ID, logs[1].ID, logs[2].ID, logs[3].ID}, afterClaim)

	conn := int64(1)
	outs := []core.LogOutcome{
		{LogID: logs[0].ID, Status: core.StatusDelivered, Attempts: 1, PhaseAttempts: 1, SentConnectionID: &conn,
			ProviderMessageID: "<" + strings.Repeat("7", 80) + "@email.amazonses.com>"},
		{LogID: logs[1].ID, Status: core.StatusFailed, Attempts: 1, PhaseAttempts: 1, SentConnectionID: &conn,
			LastError: "550 5.1.1 <buyer@example.com>: Recipient address rejected: User unknown in virtual mailbox table"},
		{LogID: logs[2].ID, Status: core.StatusQueued, Attempts: 1, PhaseAttempts: 1,
			LastError: "421 4.7.0 Try again later", NextAttemptAt: time.Now()},
	}
	if n, err := db.Logs().RecordOutcomes(ctx, owner, outs[:1]); err != nil || n != 1 {
		t.Fatalf("recorded %d (%v)", n, err)
	}
	step("delivered", []int64{logs[0].ID}, -1)
	if n, err := db.Logs().RecordOutcomes(ctx, owner, outs[1:]); err != nil || n != 2 {
		t.Fatalf("recorded %d (%v)", n, err)
	}
	step("failed", []int64{logs[1].ID}, -1)
	step("queued again", []int64{logs[2].ID}, afterClaim)

	// The retry's claim takes its room from the lease the outcome gave
	// back, and cuts the reserve once more.
	again, err := db.Logs().ClaimLogs(ctx, owner, 10, time.Minute)
	if err != nil || len(again) != 1 || again[0].ID != logs[2].ID {
		t.Fatalf("claimed %v (%v), want log %d again", again, err, logs[2].ID)
	}
	// What is left of the reserve is less than a claim takes: it goes
	// whole, its length byte with it.
	if afterClaim > claimReserveCut(owner) {
		t.Fatalf("the owner %q leaves %d bytes after two claims: use a longer one", owner, afterClaim-claimReserveCut(owner))
	}
	step("claimed again", []int64{logs[2].ID}, -1)

	if err := db.Logs().ImportLogs(ctx, []*core.Log{{Status: core.StatusDelivered, Source: "import",
		Message: core.Message{From: core.Address{Email: "a@example.com"}, To: []core.Address{{Email: "b@example.com"}}, Subject: "old"}}}); err != nil {
		t.Fatal(err)
	}
	var imported sql.NullInt64
	if err := db.sqlDB.QueryRowContext(ctx, db.expand(`SELECT LENGTH(queue_reserve) FROM {prefix}mailsvc_logs WHERE source = 'import'`)).Scan(&imported); err != nil {
		t.Fatal(err)
	}
	if imported.Valid {
		t.Errorf("an imported log reserves %d bytes, want none", imported.Int64)
	}
}

// TestReserveMigrationSparesExistingRows migrates a database with a
// delivered log and a queued one to the reserve's schema: the rows
// already there get no reserve (the table does not grow by the history
// it holds), the queued one is still claimed, and a log queued after
// the migration gets the whole reserve.
func TestReserveMigrationSparesExistingRows(t *testing.T) {
	ctx := context.Background()
	dsn := testdb.MySQL(t)
	full := migrations
	reserveAt := slices.IndexFunc(full, func(m migration) bool { return m.Version == 14 }) // the reserve's migration
	withMigrations(t, full[:reserveAt])
	db, err := Open(ctx, dsn, DefaultPrefix, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	msg := core.Message{From: core.Address{Email: "a@example.com"}, To: []core.Address{{Email: "b@example.com"}}, Subject: "s", Text: "t"}
	old := []*core.Log{{Source: "old", Message: msg}, {Source: "old", Message: msg}}
	if err := db.Logs().EnqueueLogs(ctx, old); err != nil {
		t.Fatal(err)
	}
	// This build's claim writes the reserve: the old schema's history
	// is written by hand.
	if _, err := db.sqlDB.ExecContext(ctx, db.expand(`UPDATE {prefix}mailsvc_logs SET status = ?, attempts = 1 WHERE id = ?`),
		core.StatusDelivered, old[0].ID); err != nil {
		t.Fatal(err)
	}

	migrations = full
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	fresh := &core.Log{Source: "new", Message: msg}
	if err := db.Logs().EnqueueLog(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	reserve := func(id int64) int64 {
		t.Helper()
		var n sql.NullInt64
		if err := db.sqlDB.QueryRowContext(ctx, db.expand(`SELECT LENGTH(queue_reserve) FROM {prefix}mailsvc_logs WHERE id = ?`), id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if !n.Valid {
			return -1
		}
		return n.Int64
	}
	for _, l := range old {
		if r := reserve(l.ID); r != -1 {
			t.Errorf("log %d, there before the migration, reserves %d bytes, want none", l.ID, r)
		}
	}
	if r := reserve(fresh.ID); r != queueReserve {
		t.Errorf("a log queued after the migration reserves %d bytes, want %d", r, queueReserve)
	}
	got, err := db.Logs().ClaimLogs(ctx, "w", 10, time.Minute)
	if err != nil || len(got) != 2 || got[0].ID != old[1].ID || got[1].ID != fresh.ID {
		t.Fatalf("claimed %v (%v), want the old queued log and the new one", got, err)
	}
}
