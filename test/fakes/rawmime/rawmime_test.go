package rawmime

import (
	"slices"
	"strings"
	"testing"
)

const mixed = "From: =?UTF-8?q?Caf=C3=A9?= <shop@example.com>\r\n" +
	"To: Ann <ann@example.org>, bob@example.org\r\n" +
	"Bcc: hidden@example.org\r\n" +
	"Subject: =?UTF-8?q?h=C3=A9llo?=\r\n" +
	"X-Order: =?UTF-8?q?n=C2=B042?=\r\n" +
	"MIME-Version: 1.0\r\n" +
	"Content-Type: multipart/mixed; boundary=XX\r\n" +
	"\r\n" +
	"--XX\r\n" +
	"Content-Type: multipart/alternative; boundary=YY\r\n" +
	"\r\n" +
	"--YY\r\n" +
	"Content-Type: text/plain; charset=utf-8\r\n" +
	"Content-Transfer-Encoding: quoted-printable\r\n" +
	"\r\n" +
	"caf=C3=A9\r\nline 2\r\n" +
	"--YY\r\n" +
	"Content-Type: text/html; charset=utf-8\r\n" +
	"\r\n" +
	"<p>caf\xc3\xa9</p>\r\n" +
	"--YY--\r\n" +
	"--XX\r\n" +
	"Content-Type: image/png; name=\"logo.png\"\r\n" +
	"Content-Disposition: inline\r\n" +
	"Content-ID: <logo1>\r\n" +
	"Content-Transfer-Encoding: base64\r\n" +
	"\r\n" +
	"iVBORw==\r\n" +
	"--XX\r\n" +
	"Content-Type: text/plain\r\n" +
	"Content-Disposition: attachment; filename=\"=?UTF-8?q?r=C3=A9sum=C3=A9.txt?=\"\r\n" +
	"\r\n" +
	"not the body\r\n" +
	"--XX--\r\n"

func TestParse(t *testing.T) {
	m, err := Parse([]byte(mixed))
	if err != nil {
		t.Fatal(err)
	}
	if m.From != (Address{Name: "Café", Email: "shop@example.com"}) || m.Subject != "héllo" {
		t.Errorf("from %+v subject %q", m.From, m.Subject)
	}
	if !slices.Equal(m.To, []Address{{Name: "Ann", Email: "ann@example.org"}, {Email: "bob@example.org"}}) || len(m.Bcc) != 1 || m.Cc != nil {
		t.Errorf("to %+v cc %+v bcc %+v", m.To, m.Cc, m.Bcc)
	}
	if m.Text != "café\r\nline 2" || m.HTML != "<p>café</p>" {
		t.Errorf("text %q html %q, want the wire's CR LF kept", m.Text, m.HTML)
	}
	if m.Headers["X-Order"] != "n°42" || m.Headers["Subject"] != "" || m.Headers["Content-Type"] != "" || m.Header.Get("X-Order") == "" {
		t.Errorf("headers %v, raw X-Order %q", m.Headers, m.Header.Get("X-Order"))
	}
	if want := []string{"multipart/mixed", "multipart/alternative", "text/plain", "text/html", "image/png", "text/plain"}; !slices.Equal(m.ContentTypes, want) {
		t.Errorf("content types %v, want %v", m.ContentTypes, want)
	}
	if len(m.Attachments) != 2 {
		t.Fatalf("attachments %+v", m.Attachments)
	}
	logo, resume := m.Attachments[0], m.Attachments[1]
	if logo.Filename != "logo.png" || !logo.Inline || logo.ContentID != "logo1" || string(logo.Data) != "\x89PNG" {
		t.Errorf("inline part %+v", logo)
	}
	if resume.Filename != "résumé.txt" || resume.Inline || resume.ContentType != "text/plain" || string(resume.Data) != "not the body" {
		t.Errorf("attachment %+v", resume)
	}
	if string(m.Raw) != mixed {
		t.Error("Raw is not the message as given")
	}
}

func TestParseRefuses(t *testing.T) {
	tests := []struct {
		name, raw, wantErr string
	}{
		{"no header block", "no colon here", "read message"},
		{"bad From", "From: <<<\r\n\r\nx", "parse From"},
		{"bad To", "From: a@example.com\r\nTo: not an address\r\n\r\nx", "parse To"},
		{"bad Content-Type", "From: a@example.com\r\nContent-Type: text/\r\n\r\nx", "parse Content-Type"},
		{"unterminated multipart", "From: a@example.com\r\nContent-Type: multipart/mixed; boundary=Q\r\n\r\n--Q\r\nContent-Type: text/plain\r\n\r\nx", "decode text/plain part"},
		{"multipart without parts", "From: a@example.com\r\nContent-Type: multipart/mixed; boundary=Q\r\n\r\nnothing", "read multipart/mixed part"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Parse([]byte(tc.raw))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || m != nil {
				t.Fatalf("Parse = %+v, %v; want an error containing %q", m, err, tc.wantErr)
			}
		})
	}
}

func TestParseWithoutFrom(t *testing.T) {
	m, err := Parse([]byte("To: a@example.org\r\n\r\nhi"))
	if err != nil {
		t.Fatal(err)
	}
	if m.From != (Address{}) || m.Text != "hi" || len(m.Attachments) != 0 {
		t.Errorf("parsed %+v", m)
	}
}
