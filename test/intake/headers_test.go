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

// awaitCondition polls cond until it holds, failing after timeout.
func awaitCondition(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	servicetest.Poll(t, what, timeout, 50*time.Millisecond, cond)
}

// Internationalised addresses (RFC 6531): the listener offers SMTPUTF8
// and takes a non-ASCII address only with it; the SMTP driver relays
// such a message as it is to a next hop that offers SMTPUTF8, in ASCII
// (A-label domains, encoded words) to one that does not when only
// domains and text are non-ASCII, and refuses it permanently there when
// a local part is non-ASCII.
func TestSMTPUTF8(t *testing.T) {
	withUTF8 := smtpsink.Start(t, smtpsink.WithSMTPUTF8())
	without := smtpsink.Start(t)
	dir := t.TempDir()
	smtpAddr := servicetest.FreeAddr(t)
	svc := servicetest.Start(t, dir, "MAILSVC_SMTP_LISTEN="+smtpAddr)
	adminPW := adminPassword(t, svc)
	admin := basic("admin", adminPW)

	dial := func(t *testing.T) *smtp.Client {
		t.Helper()
		c, err := smtp.Dial(smtpAddr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if err := c.Auth(sasl.NewPlainClient("", "admin", adminPW)); err != nil {
			t.Fatal(err)
		}
		return c
	}
	// submit sends one message with SMTPUTF8 and returns its log id.
	submit := func(t *testing.T, from, to, data string) int64 {
		t.Helper()
		c := dial(t)
		if err := c.Mail(from, &smtp.MailOptions{UTF8: true}); err != nil {
			t.Fatalf("MAIL FROM:<%s> SMTPUTF8: %v", from, err)
		}
		if err := c.Rcpt(to, nil); err != nil {
			t.Fatalf("RCPT TO:<%s>: %v", to, err)
		}
		w, err := c.Data()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, data); err != nil {
			t.Fatal(err)
		}
		resp, err := w.CloseWithResponse()
		if err != nil {
			t.Fatalf("DATA: %v\n%s", err, svc.Stdout.String())
		}
		var id int64
		if _, err := fmt.Sscanf(resp.StatusText, "2.0.0 OK: queued as %d", &id); err != nil {
			t.Fatalf("DATA reply %q: %v", resp.StatusText, err)
		}
		return id
	}
	message := func(from, subject string) string {
		return "From: Jürgen <" + from + ">\r\nTo: ann@example.com\r\nSubject: " + subject + "\r\n\r\nHallo.\r\n"
	}

	t.Run("listener offers SMTPUTF8 and needs it for a non-ASCII address", func(t *testing.T) {
		c := dial(t)
		if ok, _ := c.Extension("SMTPUTF8"); !ok {
			t.Error("EHLO does not offer SMTPUTF8")
		}
		if err := c.Mail("jürgen@example.de", nil); smtpCode(err) != 553 {
			t.Errorf("MAIL FROM:<jürgen@example.de> without SMTPUTF8: %v, want 553", err)
		}
		if err := c.Mail("app@example.org", nil); err != nil {
			t.Fatal(err)
		}
		if err := c.Rcpt("zoë@example.com", nil); smtpCode(err) != 553 {
			t.Errorf("RCPT TO:<zoë@example.com> without SMTPUTF8: %v, want 553", err)
		}
	})

	useSink(t, svc, admin, withUTF8.Host(), withUTF8.Port())
	t.Run("next hop with SMTPUTF8: relayed as it is", func(t *testing.T) {
		submit(t, "jürgen@example.de", "ann@example.com", message("jürgen@example.de", "Grüße utf8-hop"))
		got, err := withUTF8.WaitFor(1, 60*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		r := got[0]
		if !r.UTF8 || r.From != "jürgen@example.de" {
			t.Errorf("MAIL FROM:<%s> SMTPUTF8=%v, want jürgen@example.de with SMTPUTF8", r.From, r.UTF8)
		}
		if !bytes.Contains(r.Data, []byte("\r\nSubject: Grüße utf8-hop\r\n")) || !bytes.Contains(r.Data, []byte("\r\nFrom: Jürgen <jürgen@example.de>\r\n")) {
			t.Errorf("the UTF-8 fields did not arrive as they came:\n%s", r.Data)
		}
	})

	useSink(t, svc, admin, without.Host(), without.Port())
	t.Run("next hop without SMTPUTF8: a non-ASCII domain goes as its A-label", func(t *testing.T) {
		submit(t, "app@bücher.example", "ann@example.com", message("app@bücher.example", "Grüße ascii-hop"))
		got, err := without.WaitFor(1, 60*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		r := got[0]
		if r.UTF8 || r.From != "app@xn--bcher-kva.example" {
			t.Errorf("MAIL FROM:<%s> SMTPUTF8=%v, want app@xn--bcher-kva.example without SMTPUTF8", r.From, r.UTF8)
		}
		for i, c := range r.Data {
			if c >= 0x80 {
				t.Fatalf("byte %d of the message is not ASCII:\n%s", i, r.Data)
			}
		}
		p := strictMessage(t, r.Data)
		from, err := p.Header.AddressList("From")
		if err != nil || len(from) != 1 || from[0].Name != "Jürgen" || from[0].Address != "app@xn--bcher-kva.example" {
			t.Errorf("From %v (%v)", from, err)
		}
		if s, err := new(stdmime.WordDecoder).DecodeHeader(p.Header.Get("Subject")); err != nil || s != "Grüße ascii-hop" {
			t.Errorf("Subject %q (%v)", s, err)
		}
	})

	t.Run("next hop without SMTPUTF8: a non-ASCII local part is refused for good", func(t *testing.T) {
		id := submit(t, "jürgen@example.de", "ann@example.com", message("jürgen@example.de", "Grüße refused"))
		var body string
		awaitCondition(t, "the log to fail", 60*time.Second, func() bool {
			r := call(t, "GET", fmt.Sprintf("%s/logs/%d", svc.Base, id), "", admin)
			body = string(r.Body)
			return strings.Contains(body, `"status":"failed"`)
		})
		if !strings.Contains(body, "SMTPUTF8") || !strings.Contains(body, "jürgen@example.de") {
			t.Errorf("the failure does not give its reason: %s", body)
		}
		if n := len(without.Messages()); n != 1 {
			t.Errorf("the sink holds %d messages, want only the earlier one", n)
		}
	})
}
