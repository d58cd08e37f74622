package mailparse

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mailsvc/mailsvc/core"
)

// FuzzParse checks that Parse never panics, rejects only with EINVALID,
// and that what it accepts is well-formed: UTF-8 text, a content type and
// a filename on every attachment, and parsed addresses.
func FuzzParse(f *testing.F) {
	f.Add([]byte("From: a@example.org\nTo: b@example.org\nSubject: hi\n\nbody\n"))
	f.Add([]byte("Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain\n\nx\n--b\nContent-Type: image/png\nContent-Transfer-Encoding: base64\n\nAAEC\n--b--\n"))
	f.Add([]byte("Subject: =?UTF-8?B?w6k=?=\nContent-Type: text/plain; charset=iso-8859-1\nContent-Transfer-Encoding: quoted-printable\n\ncaf=E9=\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		msg, err := Parse(bytes.NewReader(data))
		if err != nil {
			if core.ErrorCode(err) != core.EINVALID {
				t.Fatalf("error with code %q: %v", core.ErrorCode(err), err)
			}
			return
		}
		for _, s := range []string{msg.Text, msg.HTML, msg.Subject} {
			if !utf8.ValidString(s) {
				t.Fatalf("invalid UTF-8 %q", s)
			}
		}
		if strings.Contains(msg.Text+msg.HTML, "\r") {
			t.Fatalf("carriage return left in a body")
		}
		for _, a := range msg.Attachments {
			if a.Filename == "" || a.ContentType == "" {
				t.Fatalf("attachment without name or type: %+v", a)
			}
		}
		for _, h := range msg.Headers {
			if strings.ContainsAny(h.Value, "\r\n") {
				t.Fatalf("header %s has a line break: %q", h.Name, h.Value)
			}
		}
	})
}
