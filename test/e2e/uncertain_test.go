package e2e

import (
	"database/sql"
	"fmt"
	"net/http"
	"net/mail"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/glebarez/go-sqlite" // the "sqlite" database/sql driver the service's store uses

	"github.com/mailsvc/mailsvc/test/fakes/mailgunfake"
	"github.com/mailsvc/mailsvc/test/fakes/postmarkfake"
	"github.com/mailsvc/mailsvc/test/fakes/resendfake"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

// TestUncertainAttempts sends through the built binary to fakes that
// lose the answer to a send: the attempt is recorded as uncertain and
// the message waits out the grace (moved forward here in the database
// rather than waited for). A provider that can look the message up
// (Mailgun, Postmark) and took it is not sent it again: the log becomes
// delivered with the id the lookup found. One that did not take it gets
// it once more after the grace. An SMTP relay, which cannot be asked,
// gets it again with the same Message-ID. Resend, which cannot be asked
// either, gets it again with the same Idempotency-Key and answers with
// the first message's id without sending it twice.
func TestUncertainAttempts(t *testing.T) {
	const (
		mgKey    = "key-0123456789abcdef0123456789abcdef"
		mgDomain = "mg.example.com"
		pmToken  = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
		reKey    = "re_123456789_abcdefghijklmnopqrstuv"
	)
	sink := smtpsink.Start(t)
	mg := mailgunfake.New(mgKey, mgDomain)
	defer mg.Close()
	pm := postmarkfake.New(pmToken)
	defer pm.Close()
	re := resendfake.New(reKey)
	defer re.Close()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "queue.db")
	svc, pw := adminOf(t, dir, "MAILSVC_ALLOW_CUSTOM_ENDPOINTS=true", "MAILSVC_DB=sqlite:"+dbPath)
	admin := basic("admin", pw)
	db, err := sql.Open("sqlite", dbPath+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	create := func(driver, settings string) int64 {
		r := call(t, "POST", svc.Base+"/connections", fmt.Sprintf(`{"name":%q,"driver":%q,"settings":%s}`, driver, driver, settings), admin)
		var c struct{ ID int64 }
		if r.JSON(t, &c); r.Status != 201 {
			t.Fatalf("create %s connection: %d %s", driver, r.Status, r.Body)
		}
		return c.ID
	}
	smtpConn := create("smtp", fmt.Sprintf(`{"host":%q,"port":%d,"encryption":"none","auth":false,"timeout":5,"from_email":"site@example.com"}`, sink.Host(), sink.Port()))
	mgConn := create("mailgun", fmt.Sprintf(`{"api_key":%q,"domain":%q,"base_url":%q,"from_email":"site@example.com"}`, mgKey, mgDomain, mg.URL))
	pmConn := create("postmark", fmt.Sprintf(`{"api_key":%q,"base_url":%q,"from_email":"site@example.com"}`, pmToken, pm.URL))
	reConn := create("resend", fmt.Sprintf(`{"api_key":%q,"base_url":%q,"from_email":"site@example.com"}`, reKey, re.URL))

	// messageIDs returns the Message-ID headers of what each provider kept.
	smtpIDs := func() []string {
		var ids []string
		for _, m := range sink.Messages() {
			if msg, err := mail.ReadMessage(strings.NewReader(string(m.Data))); err == nil {
				ids = append(ids, msg.Header.Get("Message-Id"))
			}
		}
		return ids
	}
	mgIDs := func() []string {
		var ids []string
		for _, m := range mg.Messages() {
			ids = append(ids, "<"+m.MessageIDHeader()+">")
		}
		return ids
	}
	pmIDs := func() []string {
		var ids []string
		for _, m := range pm.Messages() {
			ids = append(ids, m.Headers["Message-ID"])
		}
		return ids
	}
	reIDs := func() []string {
		var ids []string
		for _, m := range re.Messages() {
			ids = append(ids, m.Headers["Message-ID"])
		}
		return ids
	}

	tests := []struct {
		name   string
		conn   int64
		inject func()
		kept   func() []string
		// wantKept is how many copies the provider holds in the end,
		// all with the Message-ID of the uncertain attempt.
		wantKept int
		// wantPID says what the delivered log's provider message id is.
		wantPID func(kept []string) string
	}{
		{name: "mailgun took it, the answer was lost: found by the events API, not sent again", conn: mgConn,
			inject: func() { mg.TakeAndDropNext(1) }, kept: mgIDs, wantKept: 1,
			wantPID: func(kept []string) string { return strings.Trim(kept[0], "<>") }},
		{name: "postmark took it, the answer was lost: found by the outbound search, not sent again", conn: pmConn,
			inject: func() { pm.TakeAndDropNext(1) }, kept: pmIDs, wantKept: 1,
			wantPID: func([]string) string { return pm.Messages()[0].ID }},
		{name: "postmark dropped it unkept: sent again after the grace", conn: pmConn,
			inject: func() { pm.DropNextUnkept(1) }, kept: pmIDs, wantKept: 1,
			wantPID: func([]string) string { return pm.Messages()[len(pm.Messages())-1].ID }},
		{name: "smtp relay took it, the answer was lost: no lookup, sent again with the same Message-ID", conn: smtpConn,
			inject: func() { sink.TakeAndDropNext(1) }, kept: smtpIDs, wantKept: 2,
			wantPID: func([]string) string { return sink.Messages()[len(sink.Messages())-1].QueueID }},
		{name: "resend took it, the answer was lost: sent again with the same Idempotency-Key, answered with the first id, not sent twice", conn: reConn,
			inject: func() { re.TakeAndDropNext(1) }, kept: reIDs, wantKept: 1,
			wantPID: func([]string) string { return re.Messages()[len(re.Messages())-1].ID }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(tc.kept())
			tc.inject()
			r := call(t, "POST", svc.Base+"/test-email", fmt.Sprintf(`{"to":"rcpt@example.com","connection_id":%d}`, tc.conn), admin)
			var res struct {
				LogID  int64  `json:"log_id"`
				Status string `json:"status"`
			}
			if r.JSON(t, &res); r.Status != 200 || res.Status != "queued" {
				t.Fatalf("POST /test-email: %d %s; want the log queued after the uncertain attempt", r.Status, r.Body)
			}
			l := readLog(t, svc, admin, res.LogID)
			if len(l.History) != 1 || l.History[0].Outcome != "uncertain" || !l.NextAttemptAt.After(time.Now().Add(9*time.Minute)) {
				t.Fatalf("after the attempt: %+v; want one uncertain attempt and the next in 10 minutes", l)
			}

			// The grace has passed.
			if _, err := db.Exec(`UPDATE wp_mailsvc_logs SET next_attempt_at = ? WHERE id = ?`,
				time.Now().UTC().Add(-time.Second).Truncate(time.Microsecond), res.LogID); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(30 * time.Second)
			for l.Status == "queued" || l.Status == "sending" {
				if time.Now().After(deadline) {
					t.Fatalf("the log is still %s after the grace: %+v", l.Status, l)
				}
				time.Sleep(100 * time.Millisecond)
				l = readLog(t, svc, admin, res.LogID)
			}
			kept := tc.kept()[before:]
			if l.Status != "delivered" || len(l.History) != 2 || l.History[1].Outcome != "delivered" {
				t.Fatalf("log %+v; want delivered on its second record", l)
			}
			if len(kept) != tc.wantKept {
				t.Fatalf("the provider holds %d copies %q, want %d", len(kept), kept, tc.wantKept)
			}
			for _, id := range kept {
				if id == "" || id != "<"+l.History[0].ProviderMessageID+">" {
					t.Errorf("copy with Message-ID %q, want the uncertain attempt's <%s>", id, l.History[0].ProviderMessageID)
				}
			}
			if want := tc.wantPID(kept); l.ProviderMessageID != want {
				t.Errorf("provider message id %q, want %q", l.ProviderMessageID, want)
			}
		})
	}
}

// logDetail is what the uncertain test reads of GET /logs/{id}.
type logDetail struct {
	Status            string    `json:"status"`
	ProviderMessageID string    `json:"provider_message_id"`
	LastError         string    `json:"last_error"`
	NextAttemptAt     time.Time `json:"next_attempt_at"`
	History           []struct {
		Outcome           string `json:"outcome"`
		Response          string `json:"response"`
		ProviderMessageID string `json:"provider_message_id"`
	} `json:"attempts_history"`
}

func readLog(t *testing.T, svc *servicetest.Service, admin func(*http.Request), id int64) logDetail {
	t.Helper()
	r := call(t, "GET", fmt.Sprintf("%s/logs/%d", svc.Base, id), "", admin)
	var l logDetail
	if r.JSON(t, &l); r.Status != 200 {
		t.Fatalf("GET /logs/%d: %d %s", id, r.Status, r.Body)
	}
	return l
}
