package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
)

// TestResendToOtherRecipients sends a message through the built binary
// into the SMTP sink, then resends it to other people: the sink sees RCPT
// TO the new recipients only, To and Cc header fields naming them, no Bcc
// field, and a new Message-ID; the new log points to the original. A bad
// address is a 422 on its list.
func TestResendToOtherRecipients(t *testing.T) {
	sink := smtpsink.Start(t)
	svc, pw := adminOf(t, t.TempDir())
	admin := basic("admin", pw)
	r := call(t, "POST", svc.Base+"/connections", fmt.Sprintf(
		`{"name":"sink","driver":"smtp","settings":{"host":%q,"port":%d,"encryption":"none","auth":false,"from_email":"shop@example.com"}}`,
		sink.Host(), sink.Port()), admin)
	var conn struct{ ID int64 }
	r.JSON(t, &conn)
	if r.Status != 201 {
		t.Fatalf("create connection: %d %s", r.Status, r.Body)
	}
	call(t, "PUT", svc.Base+"/settings", fmt.Sprintf(`{"default_connection_id":%d}`, conn.ID), admin)

	msg := "From: shop@example.com\nTo: Bob <bob@example.com>\nCc: boss@example.com\nBcc: archive@example.com\n" +
		"Subject: Invoice 7\nX-Order: 7\n\nYour invoice.\n"
	if res := svc.Run(msg, "sendmail", "-t"); res.Code != 0 {
		t.Fatalf("sendmail: %d %s", res.Code, res.Stderr)
	}
	first, err := sink.WaitFor(1, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var logs []struct {
		ID     int64  `json:"id"`
		Status string `json:"status"`
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(logs) != 1 || logs[0].Status != "delivered" {
		if time.Now().After(deadline) {
			t.Fatalf("the first message is not logged delivered: %+v", logs)
		}
		time.Sleep(50 * time.Millisecond)
		call(t, "GET", svc.Base+"/logs", "", admin).JSON(t, &logs)
	}
	orig := logs[0].ID

	r = call(t, "POST", svc.Base+fmt.Sprintf("/logs/%d/resend", orig), `{"to":["not-an-address"]}`, admin)
	if r.Status != 422 || !strings.Contains(string(r.Body), `"to"`) {
		t.Fatalf("a bad address: %d %s", r.Status, r.Body)
	}
	r = call(t, "POST", svc.Base+fmt.Sprintf("/logs/%d/resend", orig), `{"to":["Ann <ann@example.net>"],"cc":["carl@example.net"],"bcc":["audit@example.net"]}`, admin)
	var res struct {
		NewID int64 `json:"new_id"`
	}
	r.JSON(t, &res)
	if r.Status != 200 || res.NewID == 0 {
		t.Fatalf("resend to others: %d %s", r.Status, r.Body)
	}
	all, err := sink.WaitFor(2, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	again := all[1]
	if want := []string{"ann@example.net", "carl@example.net", "audit@example.net"}; !slices.Equal(again.To, want) {
		t.Fatalf("RCPT TO %v, want %v", again.To, want)
	}
	head, _, _ := strings.Cut(string(again.Data), "\r\n\r\n")
	field := func(h, name string) string {
		for _, line := range strings.Split(h, "\r\n") {
			if v, ok := strings.CutPrefix(line, name+": "); ok {
				return v
			}
		}
		return ""
	}
	if to, cc := field(head, "To"), field(head, "Cc"); !strings.Contains(to, "ann@example.net") || strings.Contains(to, "bob@") ||
		!strings.Contains(cc, "carl@example.net") || strings.Contains(head, "audit@") || strings.Contains(head, "archive@") || strings.Contains(head, "boss@") {
		t.Fatalf("header of the resent message:\n%s", head)
	}
	firstHead, _, _ := strings.Cut(string(first[0].Data), "\r\n\r\n")
	if id := field(head, "Message-ID"); id == "" || id == field(firstHead, "Message-ID") {
		t.Fatalf("Message-ID %q, first %q", id, field(firstHead, "Message-ID"))
	}
	if field(head, "Subject") != "Invoice 7" || field(head, "X-Order") != "7" || !strings.Contains(string(again.Data), "Your invoice.") {
		t.Fatalf("the resent message lost its content:\n%s", again.Data)
	}

	var nl struct {
		ResentFrom *int64 `json:"resent_from"`
		Status     string `json:"status"`
	}
	deadline = time.Now().Add(30 * time.Second)
	for nl.Status != "delivered" {
		if time.Now().After(deadline) {
			t.Fatalf("the new log is %q", nl.Status)
		}
		time.Sleep(50 * time.Millisecond)
		if err := json.Unmarshal(call(t, "GET", svc.Base+fmt.Sprintf("/logs/%d", res.NewID), "", admin).Body, &nl); err != nil {
			t.Fatal(err)
		}
	}
	if nl.ResentFrom == nil || *nl.ResentFrom != orig {
		t.Fatalf("resent_from %v, want %d", nl.ResentFrom, orig)
	}
}
