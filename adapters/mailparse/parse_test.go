package mailparse

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"mime/quotedprintable"
	"reflect"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/core"
)

// binaryData returns n bytes covering every byte value, NUL and CR/LF
// included, which a text-mode mistake would corrupt.
func binaryData(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) + seed
	}
	return b
}

// b64 encodes data as base64 in 76-column lines ending in CRLF.
func b64(data []byte) string {
	s := base64.StdEncoding.EncodeToString(data)
	var b strings.Builder
	for len(s) > 76 {
		b.WriteString(s[:76] + "\r\n")
		s = s[76:]
	}
	b.WriteString(s + "\r\n")
	return b.String()
}

// qp encodes s as quoted-printable.
func qp(s string) string {
	var b bytes.Buffer
	w := quotedprintable.NewWriter(&b)
	_, _ = w.Write([]byte(s))
	_ = w.Close()
	return b.String()
}

// crlf turns LF line endings into CRLF.
func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

var (
	pdf = binaryData(3000, 1)
	png = binaryData(517, 9)
	zip = binaryData(1, 200)
)

var longHTML = "<p>" + strings.Repeat("Grüße und viele Wörter ", 20) + "</p>"

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want core.Message
	}{
		{
			name: "plain text without MIME headers, address headers and custom headers",
			in: "Received: from localhost by example.org\n" +
				"Return-Path: <bounce@example.org>\n" +
				"From: \"Site, Admin\" <admin@example.org>\n" +
				"To: alice@example.org, Bob <bob@example.org>\n" +
				"To: carol@example.org\n" +
				"Cc: Dave <dave@example.org>\n" +
				"Bcc: eve@example.org\n" +
				"Reply-To: Help Desk <help@example.org>\n" +
				"Subject: Hello\n\tfolded subject\n" +
				"X-Mailer-Source: cron\n" +
				"X-Tag: one\n" +
				"Message-ID: <abc.123@example.org>\n" +
				"X-Tag: two\n" +
				"x-early: last\n" +
				"\n" +
				"Line one.\nLine two.\n",
			want: core.Message{
				From:    core.Address{Name: "Site, Admin", Email: "admin@example.org"},
				To:      []core.Address{{Email: "alice@example.org"}, {Name: "Bob", Email: "bob@example.org"}, {Email: "carol@example.org"}},
				Cc:      []core.Address{{Name: "Dave", Email: "dave@example.org"}},
				Bcc:     []core.Address{{Email: "eve@example.org"}},
				ReplyTo: []core.Address{{Name: "Help Desk", Email: "help@example.org"}},
				Subject: "Hello folded subject",
				Text:    "Line one.\nLine two.\n",
				// In the order of the message; a repeated name with its first.
				Headers: []core.Header{{Name: "X-Mailer-Source", Value: "cron"}, {Name: "X-Tag", Value: "one"}, {Name: "X-Tag", Value: "two"}, {Name: "Message-ID", Value: "<abc.123@example.org>"}, {Name: "x-early", Value: "last"}},
			},
		},
		{
			name: "RFC 2047 subject, display names and custom header in UTF-8 and Latin-1",
			in: crlf("From: =?UTF-8?B?w4lxdWlwZSBTaXRl?= <team@example.org>\n" +
				"To: =?ISO-8859-1?Q?Fran=E7ois?= <francois@example.org>\n" +
				"Subject: =?UTF-8?Q?R=C3=A9sum=C3=A9?= =?UTF-8?B?IOKckw==?= ready\n" +
				"X-Note: =?iso-8859-1?q?caf=E9?=\n" +
				"Message-ID: not a message id\n" +
				"\n" +
				"Body\n"),
			want: core.Message{
				From:    core.Address{Name: "Équipe Site", Email: "team@example.org"},
				To:      []core.Address{{Name: "François", Email: "francois@example.org"}},
				Subject: "Résumé ✓ ready",
				Text:    "Body\n",
				Headers: []core.Header{{Name: "X-Note", Value: "café"}},
			},
		},
		{
			name: "quoted-printable Latin-1 text body",
			in: "From: a@example.org\nTo: b@example.org\nSubject: qp\n" +
				"MIME-Version: 1.0\n" +
				"Content-Type: text/plain; charset=\"ISO-8859-1\"\n" +
				"Content-Transfer-Encoding: quoted-printable\n\n" +
				"Gr=FC=DFe aus K=F6ln, a very long line that was soft-=\nwrapped by the encoder.\n",
			want: core.Message{
				From:    core.Address{Email: "a@example.org"},
				To:      []core.Address{{Email: "b@example.org"}},
				Subject: "qp",
				Text:    "Grüße aus Köln, a very long line that was soft-wrapped by the encoder.\n",
			},
		},
		{
			name: "HTML only, base64, windows-1252",
			in: "From: a@example.org\nTo: b@example.org\nSubject: html\n" +
				"Content-Type: text/html; charset=windows-1252\n" +
				"Content-Transfer-Encoding: base64\n\n" +
				b64([]byte("<p>\x93quoted\x94 \x80 5</p>")),
			want: core.Message{
				From:    core.Address{Email: "a@example.org"},
				To:      []core.Address{{Email: "b@example.org"}},
				Subject: "html",
				HTML:    "<p>“quoted” € 5</p>",
			},
		},
		{
			name: "multipart/alternative with quoted-printable text and base64 HTML",
			in: crlf("From: a@example.org\nTo: b@example.org\nSubject: alt\n"+
				"MIME-Version: 1.0\n"+
				"Content-Type: multipart/alternative; boundary=\"=_alt\"\n\n"+
				"This is a multi-part message in MIME format.\n"+
				"--=_alt\n"+
				"Content-Type: text/plain; charset=UTF-8\n"+
				"Content-Transfer-Encoding: quoted-printable\n\n") +
				qp("Grüße und viele Wörter, "+strings.Repeat("x", 90)+"\r\n") +
				crlf("--=_alt\n"+
					"Content-Type: text/html; charset=UTF-8\n"+
					"Content-Transfer-Encoding: base64\n\n") +
				b64([]byte(longHTML)) +
				"--=_alt--\r\n",
			want: core.Message{
				From:    core.Address{Email: "a@example.org"},
				To:      []core.Address{{Email: "b@example.org"}},
				Subject: "alt",
				// The CRLF before a boundary belongs to the boundary.
				Text: "Grüße und viele Wörter, " + strings.Repeat("x", 90),
				HTML: longHTML,
			},
		},
		{
			name: "multipart/mixed: alternative inside, then binary attachments with RFC 2231 and RFC 2047 names",
			in: crlf("From: a@example.org\nTo: b@example.org\nSubject: files\n"+
				"Content-Type: multipart/mixed; boundary=outer\n\n"+
				"--outer\n"+
				"Content-Type: multipart/alternative; boundary=inner\n\n"+
				"--inner\n"+
				"Content-Type: text/plain\n\n"+
				"See attached.\n"+
				"--inner\n"+
				"Content-Type: text/html\n\n"+
				"<p>See attached.</p>\n"+
				"--inner--\n"+
				"--outer\n"+
				"Content-Type: application/pdf\n"+
				"Content-Disposition: attachment; filename*=UTF-8''Rechnung%20M%C3%A4rz.pdf\n"+
				"Content-Transfer-Encoding: base64\n\n") +
				b64(pdf) +
				crlf("--outer\n"+
					"Content-Type: application/zip; name=\"=?UTF-8?B?w6l0w6kuemlw?=\"\n"+
					"Content-Disposition: attachment\n"+
					"Content-Transfer-Encoding: base64\n\n") +
				b64(zip) +
				crlf("--outer\n"+
					"Content-Type: text/csv; charset=utf-8\n"+
					"Content-Disposition: attachment; filename=\"report.csv\"\n\n"+
					"a,b\n1,2\n"+
					"--outer\n"+
					"Content-Type: text/plain; charset=utf-8\n"+
					"Content-Disposition: attachment; filename=notes.txt\n\n"+
					"kept as a file\n"+
					"--outer--\n"),
			want: core.Message{
				From:    core.Address{Email: "a@example.org"},
				To:      []core.Address{{Email: "b@example.org"}},
				Subject: "files",
				Text:    "See attached.",
				HTML:    "<p>See attached.</p>",
				Attachments: []core.Attachment{
					{Filename: "Rechnung März.pdf", ContentType: "application/pdf", Data: pdf},
					{Filename: "été.zip", ContentType: "application/zip", Data: zip},
					{Filename: "report.csv", ContentType: "text/csv", Data: []byte("a,b\r\n1,2")},
					{Filename: "notes.txt", ContentType: "text/plain; charset=utf-8", Data: []byte("kept as a file")},
				},
			},
		},
		{
			name: "multipart/related: HTML root and an inline image by Content-ID",
			in: crlf("From: a@example.org\nTo: b@example.org\nSubject: logo\n"+
				"Content-Type: multipart/mixed; boundary=m\n\n"+
				"--m\n"+
				"Content-Type: multipart/related; boundary=r; type=\"text/html\"\n\n"+
				"--r\n"+
				"Content-Type: text/html; charset=us-ascii\n\n"+
				"<img src=\"cid:logo@site\">\n"+
				"--r\n"+
				"Content-Type: image/png\n"+
				"Content-ID: <logo@site>\n"+
				"Content-Transfer-Encoding: base64\n\n") +
				b64(png) +
				crlf("--r\n"+
					"Content-Type: image/png\n"+
					"Content-Transfer-Encoding: base64\n\n") +
				b64(png[:10]) +
				crlf("--r--\n"+
					"--m\n"+
					"Content-Type: image/gif; name=photo.gif\n"+
					"Content-ID: <photo@site>\n"+
					"Content-Disposition: attachment\n"+
					"Content-Transfer-Encoding: base64\n\n") +
				b64(zip) +
				"--m--\r\n",
			want: core.Message{
				From:    core.Address{Email: "a@example.org"},
				To:      []core.Address{{Email: "b@example.org"}},
				Subject: "logo",
				HTML:    "<img src=\"cid:logo@site\">",
				Attachments: []core.Attachment{
					{Filename: "part1.png", ContentType: "image/png", Data: png, Inline: true, ContentID: "logo@site"},
					{Filename: "part2.png", ContentType: "image/png", Data: png[:10], Inline: true},
					{Filename: "photo.gif", ContentType: "image/gif", Data: zip, ContentID: "photo@site"},
				},
			},
		},
		{
			name: "unpadded base64, second text part becomes an attachment, empty group",
			in: "From: a@example.org\nTo: undisclosed-recipients:;\nBcc: b@example.org\nSubject: x\n" +
				"Content-Type: multipart/mixed; boundary=b\n\n" +
				"--b\nContent-Type: text/plain\n\nfirst\n" +
				"--b\nContent-Type: text/plain\n\nsecond\n" +
				"--b\nContent-Type: application/octet-stream\nContent-Transfer-Encoding: base64\n\nAAEC\n" +
				"--b\nContent-Type: application/octet-stream\nContent-Transfer-Encoding: BASE64\n\nAAECAw\n" +
				"--b--\n",
			want: core.Message{
				From:    core.Address{Email: "a@example.org"},
				Bcc:     []core.Address{{Email: "b@example.org"}},
				Subject: "x",
				Text:    "first",
				Attachments: []core.Attachment{
					{Filename: "part1.txt", ContentType: "text/plain", Data: []byte("second")},
					{Filename: "part2.bin", ContentType: "application/octet-stream", Data: []byte{0, 1, 2}},
					{Filename: "part3.bin", ContentType: "application/octet-stream", Data: []byte{0, 1, 2, 3}},
				},
			},
		},
		{
			name: "message/rfc822 attachment and no From header",
			in: "To: b@example.org\nSubject: fwd\nContent-Type: multipart/mixed; boundary=b\n\n" +
				"--b\nContent-Type: text/plain\n\nForwarded.\n" +
				"--b\nContent-Type: message/rfc822\n\nSubject: inner\n\ninner body\n" +
				"--b--\n",
			want: core.Message{
				To:      []core.Address{{Email: "b@example.org"}},
				Subject: "fwd",
				Text:    "Forwarded.",
				Attachments: []core.Attachment{
					{Filename: "part1.eml", ContentType: "message/rfc822", Data: []byte("Subject: inner\n\ninner body")},
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(tt.in))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			// The header block is kept as it came, lines ended by CRLF.
			head := strings.ReplaceAll(tt.in, "\r\n", "\n")
			head, _, _ = strings.Cut(head, "\n\n")
			if want := strings.ReplaceAll(head, "\n", "\r\n") + "\r\n"; got.RawHeader != want {
				t.Errorf("RawHeader = %q, want %q", got.RawHeader, want)
			}
			got.RawHeader = ""
			assertMessage(t, got, &tt.want)
		})
	}
}

// assertMessage compares messages field by field, attachments byte for byte.
func assertMessage(t *testing.T, got, want *core.Message) {
	t.Helper()
	g, w := *got, *want
	gotAtt, wantAtt := g.Attachments, w.Attachments
	g.Attachments, w.Attachments = nil, nil
	if !reflect.DeepEqual(g, w) {
		gj, _ := json.MarshalIndent(g, "", "  ")
		wj, _ := json.MarshalIndent(w, "", "  ")
		t.Errorf("message:\n got %s\nwant %s", gj, wj)
	}
	if len(gotAtt) != len(wantAtt) {
		t.Fatalf("got %d attachments %+v, want %d", len(gotAtt), names(gotAtt), len(wantAtt))
	}
	for i := range wantAtt {
		ga, wa := gotAtt[i], wantAtt[i]
		if !bytes.Equal(ga.Data, wa.Data) {
			t.Errorf("attachment %d (%s): %d bytes differ from the %d sent", i, wa.Filename, len(ga.Data), len(wa.Data))
		}
		ga.Data, wa.Data = nil, nil
		if !reflect.DeepEqual(ga, wa) {
			t.Errorf("attachment %d: got %+v, want %+v", i, ga, wa)
		}
	}
}

func names(list []core.Attachment) []string {
	var out []string
	for _, a := range list {
		out = append(out, a.Filename+" "+a.ContentType)
	}
	return out
}

func TestParseRejects(t *testing.T) {
	deep := "From: a@example.org\nTo: b@example.org\n"
	for i := 0; i <= MaxDepth; i++ {
		deep += "Content-Type: multipart/mixed; boundary=b" + strings.Repeat("x", i) + "\n\n--b" + strings.Repeat("x", i) + "\n"
	}
	deep += "Content-Type: text/plain\n\nhi\n"
	tests := []struct {
		name, in, wantMsg string
	}{
		{"no header block", "not a header line\n\nbody", "headers cannot be read"},
		{"multipart without boundary", "From: a@example.org\nContent-Type: multipart/mixed\n\nx", "has no boundary"},
		{"bad base64", "From: a@example.org\nContent-Type: application/pdf\nContent-Transfer-Encoding: base64\n\n!!!!\n", "base64"},
		{"unknown transfer encoding", "From: a@example.org\nContent-Transfer-Encoding: x-uuencode\n\nbegin 644 f\n", "x-uuencode"},
		{"bad address list", "From: a@example.org\nTo: <broken@\n\nx", "valid address list"},
		{"bad From", "From: @@@\n\nx", "valid address list"},
		{"unknown charset in non-UTF-8 text", "From: a@example.org\nContent-Type: text/plain; charset=x-klingon\n\n\xff\xfe\n", "unknown charset"},
		{"nesting too deep", deep, "deeper than"},
		{"unterminated multipart", "From: a@example.org\nContent-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain\n\nno end", "cannot be read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, err := Parse(strings.NewReader(tt.in))
			if err == nil {
				t.Fatalf("Parse accepted it: %+v", msg)
			}
			if core.ErrorCode(err) != core.EINVALID {
				t.Errorf("code %q, want %q (%v)", core.ErrorCode(err), core.EINVALID, err)
			}
			if !strings.Contains(core.ErrorMessage(err)+fieldText(err), tt.wantMsg) {
				t.Errorf("error %q does not mention %q", core.ErrorMessage(err)+fieldText(err), tt.wantMsg)
			}
		})
	}
}

func fieldText(err error) string {
	var b strings.Builder
	for _, v := range core.ErrorFields(err) {
		b.WriteString(" " + v)
	}
	return b.String()
}

func TestApplyEnvelope(t *testing.T) {
	a := func(name, email string) core.Address { return core.Address{Name: name, Email: email} }
	tests := []struct {
		name          string
		to, cc, bcc   []core.Address
		rcpts         []core.Address
		wantTo        []core.Address
		wantCc, wantB []core.Address
	}{
		{
			name:   "envelope equals headers",
			to:     []core.Address{a("Al", "al@x.org")},
			cc:     []core.Address{a("", "cy@x.org")},
			rcpts:  []core.Address{a("", "AL@x.org"), a("", "cy@x.org")},
			wantTo: []core.Address{a("Al", "al@x.org")},
			wantCc: []core.Address{a("", "cy@x.org")},
		},
		{
			name:   "envelope-only recipients become Bcc, header-only ones are dropped",
			to:     []core.Address{a("Al", "al@x.org"), a("", "other@x.org")},
			bcc:    []core.Address{a("", "hidden@x.org")},
			rcpts:  []core.Address{a("", "al@x.org"), a("", "new@x.org"), a("", "new@x.org")},
			wantTo: []core.Address{a("Al", "al@x.org")},
			wantB:  []core.Address{a("", "new@x.org")},
		},
		{
			name:   "duplicates across headers are kept once",
			to:     []core.Address{a("", "al@x.org")},
			cc:     []core.Address{a("", "al@x.org")},
			rcpts:  []core.Address{a("", "al@x.org")},
			wantTo: []core.Address{a("", "al@x.org")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &core.Message{To: tt.to, Cc: tt.cc, Bcc: tt.bcc}
			ApplyEnvelope(m, tt.rcpts)
			if !reflect.DeepEqual(m.To, tt.wantTo) || !reflect.DeepEqual(m.Cc, tt.wantCc) || !reflect.DeepEqual(m.Bcc, tt.wantB) {
				t.Errorf("got To %v Cc %v Bcc %v, want To %v Cc %v Bcc %v", m.To, m.Cc, m.Bcc, tt.wantTo, tt.wantCc, tt.wantB)
			}
		})
	}
}
