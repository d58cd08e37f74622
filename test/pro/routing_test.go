package protest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
)

// TestRoutingRulesThroughTheBinary routes mail through the built binary:
// A is the default connection; the rule "subject contains invoice" sends
// invoices through B, and a header rule sends X-Kind: digest through B as
// well; other mail stays on A. The test route explains the choice.
func TestRoutingRulesThroughTheBinary(t *testing.T) {
	sinkA, sinkB := smtpsink.Start(t), smtpsink.Start(t)
	dir := t.TempDir()
	svc, call := start(t, dir)
	smtpConn := func(name string, s *smtpsink.Sink) int64 {
		return createConnection(t, call, fmt.Sprintf(`{"name":%q,"driver":"smtp","settings":{"host":"127.0.0.1","port":%d,"encryption":"none","auth":false,"from_email":"shop@example.com"}}`, name, s.Port()))
	}
	a, b := smtpConn("A", sinkA), smtpConn("B", sinkB)
	if r := call("PUT", "/settings", fmt.Sprintf(`{"default_connection_id":%d}`, a)); r.Status != 200 {
		t.Fatalf("settings: %d %s", r.Status, r.Body)
	}
	for _, body := range []string{
		fmt.Sprintf(`{"name":"Invoices","connection_id":%d,"conditions":[{"field":"subject","operator":"contains","value":"invoice"}]}`, b),
		fmt.Sprintf(`{"name":"Digests","connection_id":%d,"conditions":[{"field":"header:X-Kind","operator":"is","value":"digest"}]}`, b),
	} {
		if r := call("POST", "/pro/routing-rules", body); r.Status != 201 {
			t.Fatalf("create rule: %d %s", r.Status, r.Body)
		}
	}
	r := call("POST", "/pro/routing-rules/test", `{"from":"shop@example.com","to":"c@example.com","subject":"Your INVOICE 7"}`)
	if r.Status != 200 || !strings.Contains(string(r.Body), fmt.Sprintf(`"connection_id":%d`, b)) || !strings.Contains(string(r.Body), `"result":"chosen"`) {
		t.Fatalf("test route: %d %s", r.Status, r.Body)
	}
	for _, m := range []string{
		"From: shop@example.com\nTo: c@example.com\nSubject: Your invoice 7\n\nplease pay\n",
		"From: shop@example.com\nTo: c@example.com\nSubject: Weekly\nX-Kind: digest\n\nnews\n",
		"From: shop@example.com\nTo: c@example.com\nSubject: Hello\n\nhi\n",
	} {
		if res := svc.Run(m, "sendmail", "-t"); res.Code != 0 {
			t.Fatalf("sendmail: %d %s", res.Code, res.Stderr)
		}
	}
	gotB, err := sinkB.WaitFor(2, 30*time.Second)
	if err != nil {
		t.Fatalf("connection B: %v", err)
	}
	gotA, err := sinkA.WaitFor(1, 30*time.Second)
	if err != nil {
		t.Fatalf("connection A: %v", err)
	}
	subjects := func(list []smtpsink.Received) string {
		var out []string
		for _, m := range list {
			for _, line := range strings.Split(string(m.Data), "\r\n") {
				if s, ok := strings.CutPrefix(line, "Subject: "); ok {
					out = append(out, s)
				}
			}
		}
		return strings.Join(out, "|")
	}
	if s := subjects(gotB); !strings.Contains(s, "invoice") || !strings.Contains(s, "Weekly") {
		t.Fatalf("B received %q, want the invoice and the digest", s)
	}
	if s := subjects(gotA); s != "Hello" || len(sinkA.Messages()) != 1 {
		t.Fatalf("A received %q, want only Hello", s)
	}
}
