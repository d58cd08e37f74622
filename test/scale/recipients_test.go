package scale

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/internal/testdb"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

// The tests in this file check per-recipient outcomes through the built
// binary: a relay that limits the recipients of a transaction and
// refuses or defers some of them, and the log that records it.

// recipientsLog is the part of GET /logs/{id} these tests read.
type recipientsLog struct {
	Status            string                 `json:"status"`
	Attempts          int                    `json:"attempts"`
	Partial           bool                   `json:"partial"`
	RecipientsRefused int                    `json:"recipients_refused"`
	Recipients        core.RecipientOutcomes `json:"recipients"`
	ProviderMessageID string                 `json:"provider_message_id"`
	History           []struct {
		Outcome           string `json:"outcome"`
		Response          string `json:"response"`
		ProviderMessageID string `json:"provider_message_id"`
	} `json:"attempts_history"`
}

// readLog reads GET /logs/{id} into v, requiring a 200.
func (e *limitsEnv) readLog(t *testing.T, id int64, v any) {
	t.Helper()
	r := servicetest.Call(t, "GET", fmt.Sprintf("%s/logs/%d", e.svc.Base, id), "", e.admin)
	if r.Status != http.StatusOK {
		t.Fatalf("GET /logs/%d: %d %s", id, r.Status, r.Body)
	}
	r.JSON(t, v)
}

// getLog reads GET /logs/{id}.
func (e *limitsEnv) getLog(t *testing.T, id int64) recipientsLog {
	t.Helper()
	var l recipientsLog
	e.readLog(t, id, &l)
	return l
}

// waitLog waits until log id satisfies done.
func (e *limitsEnv) waitLog(t *testing.T, id int64, what string, done func(recipientsLog) bool) recipientsLog {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		l := e.getLog(t, id)
		if done(l) {
			return l
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: log %+v\n%s", what, l, tailOf(e.svc.Stderr.String(), 3000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// enqueueMessage commits one message for connection connID.
func (e *limitsEnv) enqueueMessage(t *testing.T, connID int64, msg core.Message) int64 {
	t.Helper()
	l := &core.Log{ConnectionID: &connID, Source: "test", Message: msg}
	if err := e.db.Logs().EnqueueLogs(context.Background(), []*core.Log{l}); err != nil {
		t.Fatal(err)
	}
	return l.ID
}

// addresses returns n addresses prefix0@example.org on.
func addresses(prefix string, n int) []core.Address {
	out := make([]core.Address, n)
	for i := range out {
		out[i] = core.Address{Email: fmt.Sprintf("%s%d@example.org", prefix, i)}
	}
	return out
}

// TestRecipientLimitAndRefusalAtRelay: a relay takes 100 recipients per
// transaction (452 4.5.3 after) and refuses one address with 550. A
// message to 250 recipients reaches 249 of them, each once, in three
// transactions, in one attempt; the log is delivered and partial, its
// detail names the refused address with the relay's reply, the list
// shows it partial and the dashboard counts one partial delivery.
func TestRecipientLimitAndRefusalAtRelay(t *testing.T) {
	const refused = "r7@example.org"
	e := newLimitsEnv(t)
	sink := smtpsink.Start(t, smtpsink.WithMaxRecipients(100), smtpsink.WithRefusedRecipients(refused))
	conn := e.connection(t, "relay", "smtp", sinkSettings(sink, nil))
	id := e.enqueueMessage(t, conn, core.Message{
		From: core.Address{Email: "shop@example.com"}, To: addresses("r", 250), Subject: "Newsletter", Text: "Hello.",
	})
	l := e.waitLog(t, id, "the log delivered", func(l recipientsLog) bool { return l.Status == core.StatusDelivered || l.Status == core.StatusFailed })

	got := sink.Messages()
	if len(got) != 3 {
		t.Fatalf("the relay got %d transactions, want 3", len(got))
	}
	seen := map[string]int{}
	for i, m := range got {
		if want := []int{100, 100, 49}[i]; len(m.To) != want {
			t.Errorf("transaction %d had %d recipients, want %d", i+1, len(m.To), want)
		}
		for _, r := range m.To {
			seen[r]++
		}
	}
	if len(seen) != 249 || seen[refused] != 0 {
		t.Errorf("%d distinct recipients got the message (the refused one %d times), want 249 and 0", len(seen), seen[refused])
	}
	for r, n := range seen {
		if n != 1 {
			t.Errorf("%s got the message %d times", r, n)
		}
	}
	if l.Status != core.StatusDelivered || !l.Partial || l.RecipientsRefused != 1 || l.Attempts != 1 {
		t.Fatalf("log: status %s, partial %v, refused %d, attempts %d; want delivered, partial, 1 refused, 1 attempt", l.Status, l.Partial, l.RecipientsRefused, l.Attempts)
	}
	if len(l.Recipients) != 250 || l.Recipients.Count(core.RecipientDelivered) != 249 {
		t.Fatalf("log recipients: %d, %d delivered", len(l.Recipients), l.Recipients.Count(core.RecipientDelivered))
	}
	i := slices.IndexFunc(l.Recipients, func(o core.RecipientOutcome) bool { return o.Email == refused })
	if i < 0 || l.Recipients[i].Status != core.RecipientRefused || !strings.Contains(l.Recipients[i].Reply, "550 5.1.1") {
		t.Errorf("the refused recipient's outcome: %+v", l.Recipients)
	}

	r := servicetest.Call(t, "GET", e.svc.Base+"/logs?status=delivered", "", e.admin)
	var list []recipientsLog
	r.JSON(t, &list)
	if len(list) != 1 || !list[0].Partial || list[0].RecipientsRefused != 1 || list[0].Recipients != nil {
		t.Errorf("GET /logs: %s", r.Body)
	}
	r = servicetest.Call(t, "GET", e.svc.Base+"/dashboard/stats", "", e.admin)
	var stats struct {
		Totals struct {
			Delivered int64 `json:"delivered"`
			Partial   int64 `json:"partial"`
		} `json:"totals"`
	}
	r.JSON(t, &stats)
	if stats.Totals.Delivered != 1 || stats.Totals.Partial != 1 {
		t.Errorf("dashboard totals: %s", r.Body)
	}
}

// TestDeferredRecipientRetriedAlone: a relay defers one recipient (450)
// of three. The first attempt delivers to the two others and leaves the
// log queued with that recipient deferred; the next attempt (its backoff
// cut short here) sends to it alone, and nobody gets the message twice.
func TestDeferredRecipientRetriedAlone(t *testing.T) {
	e := newLimitsEnv(t)
	sink := smtpsink.Start(t)
	sink.DeferRecipients("b@example.org")
	conn := e.connection(t, "relay", "smtp", sinkSettings(sink, nil))
	id := e.enqueueMessage(t, conn, core.Message{
		From:    core.Address{Email: "shop@example.com"},
		To:      []core.Address{{Email: "a@example.org"}, {Email: "b@example.org"}},
		Cc:      []core.Address{{Email: "c@example.org"}},
		Subject: "Order", Text: "Thanks.",
	})
	l := e.waitLog(t, id, "the first attempt", func(l recipientsLog) bool { return l.Attempts >= 1 && l.Status != core.StatusSending })
	if l.Status != core.StatusQueued || l.Recipients.Count(core.RecipientDeferred) != 1 || l.Recipients.Count(core.RecipientDelivered) != 2 {
		t.Fatalf("after the first attempt: status %s, recipients %+v; want queued, b deferred", l.Status, l.Recipients)
	}
	if got := sink.Messages(); len(got) != 1 || !slices.Equal(got[0].To, []string{"a@example.org", "c@example.org"}) {
		t.Fatalf("the relay got %+v, want one message to a and c", got)
	}

	sink.DeferRecipients()
	raw, err := sql.Open("mysql", testdb.DriverDSN(e.dsn))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`UPDATE wp_mailsvc_logs SET next_attempt_at = UTC_TIMESTAMP(6) WHERE id = ?`, id); err != nil {
		t.Fatal(err)
	}
	l = e.waitLog(t, id, "the retry", func(l recipientsLog) bool { return l.Status == core.StatusDelivered || l.Status == core.StatusFailed })
	got := sink.Messages()
	if len(got) != 2 || !slices.Equal(got[1].To, []string{"b@example.org"}) {
		t.Fatalf("the relay got %d messages (%+v), want a second one to b alone", len(got), got)
	}
	if l.Status != core.StatusDelivered || l.Partial || l.Attempts != 2 || l.Recipients.Count(core.RecipientDelivered) != 3 {
		t.Errorf("log: status %s, partial %v, attempts %d, recipients %+v", l.Status, l.Partial, l.Attempts, l.Recipients)
	}
	if !strings.Contains(string(got[1].Data), "To: <a@example.org>, <b@example.org>\r\nCc: <c@example.org>") {
		t.Errorf("the retry's To header changed:\n%s", got[1].Data)
	}
}
