package intake

import (
	"github.com/mailsvc/mailsvc/test/servicetest"

	"bytes"
	"fmt"
	"io"
	stdmime "mime"
	"mime/multipart"
	"net/mail"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
)

// The message's own header fields go out as they came through the
// listener and `mailsvc sendmail`, whatever the envelope says: To
// byte-identical when RCPT TO names others, List-Unsubscribe,
// List-Unsubscribe-Post and a 998-character field untouched,
// Feedback-ID in its case, earlier Received fields kept under the one
// the intake adds. Every delivered message passes the strict checks of
// strictMessage.
func TestOwnHeadersAndTrace(t *testing.T) {
	sink := smtpsink.Start(t)
	dir := t.TempDir()
	smtpAddr := servicetest.FreeAddr(t)
	svc := servicetest.Start(t, dir, "MAILSVC_SMTP_LISTEN="+smtpAddr)
	adminPW := adminPassword(t, svc)
	admin := basic("admin", adminPW)
	connID := useSink(t, svc, admin, sink.Host(), sink.Port())

	unsubscribe := "List-Unsubscribe: <https://example.org/unsubscribe?list=news&user=" + strings.Repeat("a1b2c3d4", 20) + ">, <mailto:unsubscribe@example.org?subject=unsubscribe>"
	long := "X-Long-Field: " + strings.Repeat("word ", 196) + "end!"
	if len(long) != 998 {
		t.Fatalf("the long field has %d characters", len(long))
	}
	own := []string{
		"To: Newsletter <list@example.net>",
		unsubscribe,
		"List-Unsubscribe-Post: List-Unsubscribe=One-Click",
		"Feedback-ID: 42:spring:newsletter:mailsvc",
		long,
		"X-Folded: first part\r\n\tsecond part",
	}
	earlier := "Received: from app.example.org (app.example.org [192.0.2.10])\r\n\tby relay.example.org with ESMTP id OLD1; Thu, 26 Nov 2026 10:00:00 +0000"
	head := earlier + "\r\nFrom: App <app@example.org>\r\n" + strings.Join(own, "\r\n") + "\r\n"

	submit := func(t *testing.T, subject string, rcpts []string) {
		t.Helper()
		c, err := smtp.Dial(smtpAddr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.Auth(sasl.NewPlainClient("", "admin", adminPW)); err != nil {
			t.Fatal(err)
		}
		msg := head + "Subject: " + subject + "\r\n\r\nHello.\r\n"
		if _, err := smtpsink.Send(c, "bounce@example.org", rcpts, msg); err != nil {
			t.Fatal(err)
		}
	}
	receivedRE := regexp.MustCompile(`^Received: from localhost \(([^ ()]+ )?\[127\.0\.0\.1\]\)\r\n\tby \S+ \(mailsvc\) with ESMTPA id [A-Z2-7]{12}(\r\n\tfor <([^>]+)>)?; ([^\r]+)\r\n`)

	t.Run("listener, RCPT TO differs from the To field", func(t *testing.T) {
		sink.Reset()
		submit(t, "own-headers-listener", []string{"ann@example.com", "bob@example.com"})
		got, err := sink.WaitFor(1, 60*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		r := got[0]
		if fmt.Sprint(r.To) != "[ann@example.com bob@example.com]" {
			t.Errorf("envelope %v, want the RCPT TO addresses", r.To)
		}
		data := string(r.Data)
		for _, f := range append(own, earlier) {
			if !strings.Contains(data, "\r\n"+f+"\r\n") {
				t.Errorf("the field %.60q… did not arrive byte for byte:\n%s", f, data)
			}
		}
		m := receivedRE.FindStringSubmatch(data)
		if m == nil {
			t.Fatalf("the message does not start with the listener's Received field:\n%.400s", data)
		}
		if m[2] != "" {
			t.Errorf("for <%s> with two recipients", m[3])
		}
		if _, err := mail.ParseDate(m[4]); err != nil {
			t.Errorf("Received date %q: %v", m[4], err)
		}
		if !strings.HasPrefix(data[len(m[0]):], earlier+"\r\n") {
			t.Errorf("the earlier Received field does not follow the listener's:\n%.600s", data)
		}
		strictMessage(t, r.Data)
	})

	t.Run("listener, one recipient: for clause", func(t *testing.T) {
		sink.Reset()
		submit(t, "own-headers-one", []string{"ann@example.com"})
		got, err := sink.WaitFor(1, 60*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		m := receivedRE.FindStringSubmatch(string(got[0].Data))
		if m == nil || m[3] != "ann@example.com" {
			t.Fatalf("Received field %q, want one for <ann@example.com>", m)
		}
		strictMessage(t, got[0].Data)
	})

	t.Run("sendmail: with local, To kept", func(t *testing.T) {
		sink.Reset()
		input := strings.ReplaceAll(head, "\r\n", "\n") + "Subject: own-headers-sendmail\n\nHello.\n"
		if _, errOut, code := result(svc.Run(input, "sendmail", "carl@example.com")); code != 0 {
			t.Fatalf("sendmail: exit %d: %s", code, errOut)
		}
		got, err := sink.WaitFor(1, 60*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		data := string(got[0].Data)
		re := regexp.MustCompile(`^Received: by \S+ \(mailsvc sendmail, from userid \d+\) with local id [A-Z2-7]{12}\r\n\tfor <carl@example.com>; ([^\r]+)\r\n`)
		m := re.FindStringSubmatch(data)
		if m == nil {
			t.Fatalf("no Received field of sendmail on top:\n%.400s", data)
		}
		if _, err := mail.ParseDate(m[1]); err != nil {
			t.Errorf("Received date %q: %v", m[1], err)
		}
		for _, f := range append(own, earlier) {
			if !strings.Contains(data, "\r\n"+f+"\r\n") {
				t.Errorf("the field %.60q… did not arrive byte for byte", f)
			}
		}
		if fmt.Sprint(got[0].To) != "[carl@example.com]" {
			t.Errorf("envelope %v", got[0].To)
		}
		strictMessage(t, got[0].Data)
	})

	t.Run("built message: a long non-ASCII subject folds after its first word", func(t *testing.T) {
		sink.Reset()
		subject := "Ваш заказ №42 подтверждён — спасибо за покупку в нашем магазине, ждём вас снова"
		body := fmt.Sprintf(`{"to":"ann@example.com","connection_id":%d,"subject":%q}`, connID, subject)
		if r := call(t, "POST", svc.Base+"/test-email", body, admin); r.Status != 200 {
			t.Fatalf("test email: %d %s", r.Status, r.Body)
		}
		got, err := sink.WaitFor(1, 60*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		p := strictMessage(t, got[0].Data)
		if s, err := new(stdmime.WordDecoder).DecodeHeader(p.Header.Get("Subject")); err != nil || s != subject {
			t.Errorf("Subject %q (%v), want %q", s, err, subject)
		}
	})
}

// emptyFirstLine matches a field whose first line holds nothing after
// the colon, its value starting on a folded line.
var emptyFirstLine = regexp.MustCompile(`(?m)^[!-9;-~]+:[ \t]*\r\n[ \t]`)

// strictMessage checks data as a strict reader does and returns it
// parsed: CRLF line endings, no line over 998 characters, no field whose
// value starts on a folded line, a header net/mail reads, a Content-Type
// that parses and a MIME tree whose every part reads to its end.
func strictMessage(t *testing.T, data []byte) *mail.Message {
	t.Helper()
	for i, line := range strings.Split(string(data), "\r\n") {
		if len(line) > 998 {
			t.Errorf("line %d has %d characters", i+1, len(line))
		}
		if strings.ContainsAny(line, "\r\n") {
			t.Errorf("line %d has a bare CR or LF: %q", i+1, line)
		}
	}
	head, _, _ := strings.Cut(string(data), "\r\n\r\n")
	if m := emptyFirstLine.FindString(head + "\r\n"); m != "" {
		t.Errorf("a field's value starts on a folded line: %q", m)
	}
	p, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("net/mail: %v", err)
	}
	for name, values := range p.Header {
		for _, v := range values {
			if v != strings.TrimSpace(v) {
				t.Errorf("%s has white space around its value: %q", name, v)
			}
		}
	}
	walkMIME(t, p.Header.Get("Content-Type"), p.Body, 0)
	return p
}

// walkMIME reads a MIME entity of the given Content-Type to its end.
func walkMIME(t *testing.T, contentType string, body io.Reader, depth int) {
	t.Helper()
	mediaType, params, err := stdmime.ParseMediaType(contentType)
	if err != nil {
		t.Fatalf("Content-Type %q: %v", contentType, err)
	}
	if !strings.HasPrefix(mediaType, "multipart/") {
		if _, err := io.ReadAll(body); err != nil {
			t.Errorf("part %s: %v", mediaType, err)
		}
		return
	}
	if depth > 8 {
		t.Fatal("MIME tree too deep")
	}
	r := multipart.NewReader(body, params["boundary"])
	parts := 0
	for {
		part, err := r.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", mediaType, err)
		}
		parts++
		walkMIME(t, part.Header.Get("Content-Type"), part, depth+1)
	}
	if parts == 0 {
		t.Errorf("%s without parts", mediaType)
	}
}
