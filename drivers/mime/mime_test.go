package mime_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	stdmime "mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/mime"
)

// leaf is one non-multipart body part of a parsed message.
type leaf struct {
	mediaType   string
	params      map[string]string
	disposition string
	filename    string
	contentID   string
	data        []byte
	// path lists the multipart media types enclosing the leaf, outermost first.
	path string
}

// parse reads raw as an RFC 5322 message and flattens its MIME tree.
// build builds msg and parses the result, failing t when either fails.
func build(t *testing.T, msg *core.Message) ([]byte, *mail.Message, []leaf) {
	t.Helper()
	raw, err := mime.Build(msg)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	m, leaves := parse(t, raw)
	return raw, m, leaves
}

func parse(t *testing.T, raw []byte) (*mail.Message, []leaf) {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("read message: %v\n%s", err, raw)
	}
	body, err := io.ReadAll(m.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	var leaves []leaf
	walk(t, m.Header, body, "", &leaves)
	return m, leaves
}

type header interface{ Get(string) string }

func walk(t *testing.T, h header, body []byte, path string, out *[]leaf) {
	t.Helper()
	mt, params, err := stdmime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		t.Fatalf("content type %q: %v", h.Get("Content-Type"), err)
	}
	if strings.HasPrefix(mt, "multipart/") {
		r := multipart.NewReader(bytes.NewReader(body), params["boundary"])
		for {
			p, err := r.NextRawPart()
			if err == io.EOF {
				return
			}
			if err != nil {
				t.Fatalf("next part: %v", err)
			}
			b, err := io.ReadAll(p)
			if err != nil {
				t.Fatalf("read part: %v", err)
			}
			walk(t, p.Header, b, path+"/"+mt, out)
		}
	}
	var data []byte
	switch strings.ToLower(h.Get("Content-Transfer-Encoding")) {
	case "base64":
		data, err = base64.StdEncoding.DecodeString(strings.NewReplacer("\r", "", "\n", "").Replace(string(body)))
	case "quoted-printable":
		data, err = io.ReadAll(quotedprintable.NewReader(bytes.NewReader(body)))
	default:
		data = body
	}
	if err != nil {
		t.Fatalf("decode %s part: %v", mt, err)
	}
	l := leaf{mediaType: mt, params: params, data: data, path: path, contentID: h.Get("Content-ID")}
	if d := h.Get("Content-Disposition"); d != "" {
		disp, dp, err := stdmime.ParseMediaType(d)
		if err != nil {
			t.Fatalf("content disposition %q: %v", d, err)
		}
		l.disposition = disp
		l.filename = dp["filename"]
	}
	*out = append(*out, l)
}

func baseMessage() *core.Message {
	return &core.Message{
		From:    core.Address{Name: "Site Owner", Email: "owner@example.com"},
		To:      []core.Address{{Name: "Ann", Email: "ann@example.org"}},
		Subject: "Hello",
	}
}

func TestBuildStructure(t *testing.T) {
	binary := make([]byte, 1024)
	for i := range binary {
		binary[i] = byte(i * 7)
	}
	tests := []struct {
		name        string
		text, html  string
		attachments []core.Attachment
		wantTop     string
		wantLeaves  []string // "path|mediaType|disposition"
	}{
		{
			name: "text only", text: "plain body\r\n",
			wantTop:    "text/plain",
			wantLeaves: []string{"|text/plain|"},
		},
		{
			name: "html only", html: "<p>hi</p>",
			wantTop:    "text/html",
			wantLeaves: []string{"|text/html|"},
		},
		{
			name: "text and html", text: "plain", html: "<p>html</p>",
			wantTop: "multipart/alternative",
			wantLeaves: []string{
				"/multipart/alternative|text/plain|",
				"/multipart/alternative|text/html|",
			},
		},
		{
			name: "alternative with attachment", text: "plain", html: "<p>html</p>",
			attachments: []core.Attachment{{Filename: "data.bin", ContentType: "application/octet-stream", Data: binary}},
			wantTop:     "multipart/mixed",
			wantLeaves: []string{
				"/multipart/mixed/multipart/alternative|text/plain|",
				"/multipart/mixed/multipart/alternative|text/html|",
				"/multipart/mixed|application/octet-stream|attachment",
			},
		},
		{
			name: "html with inline image", html: `<img src="cid:logo">`,
			attachments: []core.Attachment{{Filename: "logo.png", ContentType: "image/png", Data: binary, Inline: true, ContentID: "logo"}},
			wantTop:     "multipart/related",
			wantLeaves: []string{
				"/multipart/related|text/html|",
				"/multipart/related|image/png|inline",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := baseMessage()
			msg.Text, msg.HTML, msg.Attachments = tc.text, tc.html, tc.attachments
			_, m, leaves := build(t, msg)
			top, _, _ := stdmime.ParseMediaType(m.Header.Get("Content-Type"))
			if top != tc.wantTop {
				t.Errorf("top-level type = %q, want %q", top, tc.wantTop)
			}
			var got []string
			for _, l := range leaves {
				got = append(got, l.path+"|"+l.mediaType+"|"+l.disposition)
			}
			if strings.Join(got, "\n") != strings.Join(tc.wantLeaves, "\n") {
				t.Errorf("parts:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.wantLeaves, "\n"))
			}
			for _, l := range leaves {
				switch l.mediaType {
				case "text/plain":
					if string(l.data) != tc.text {
						t.Errorf("text part = %q, want %q", l.data, tc.text)
					}
				case "text/html":
					if string(l.data) != tc.html {
						t.Errorf("html part = %q, want %q", l.data, tc.html)
					}
				default:
					if !bytes.Equal(l.data, binary) {
						t.Errorf("attachment %s bytes differ from the original", l.filename)
					}
				}
			}
		})
	}
}

func TestBuildHeaders(t *testing.T) {
	msg := baseMessage()
	msg.Cc = []core.Address{{Email: "cc@example.org"}}
	msg.Bcc = []core.Address{{Name: "Hidden", Email: "secret@example.net"}}
	msg.ReplyTo = []core.Address{{Name: "Support", Email: "support@example.com"}}
	msg.Subject = "Grüße aus Köln — ✓ 日本語"
	msg.Text = "body"
	raw, id, err := mime.BuildWithID(msg)
	if err != nil {
		t.Fatalf("BuildWithID: %v", err)
	}
	if bytes.Contains(bytes.ToLower(raw), []byte("secret@example.net")) || bytes.Contains(bytes.ToLower(raw), []byte("\r\nbcc:")) {
		t.Errorf("Bcc leaked into the message:\n%s", raw)
	}
	m, _ := parse(t, raw)
	var dec stdmime.WordDecoder
	subject, err := dec.DecodeHeader(m.Header.Get("Subject"))
	if err != nil {
		t.Fatalf("decode subject: %v", err)
	}
	if subject != msg.Subject {
		t.Errorf("subject = %q, want %q", subject, msg.Subject)
	}
	checks := []struct {
		header string
		want   []core.Address
	}{
		{"From", []core.Address{msg.From}},
		{"To", msg.To},
		{"Cc", msg.Cc},
		{"Reply-To", msg.ReplyTo},
	}
	for _, c := range checks {
		list, err := m.Header.AddressList(c.header)
		if err != nil {
			t.Errorf("%s: %v", c.header, err)
			continue
		}
		if len(list) != len(c.want) {
			t.Errorf("%s has %d addresses, want %d", c.header, len(list), len(c.want))
			continue
		}
		for i, a := range list {
			if a.Name != c.want[i].Name || a.Address != c.want[i].Email {
				t.Errorf("%s[%d] = %q <%s>, want %q <%s>", c.header, i, a.Name, a.Address, c.want[i].Name, c.want[i].Email)
			}
		}
	}
	if got := m.Header.Get("Message-Id"); got != id || !strings.HasSuffix(id, "@example.com>") || !strings.HasPrefix(id, "<") {
		t.Errorf("Message-ID header %q, returned %q; want the same <...@example.com> value", got, id)
	}
	if _, err := m.Header.Date(); err != nil {
		t.Errorf("Date header: %v", err)
	}
	if m.Header.Get("Mime-Version") != "1.0" {
		t.Errorf("MIME-Version = %q", m.Header.Get("Mime-Version"))
	}
	if m.Header.Get("X-Mailer") != mime.Mailer {
		t.Errorf("X-Mailer = %q, want %q", m.Header.Get("X-Mailer"), mime.Mailer)
	}
	if bytes.Contains(bytes.ReplaceAll(raw, []byte("\r\n"), nil), []byte("\n")) {
		t.Errorf("message has bare LF line endings")
	}
}

func TestBuildCustomHeaders(t *testing.T) {
	tests := []struct {
		name    string
		headers []core.Header
		want    map[string]string // header -> value; "" means absent
		wantErr bool
	}{
		{
			name:    "plain custom header",
			headers: []core.Header{{Name: "X-Campaign", Value: "spring"}},
			want:    map[string]string{"X-Campaign": "spring"},
		},
		{
			name:    "injection is unfolded",
			headers: []core.Header{{Name: "X-Note", Value: "a\r\nBcc: victim@example.net"}},
			want:    map[string]string{"X-Note": "a Bcc: victim@example.net", "Bcc": ""},
		},
		{
			name:    "structural headers are ignored",
			headers: []core.Header{{Name: "Content-Type", Value: "text/evil"}, {Name: "from", Value: "x@evil.test"}},
			want:    map[string]string{"Content-Type": "text/plain; charset=UTF-8", "From": `"Site Owner" <owner@example.com>`},
		},
		{
			name:    "repeated names are joined",
			headers: []core.Header{{Name: "X-Tag", Value: "a"}, {Name: "X-Tag", Value: "b"}},
			want:    map[string]string{"X-Tag": "a, b"},
		},
		{
			name:    "custom message id",
			headers: []core.Header{{Name: "message-id", Value: "<abc.123@example.com>"}},
			want:    map[string]string{"Message-Id": "<abc.123@example.com>"},
		},
		{
			name:    "custom date",
			headers: []core.Header{{Name: "Date", Value: "Mon, 02 Jan 2006 15:04:05 +0000"}},
			want:    map[string]string{"Date": "Mon, 02 Jan 2006 15:04:05 +0000"},
		},
		{name: "header name with colon", headers: []core.Header{{Name: "X-Bad:", Value: "v"}}, wantErr: true},
		{name: "header name with space", headers: []core.Header{{Name: "X Bad", Value: "v"}}, wantErr: true},
		{name: "empty message id", headers: []core.Header{{Name: "Message-ID", Value: "<>"}}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := baseMessage()
			msg.Text = "body"
			msg.Headers = tc.headers
			raw, err := mime.Build(msg)
			if tc.wantErr {
				var ce *core.Error
				if err == nil || !errors.As(err, &ce) || ce.Code != core.EINVALID {
					t.Fatalf("Build error = %v, want an EINVALID core error", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			m, _ := parse(t, raw)
			for k, want := range tc.want {
				if got := m.Header.Get(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
				if n := len(m.Header[textproto.CanonicalMIMEHeaderKey(k)]); want != "" && n != 1 {
					t.Errorf("%s appears %d times, want once", k, n)
				}
			}
		})
	}
}

func TestBuildInlineContentID(t *testing.T) {
	tests := []struct {
		name, filename, cid, want string
	}{
		{"bare id", "logo.png", "logo", "<logo>"},
		{"bracketed id", "logo.png", "<logo@site>", "<logo@site>"},
		{"missing id uses filename", "banner.png", "", "<banner.png>"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := baseMessage()
			msg.HTML = `<img src="cid:x">`
			msg.Attachments = []core.Attachment{{Filename: tc.filename, ContentType: "image/png", Data: []byte{0x89, 'P', 'N', 'G', 0, 1, 2}, Inline: true, ContentID: tc.cid}}
			raw, _, leaves := build(t, msg)
			var found bool
			for _, l := range leaves {
				if l.mediaType == "image/png" {
					found = true
					if l.contentID != tc.want {
						t.Errorf("Content-ID = %q, want %q", l.contentID, tc.want)
					}
					if l.disposition != "inline" {
						t.Errorf("disposition = %q, want inline", l.disposition)
					}
				}
			}
			if !found {
				t.Fatalf("no image part in:\n%s", raw)
			}
		})
	}
}

func TestBuildAttachmentContentType(t *testing.T) {
	tests := []struct {
		name, filename, contentType, want string
	}{
		{"declared", "a.dat", "application/pdf", "application/pdf"},
		{"guessed from extension", "notes.txt", "", "text/plain"},
		{"unknown", "blob", "", "application/octet-stream"},
		{"header injection in type", "x.bin", "text/plain\r\nX-Evil: 1", "application/octet-stream"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := baseMessage()
			msg.Text = "see attached"
			msg.Attachments = []core.Attachment{{Filename: tc.filename, ContentType: tc.contentType, Data: []byte("payload")}}
			raw, _, leaves := build(t, msg)
			if len(leaves) != 2 {
				t.Fatalf("got %d parts, want 2", len(leaves))
			}
			a := leaves[1]
			if a.mediaType != tc.want {
				t.Errorf("content type = %q, want %q", a.mediaType, tc.want)
			}
			if a.filename != tc.filename || string(a.data) != "payload" {
				t.Errorf("attachment = %q %q, want %q payload", a.filename, a.data, tc.filename)
			}
			if bytes.Contains(raw, []byte("X-Evil")) {
				t.Errorf("content type injected a header")
			}
		})
	}
}

func TestBuildRejects(t *testing.T) {
	if _, err := mime.Build(nil); err == nil {
		t.Error("Build(nil) succeeded")
	}
	msg := baseMessage()
	msg.From = core.Address{}
	var ce *core.Error
	if _, err := mime.Build(msg); !errors.As(err, &ce) || ce.Code != core.EINVALID {
		t.Errorf("Build without sender = %v, want EINVALID", err)
	}
}

func TestEnvelope(t *testing.T) {
	msg := baseMessage()
	msg.Cc = []core.Address{{Name: "C", Email: "c@example.org"}}
	msg.Bcc = []core.Address{{Name: "B", Email: "b@example.org"}}
	from, rcpts := mime.Envelope(msg)
	if from != "owner@example.com" {
		t.Errorf("from = %q", from)
	}
	want := []string{"ann@example.org", "c@example.org", "b@example.org"}
	if strings.Join(rcpts, ",") != strings.Join(want, ",") {
		t.Errorf("rcpts = %v, want %v", rcpts, want)
	}
}

func TestNewMessageID(t *testing.T) {
	tests := []struct{ sender, wantSuffix string }{
		{"user@Example.COM", "@example.com"},
		{"no-domain", "@mailsvc.localhost"},
		{"user@", "@mailsvc.localhost"},
		{"user@bad>domain", "@mailsvc.localhost"},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		id, err := mime.NewMessageID(tc.sender)
		if err != nil {
			t.Fatalf("NewMessageID(%q): %v", tc.sender, err)
		}
		if !strings.HasSuffix(id, tc.wantSuffix) || strings.ContainsAny(id, "<> ") {
			t.Errorf("NewMessageID(%q) = %q, want suffix %q and no brackets", tc.sender, id, tc.wantSuffix)
		}
		if seen[id] {
			t.Errorf("duplicate id %q", id)
		}
		seen[id] = true
	}
}

// TestBuildEmbeds builds the messages WordPress's $embeds make (two
// inline images referred to from the HTML by cid:) in every layout a
// message takes, as PHPMailer lays out the same message: multipart/related
// around the HTML and the images, inside multipart/mixed when files are
// attached too, the images with Content-Disposition inline, their names
// and Content-IDs, bytes intact. (A message with a text alternative too,
// which wp_mail() makes only from a multipart body, has the related part
// around the alternative: PHPMailer puts it inside; both are RFC 2387
// layouts that mail clients show alike.)
func TestBuildEmbeds(t *testing.T) {
	logo := []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0xff, '.', '\r', '\n'}
	photo := bytes.Repeat([]byte{0xff, 0xd8, 0, '\n', '.', 0x80}, 400)
	pdf := []byte("%PDF-1.4\x00\xff")
	embeds := []core.Attachment{
		{Filename: "brand.png", ContentType: "image/png", Data: logo, Inline: true, ContentID: "brand-logo"},
		{Filename: "photo.jpg", ContentType: "image/jpeg", Data: photo, Inline: true, ContentID: "banner"},
	}
	file := core.Attachment{Filename: "invoice.pdf", ContentType: "application/pdf", Data: pdf}
	html := `<p><img src="cid:brand-logo"></p><p><img src="cid:banner"></p>`
	tests := []struct {
		name        string
		text        string
		attachments []core.Attachment
		wantTop     string
		wantLeaves  []string // path|type|disposition|filename|content-id
	}{
		{
			name: "html and two embeds", attachments: embeds, wantTop: "multipart/related",
			wantLeaves: []string{
				"/multipart/related|text/html|||",
				"/multipart/related|image/png|inline|brand.png|<brand-logo>",
				"/multipart/related|image/jpeg|inline|photo.jpg|<banner>",
			},
		},
		{
			name: "html, an attachment and two embeds", attachments: append([]core.Attachment{file}, embeds...), wantTop: "multipart/mixed",
			wantLeaves: []string{
				"/multipart/mixed/multipart/related|text/html|||",
				"/multipart/mixed/multipart/related|image/png|inline|brand.png|<brand-logo>",
				"/multipart/mixed/multipart/related|image/jpeg|inline|photo.jpg|<banner>",
				"/multipart/mixed|application/pdf|attachment|invoice.pdf|",
			},
		},
		{
			name: "text, html and two embeds", text: "plain", attachments: embeds, wantTop: "multipart/related",
			wantLeaves: []string{
				"/multipart/related/multipart/alternative|text/plain|||",
				"/multipart/related/multipart/alternative|text/html|||",
				"/multipart/related|image/png|inline|brand.png|<brand-logo>",
				"/multipart/related|image/jpeg|inline|photo.jpg|<banner>",
			},
		},
		{
			name: "html and an attachment, no embeds", attachments: []core.Attachment{file}, wantTop: "multipart/mixed",
			wantLeaves: []string{
				"/multipart/mixed|text/html|||",
				"/multipart/mixed|application/pdf|attachment|invoice.pdf|",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			msg := baseMessage()
			msg.Text, msg.HTML, msg.Attachments = tc.text, html, tc.attachments
			_, m, leaves := build(t, msg)
			if top, _, _ := stdmime.ParseMediaType(m.Header.Get("Content-Type")); top != tc.wantTop {
				t.Errorf("top-level type = %q, want %q", top, tc.wantTop)
			}
			var got []string
			for _, l := range leaves {
				got = append(got, strings.Join([]string{l.path, l.mediaType, l.disposition, l.filename, l.contentID}, "|"))
				want := map[string][]byte{"text/plain": []byte(tc.text), "text/html": []byte(html), "image/png": logo, "image/jpeg": photo, "application/pdf": pdf}[l.mediaType]
				if !bytes.Equal(l.data, want) {
					t.Errorf("%s part: bytes differ (%d vs %d)", l.mediaType, len(l.data), len(want))
				}
			}
			if strings.Join(got, "\n") != strings.Join(tc.wantLeaves, "\n") {
				t.Errorf("parts:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.wantLeaves, "\n"))
			}
		})
	}
}

// BenchmarkBuild builds a 1 KB HTML message without and with two embeds:
// the embeds' cost falls on messages that have them.
func BenchmarkBuild(b *testing.B) {
	img := bytes.Repeat([]byte{0x89, 'P', 'N', 'G', 0}, 2000)
	for _, tc := range []struct {
		name   string
		embeds []core.Attachment
	}{
		{"no embeds", nil},
		{"two embeds", []core.Attachment{
			{Filename: "brand.png", ContentType: "image/png", Data: img, Inline: true, ContentID: "brand-logo"},
			{Filename: "photo.png", ContentType: "image/png", Data: img, Inline: true, ContentID: "banner"},
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			msg := baseMessage()
			msg.HTML = "<p>" + strings.Repeat("x", 1000) + `</p><img src="cid:brand-logo"><img src="cid:banner">`
			msg.Attachments = tc.embeds
			b.ReportAllocs()
			for b.Loop() {
				if _, err := mime.Build(msg); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
