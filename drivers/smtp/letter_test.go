package smtp

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"net/mail"
	"net/textproto"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/mime"
)

var (
	boundaryRE  = regexp.MustCompile(`boundary=([0-9a-f]{60})`)
	messageIDRE = regexp.MustCompile(`(?m)^Message-ID: (<[a-z2-7]{32}@[^>]+>)\r$`)
)

// goMailBytes returns what drivers/mime and go-mail write for msg after
// its header block head.
func goMailBytes(t *testing.T, msg *core.Message, head mime.Head) ([]byte, error) {
	t.Helper()
	m, err := mime.Compose(msg)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	w := mime.NewHeadWriter(&b, head)
	if _, err := m.WriteTo(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := mail.ReadMessage(bytes.NewReader(b.Bytes())); err != nil {
		t.Fatalf("go-mail's output does not parse: %v", err)
	}
	return b.Bytes(), nil
}

// normalized replaces the random parts of a rendered message (the
// generated Message-ID and the boundary) with fixed text.
func normalized(b []byte) string {
	s := string(b)
	if m := boundaryRE.FindStringSubmatch(s); m != nil {
		s = strings.ReplaceAll(s, m[1], "BOUNDARY")
	}
	if m := messageIDRE.FindStringSubmatch(s); m != nil {
		s = strings.ReplaceAll(s, m[1], "<ID>")
	}
	return s
}

// checkSame renders msg and compares it with go-mail's bytes.
func checkSame(t *testing.T, name string, msg *core.Message) {
	t.Helper()
	head, err := mime.RenderHead(msg, time.Now(), false)
	if err != nil {
		return
	}
	want, wantErr := goMailBytes(t, msg, head)
	var got bytes.Buffer
	err = render(&got, msg, head)
	id := head.MessageID
	if (err != nil) != (wantErr != nil) || (err != nil && err.Error() != wantErr.Error()) {
		t.Errorf("%s: render error %v, go-mail's %v", name, err, wantErr)
		return
	}
	if err != nil {
		return
	}
	if g, w := normalized(got.Bytes()), normalized(want); g != w {
		t.Errorf("%s: rendering differs from go-mail's\n got: %q\nwant: %q", name, g, w)
	}
	if !bytes.Contains(got.Bytes(), []byte("\r\nMessage-ID: "+id+"\r\n")) {
		t.Errorf("%s: returned Message-ID %q is not the header's", name, id)
	}
	if !crlfLines(got.Bytes()) {
		t.Errorf("%s: a line of the rendering does not end in CRLF", name)
	}
	p, err := mail.ReadMessage(bytes.NewReader(got.Bytes()))
	if err != nil {
		t.Errorf("%s: rendering does not parse: %v", name, err)
		return
	}
	if p.Header.Get("MIME-Version") != "1.0" || p.Header.Get("Content-Type") == "" {
		t.Errorf("%s: MIME-Version %q, Content-Type %q", name, p.Header.Get("MIME-Version"), p.Header.Get("Content-Type"))
	}
}

// The renderer writes byte for byte what drivers/mime and go-mail write,
// but for the random Message-ID and boundary: text, HTML and both; custom
// headers (repeated, overriding X-Mailer, Message-ID and Date, structural
// ones ignored, bad names refused); non-ASCII subjects, names and header
// values; long subjects folded; long lines, dots, lone CRs and LFs and
// trailing spaces in the body.
func TestRenderMatchesGoMail(t *testing.T) {
	base := func() *core.Message {
		return &core.Message{
			From:    core.Address{Name: "Shop", Email: "shop@example.com"},
			To:      []core.Address{{Name: "Ann", Email: "ann@example.org"}},
			Subject: "Order 42",
			Text:    "Thanks for your order.",
		}
	}
	long := strings.Repeat("0123456789 abcdefghij ", 12)
	cases := []struct {
		name string
		edit func(m *core.Message)
	}{
		{"text only", func(m *core.Message) {}},
		{"html only", func(m *core.Message) { m.Text, m.HTML = "", "<p>Thanks</p>" }},
		{"text and html", func(m *core.Message) { m.HTML = "<p>Thanks <b>for</b> your order.</p>\n" }},
		{"empty body", func(m *core.Message) { m.Text = "" }},
		{"drain message", func(m *core.Message) {
			m.From, m.To, m.Subject, m.Text = core.Address{Email: "shop@example.com"}, []core.Address{{Email: "buyer1@example.com"}}, "msg-000001", strings.Repeat("x", 900)
		}},
		{"non-ASCII subject and names", func(m *core.Message) {
			m.From.Name = "Jürgen Müller"
			m.To = []core.Address{{Name: "Smith, Ann", Email: "ann@example.org"}, {Name: `Bob "the" Builder`, Email: "bob@example.org"}, {Email: "c@example.org"}}
			m.Cc = []core.Address{{Name: "Зоя", Email: "zoya@example.org"}}
			m.Bcc = []core.Address{{Name: "Hidden", Email: "hidden@example.net"}}
			m.ReplyTo = []core.Address{{Email: "reply@example.com"}, {Name: "Support Team", Email: "support@example.com"}}
			m.Subject = "Ваш заказ №42 — подтверждён ✓ and a long long long long long long long subject"
		}},
		{"long ASCII subject", func(m *core.Message) { m.Subject = long }},
		{"subject with one long word", func(m *core.Message) { m.Subject = strings.Repeat("x", 120) + " tail" }},
		{"subject with double and trailing spaces", func(m *core.Message) {
			m.Subject = "a  b   c " + strings.Repeat("word  ", 20) + " "
		}},
		{"subject with line breaks", func(m *core.Message) { m.Subject = "one\r\ntwo\nthree\rfour" }},
		{"many recipients folded", func(m *core.Message) {
			m.To = nil
			for i := range 12 {
				m.To = append(m.To, core.Address{Name: "Recipient Number " + strings.Repeat("x", i), Email: "r" + strings.Repeat("y", i) + "@example.org"})
			}
		}},
		{"custom headers", func(m *core.Message) {
			m.Headers = []core.Header{
				{Name: "X-Order", Value: "42"}, {Name: "List-Unsubscribe", Value: "<mailto:unsub@example.com>, <https://example.com/u?x=1>"},
				{Name: "X-Tag", Value: "one"}, {Name: "X-Tag", Value: "two"}, {Name: "x-mailer", Value: "lower"},
				{Name: "Content-Type", Value: "text/evil"}, {Name: "BCC", Value: "evil@example.com"}, {Name: " X-Spaced ", Value: "v"},
				{Name: "X-Unicode", Value: "grüße aus Köln"}, {Name: "X-Long", Value: long},
				{Name: "X-Break", Value: "a\r\nBcc: injected@example.com"}, {Name: ".dot", Value: "leading dot"},
				{Name: "A-First", Value: ""},
			}
		}},
		{"custom X-Mailer", func(m *core.Message) { m.Headers = []core.Header{{Name: "X-Mailer", Value: "WordPress"}} }},
		{"custom Message-ID and Date", func(m *core.Message) {
			m.Headers = []core.Header{{Name: "message-id", Value: " <abc.123@example.com> "}, {Name: "DATE", Value: "Tue, 1 Jul 2025 10:00:00 +0200"}, {Name: "Message-ID", Value: "<second@x>"}}
		}},
		{"custom Date that is no date", func(m *core.Message) { m.Headers = []core.Header{{Name: "Date", Value: "yesterday"}} }},
		{"non-ASCII Message-ID", func(m *core.Message) { m.Headers = []core.Header{{Name: "Message-ID", Value: "é@example.com"}} }},
		{"bad Message-ID", func(m *core.Message) { m.Headers = []core.Header{{Name: "Message-ID", Value: "a b@example.com"}} }},
		{"bad header name", func(m *core.Message) { m.Headers = []core.Header{{Name: "X Bad", Value: "v"}} }},
		{"sender domain unusable for the id", func(m *core.Message) { m.From.Email = "shop@[127.0.0.1]" }},
		{"body edge cases", func(m *core.Message) {
			m.Text = strings.Repeat("y", 200) + "\n.leading dot\r\n..two\rlone CR\n\ntrailing space \ntab\t\n= sign and ümlaut\n" + strings.Repeat("é", 60) + "\n."
			m.HTML = "<p>" + strings.Repeat("<b>x</b>", 40) + "</p>\r\n.\r\n<p>end</p> "
		}},
		{"text ending in CR", func(m *core.Message) { m.Text, m.HTML = "ends\r", "<p>starts</p>" }},
	}
	for _, tc := range cases {
		msg := base()
		tc.edit(msg)
		checkSame(t, tc.name, msg)
	}

	// Random subjects, names and header values around the folding length.
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", "Z", "0", " ", " ", "  ", ",", "\"", "é", "ü", "✓", "Ж", "-", ".", "=", "?", "_", "(", "@", "\t"}
	word := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	for i := range 300 {
		msg := base()
		msg.Subject = word(rng.IntN(120))
		msg.From.Name = word(rng.IntN(40))
		msg.To[0].Name = word(rng.IntN(40))
		msg.Headers = []core.Header{{Name: "X-Random", Value: word(rng.IntN(100))}}
		if i%2 == 0 {
			msg.HTML = word(rng.IntN(300))
		}
		msg.Text = word(rng.IntN(300))
		checkSame(t, "random "+msg.Subject, msg)
	}
}

// The rendered envelope is the one go-mail's client would send.
func TestLetterEnvelope(t *testing.T) {
	msg := &core.Message{
		From: core.Address{Name: "Shop", Email: "shop@example.com"},
		To:   []core.Address{{Name: "Ann", Email: "ann@example.org"}}, Cc: []core.Address{{Email: "cc@example.org"}},
		Bcc: []core.Address{{Email: "bcc@example.net"}}, Text: "x",
	}
	wantFrom, wantRcpts := "<shop@example.com>", []string{"<ann@example.org>", "<cc@example.org>", "<bcc@example.net>"}
	l, err := newLetter(msg, false)
	if err != nil {
		t.Fatal(err)
	}
	defer l.release()
	if l.from != wantFrom || strings.Join(l.rcpts, " ") != strings.Join(wantRcpts, " ") {
		t.Errorf("envelope %s → %v, want %s → %v", l.from, l.rcpts, wantFrom, wantRcpts)
	}
	if bytes.Contains(l.data.Bytes(), []byte("bcc@example.net")) {
		t.Error("the Bcc address is in the message data")
	}
	if _, err := newLetter(&core.Message{From: msg.From, Text: "x"}, false); err == nil {
		t.Error("a message without recipients was accepted")
	}
}

// writeData puts on the wire what textproto's dot-writer does for the
// same data: rendered messages, dots at line starts, data that does not
// end its last line, and (through the fallback) bare LFs and CRs.
func TestWriteDataMatchesDotWriter(t *testing.T) {
	inputs := []string{
		"", ".", "..", ".\r\n", "a\r\n.\r\n..\r\n.b", "Subject: x\r\n\r\nbody", "Subject: x\r\n\r\nbody\r\n",
		"a\n.b\n", "a\r\n.b\r", "a\rb\r\n.c", "\r\n", "\n", "x\r\n\r\n.\r\n.", strings.Repeat(".x\r\n", 100),
	}
	var rendered bytes.Buffer
	msg := &core.Message{From: core.Address{Email: "a@example.com"}, To: []core.Address{{Email: "b@example.org"}},
		Subject: "dots", Text: ".one\n..two\r\n.", HTML: ".<p>x</p>\n."}
	head, err := mime.RenderHead(msg, time.Now(), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := render(&rendered, msg, head); err != nil {
		t.Fatal(err)
	}
	inputs = append(inputs, rendered.String())
	if !crlfLines(rendered.Bytes()) {
		t.Errorf("the rendering has a bare LF or ends in CR: %q", rendered.String())
	}
	for _, in := range inputs {
		var want bytes.Buffer
		bw := bufio.NewWriter(&want)
		dw := textproto.NewWriter(bw).DotWriter()
		_, _ = dw.Write([]byte(in))
		_ = dw.Close()
		var got bytes.Buffer
		if err := writeData(bufio.NewWriter(&got), []byte(in)); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("writeData(%q) = %q, dot-writer %q", in, got.String(), want.String())
		}
	}
}
