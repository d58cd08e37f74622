package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/core"
)

// privacyTests are the contract tests of the personal data export and
// erase (core.PersonalDataStore).
func (s *suite) privacyTests() []struct {
	name string
	fn   func(t *testing.T)
} {
	return []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"PersonalDataFindAndErase", s.testPersonalDataFindAndErase},
		{"SenderAddressesBackfill", s.testSenderAddressesBackfill},
	}
}

// settle queues m, claims it and records status with one attempt whose
// response is response and, for a failure, lastError.
func settle(t *testing.T, db *store.DB, m core.Message, status, response, lastError string) *core.Log {
	t.Helper()
	l := Enqueue(t, db.Logs(), m)
	if got := Claim(t, db.Logs(), "w", 10, time.Minute); len(got) != 1 {
		t.Fatalf("claimed %v, want log %d", ids(got), l.ID)
	}
	conn := int64(1)
	n, err := db.Logs().RecordOutcomes(context.Background(), "w", []core.LogOutcome{{
		LogID: l.ID, Status: status, Attempts: 1, PhaseAttempts: 1, SentConnectionID: &conn, LastError: lastError,
		ProviderMessageID: fmt.Sprintf("pm-%d", l.ID),
		History:           []core.Attempt{{LogID: l.ID, ConnectionID: conn, At: time.Now(), Outcome: core.OutcomeDelivered, Response: response}},
	}})
	if err != nil || n != 1 {
		t.Fatalf("RecordOutcomes = %d, %v", n, err)
	}
	return l
}

// testPersonalDataFindAndErase: the logs naming an address as sender,
// recipient or Reply-To (any case, indexed or written by the bridge) are
// found in pages; the erase rewrites the delivered and failed ones in
// batches, leaves queued ones, other people and the outcome counts alone.
// (That it removes the provider events naming the address is
// adapters/pro/store's ProviderEventsErasedWithTheirLogs.)
func (s *suite) testPersonalDataFindAndErase(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	const bob = "bob@example.com"
	shop := core.Address{Name: "Shop", Email: "shop@example.com"}
	welcome := settle(t, db, core.Message{
		From: shop, To: []core.Address{{Name: "Bob Stone", Email: bob}}, Cc: []core.Address{{Name: "Carol", Email: "carol@example.com"}},
		Subject: "Welcome Bob@Example.com", Text: "Hi Bob, your key is 123", HTML: "<p>Hi Bob</p>",
		Headers:     []core.Header{{Name: "X-Customer", Value: "bob@example.com"}},
		Attachments: []core.Attachment{{Filename: "card.pdf", ContentType: "application/pdf", Data: []byte("%PDF-bob")}},
	}, core.StatusDelivered, "250 2.0.0 accepted for bob@example.com", "")
	fromBob := settle(t, db, core.Message{
		From: core.Address{Name: "Bob", Email: "BOB@example.com"}, To: []core.Address{shop}, Subject: "Contact form", Text: "question",
	}, core.StatusFailed, "550 rejected", "permanent failure: 550 BOB@EXAMPLE.COM may not send")
	replyToBob := settle(t, db, core.Message{
		From: shop, To: []core.Address{{Email: "desk@example.com"}}, ReplyTo: []core.Address{{Email: bob}}, Subject: "Enquiry", Text: "x",
	}, core.StatusDelivered, "250 ok", "")
	other := settle(t, db, Message(7), core.StatusDelivered, "250 ok", "")
	queued := Enqueue(t, db.Logs(), core.Message{From: shop, Bcc: []core.Address{{Email: bob}}, Subject: "Later", Text: "soon"})
	// A row as the PHP bridge writes it, not indexed yet.
	now := time.Now().UTC()
	if err := db.Gorm().Exec("INSERT INTO `"+db.TableName("logs")+"` (status, source, recipients, subject, text_body, html_body, message, "+
		"attempts, phase_attempts, used_fallback, simulated, provider_message_id, last_error, next_attempt_at, created_at, updated_at) "+
		"VALUES ('delivered', 'wordpress', 'bob@example.com', 'From the bridge', 'bridge body', '', ?, 1, 1, 0, 0, '', '', ?, ?, ?)",
		`{"from":{"email":"wp@example.com"},"to":[{"email":"Bob@example.com"}]}`, now, now, now).Error; err != nil {
		t.Fatal(err)
	}
	var bridged int64
	if err := db.Gorm().Raw("SELECT MAX(id) FROM `" + db.TableName("logs") + "`").Scan(&bridged).Error; err != nil {
		t.Fatal(err)
	}
	day := time.Now().UTC().Truncate(24 * time.Hour)
	// The outcome roll-ups (OutcomeBuckets; the Pro analytics' totals
	// over them are checked in adapters/pro/store:
	// testPersonalDataEraseKeepsTotals).
	totals := func() []core.OutcomeBucket {
		t.Helper()
		ob, err := db.Logs().OutcomeBuckets(ctx, day.Add(-24*time.Hour), day.Add(48*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return ob
	}
	totalsBefore := totals()
	statsBefore, err := db.Logs().QueueStats(ctx)
	if err != nil {
		t.Fatal(err)
	}

	naming := []int64{welcome.ID, fromBob.ID, replyToBob.ID, queued.ID, bridged}
	pages := []struct {
		email         string
		offset, limit int
		want          []int64
	}{
		{"BOB@example.com", 0, 10, naming},
		{bob, 1, 2, naming[1:3]},
		{bob, 4, 2, naming[4:]},
		{bob, 5, 2, nil},
		{"carol@example.com", 0, 10, []int64{welcome.ID}},
		{"nobody@example.com", 0, 10, nil},
	}
	for _, p := range pages {
		logs, err := db.Privacy().FindLogsNaming(ctx, p.email, p.offset, p.limit)
		if err != nil || !slices.Equal(ids(logs), p.want) {
			t.Fatalf("FindLogsNaming(%s, %d, %d) = %v, %v; want %v", p.email, p.offset, p.limit, ids(logs), err, p.want)
		}
	}
	logs, _ := db.Privacy().FindLogsNaming(ctx, bob, 0, 1)
	if m := logs[0].Message; m.Text != "Hi Bob, your key is 123" || m.HTML != "<p>Hi Bob</p>" || len(m.Attachments) != 1 {
		t.Fatalf("the export's log lacks its body: %+v", m)
	}
	// The address search still matches recipients only.
	if _, total, err := db.Logs().FindLogs(ctx, core.LogFilter{Search: "shop@example.com"}); err != nil || total != 1 {
		t.Fatalf("search for the sender's address found %d logs (%v), want 1 (the one sent to it)", total, err)
	}

	// Two logs per call: two calls erase the four settled logs, the third
	// finds none left; the queued one stays pending throughout.
	for i, want := range []int{2, 2, 0} {
		erased, pending, err := db.Privacy().EraseLogsNaming(ctx, "Bob@Example.com", core.ErasedAddress, 2)
		if err != nil || erased != want || pending != 1 {
			t.Fatalf("erase call %d = %d erased, %d pending, %v; want %d, 1", i+1, erased, pending, err, want)
		}
	}
	if logs, err := db.Privacy().FindLogsNaming(ctx, bob, 0, 10); err != nil || !slices.Equal(ids(logs), []int64{queued.ID}) {
		t.Fatalf("after the erase FindLogsNaming = %v, %v; want only the queued log", ids(logs), err)
	}
	for _, id := range []int64{welcome.ID, fromBob.ID, replyToBob.ID, bridged} {
		l, err := db.Logs().FindLogByID(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		js, _ := json.Marshal(l)
		if strings.Contains(strings.ToLower(string(js)), bob) || strings.Contains(string(js), "Bob Stone") {
			t.Errorf("log %d still names the address: %s", id, js)
		}
		if l.Message.Text != "" || l.Message.HTML != "" || len(l.Message.Attachments) != 0 {
			t.Errorf("log %d kept its body: %+v", id, l.Message)
		}
	}
	w, _ := db.Logs().FindLogByID(ctx, welcome.ID)
	wantTo := []core.Address{{Email: core.ErasedAddress}}
	if !reflect.DeepEqual(w.Message.To, wantTo) || w.Message.Cc[0].Email != "carol@example.com" || w.Status != core.StatusDelivered ||
		w.Message.Subject != "Welcome "+core.ErasedAddress || w.Message.Headers[0].Value != core.ErasedAddress ||
		w.History[0].Response != "250 2.0.0 accepted for "+core.ErasedAddress {
		t.Errorf("erased log %+v, history %+v", w.Message, w.History)
	}
	if f, _ := db.Logs().FindLogByID(ctx, fromBob.ID); f.Message.From.Email != core.ErasedAddress || f.Status != core.StatusFailed ||
		f.LastError != "permanent failure: 550 "+core.ErasedAddress+" may not send" {
		t.Errorf("erased sender log: from %+v, status %s, last error %q", f.Message.From, f.Status, f.LastError)
	}
	if o, _ := db.Logs().FindLogByID(ctx, other.ID); o.Message.Text != "Hello 7" {
		t.Errorf("another person's log changed: %+v", o.Message)
	}
	for _, search := range []string{bob, "welcome"} {
		found, _, err := db.Logs().FindLogs(ctx, core.LogFilter{Search: search})
		if err != nil {
			t.Fatal(err)
		}
		found = slices.DeleteFunc(found, func(l *core.Log) bool { return l.ID == queued.ID }) // still to be sent
		js, _ := json.Marshal(found)
		if strings.Contains(strings.ToLower(string(js)), bob) {
			t.Errorf("search %q answers with the address: %s", search, js)
		}
	}
	if got := totals(); !reflect.DeepEqual(got, totalsBefore) {
		t.Errorf("outcome totals changed: %+v, were %+v", got, totalsBefore)
	}
	if st, _ := db.Logs().QueueStats(ctx); st != statsBefore {
		t.Errorf("queue stats changed: %+v, were %+v", st, statsBefore)
	}
	// Erasing the replacement itself changes nothing.
	if erased, _, err := db.Privacy().EraseLogsNaming(ctx, core.ErasedAddress, core.ErasedAddress, 10); err != nil || erased != 0 {
		t.Fatalf("erasing the replacement = %d, %v", erased, err)
	}
}

// testSenderAddressesBackfill: migration 15 copies the sender and Reply-To
// addresses of the logs indexed before it into the addresses table, and
// passes over a message column that is not JSON.
func (s *suite) testSenderAddressesBackfill(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	l := settle(t, db, core.Message{
		From: core.Address{Name: "Bob", Email: "Bob@example.com"}, To: []core.Address{{Email: "desk@example.com"}},
		ReplyTo: []core.Address{{Email: "first@example.com"}, {Email: "Second@example.com"}}, Subject: "Hello", Text: "x",
	}, core.StatusDelivered, "250 ok", "")
	now := time.Now().UTC()
	for _, stmt := range []struct {
		sql  string
		args []any
	}{
		// The table as a build before schema 15 left it.
		{"DELETE FROM `" + db.TableName("log_recipients") + "` WHERE kind IN ('frm', 'rto')", nil},
		{"DELETE FROM `" + db.TableName("migrations") + "` WHERE version = 15", nil},
		{"INSERT INTO `" + db.TableName("logs") + "` (status, source, recipients, subject, text_body, html_body, message, " +
			"attempts, phase_attempts, used_fallback, simulated, provider_message_id, last_error, next_attempt_at, created_at, updated_at, recipients_indexed) " +
			"VALUES ('delivered', 'x', '', 'broken', '', '', 'not json', 1, 1, 0, 0, '', '', ?, ?, ?, 1)", []any{now, now, now}},
	} {
		if err := db.Gorm().Exec(stmt.sql, stmt.args...).Error; err != nil {
			t.Fatal(err)
		}
	}
	if logs, err := db.Privacy().FindLogsNaming(ctx, "bob@example.com", 0, 10); err != nil || len(logs) != 0 {
		t.Fatalf("before the migration FindLogsNaming = %v, %v", ids(logs), err)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	for _, email := range []string{"bob@example.com", "first@example.com", "second@example.com", "desk@example.com"} {
		if logs, err := db.Privacy().FindLogsNaming(ctx, email, 0, 10); err != nil || !slices.Equal(ids(logs), []int64{l.ID}) {
			t.Errorf("after the migration FindLogsNaming(%s) = %v, %v; want [%d]", email, ids(logs), err, l.ID)
		}
	}
}
