package logbody_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/app/logbody"
)

// FuzzRedactBody builds a MIME body around a password-reset link (text or
// HTML, 7bit, quoted-printable or base64, LF or CRLF lines, with fuzzed
// text around the link) and checks that redaction never corrupts it (it
// parses into the same parts with the same headers), never leaves the
// link's key, and changes each part's decoded content exactly as
// redacting that content on its own does.
func FuzzRedactBody(f *testing.F) {
	f.Add("Hello,", "Thanks.", "AbCdEf1234567890XyZw", uint8(1), false, false)
	f.Add(strings.Repeat("x", 70), "", "k", uint8(1), true, false)
	f.Add("=3D?key=", "&token=t", "Zz", uint8(2), false, true)
	f.Add("--zz\nContent-Type: image/png\n\n", "\n", "abc", uint8(0), false, false)
	f.Fuzz(func(t *testing.T, prefix, suffix, key string, enc uint8, html, crlf bool) {
		key = strings.Map(func(r rune) rune {
			if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				return r
			}
			return -1
		}, key)
		if key == "" {
			key = "k"
		}
		const boundary = "zz-fuzz-boundary"
		if strings.Contains(prefix+suffix, boundary) {
			return // text that holds the delimiter is not a valid part
		}
		link := "http://example.test/wp-login.php?action=rp&key=" + key + "&login=bob"
		content := prefix + " " + link + " " + suffix
		ctype := "text/plain"
		if html {
			content = prefix + ` <a href="` + strings.ReplaceAll(link, "&", "&amp;") + `">reset</a> ` + suffix
			ctype = "text/html"
		}
		var cte, encoded string
		switch enc % 3 {
		case 0:
			cte, encoded = "7bit", content
		case 1:
			cte, encoded = "quoted-printable", qp(content)
		default:
			cte, encoded = "base64", wrap(base64.StdEncoding.EncodeToString([]byte(content)), 76)
		}
		body := "Content-Type: multipart/alternative; boundary=\"" + boundary + "\"\n\n" +
			"--" + boundary + "\nContent-Type: " + ctype + "; charset=UTF-8\nContent-Transfer-Encoding: " + cte + "\n\n" +
			encoded + "\n--" + boundary + "--\n"
		if crlf {
			body = strings.ReplaceAll(body, "\n", "\r\n")
		}

		r := &logbody.Redactor{}
		got, n := r.Body(body)
		head := strings.SplitAfterN(got, "\n\n", 2)
		if crlf {
			head = strings.SplitAfterN(got, "\r\n\r\n", 2)
		}
		if len(head) != 2 || !strings.HasPrefix(body, head[0]) {
			t.Fatalf("the top-level header changed:\n%q", got)
		}
		before, bh := parts(t, strings.SplitAfterN(body, head[0], 2)[1], boundary)
		after, ah := parts(t, head[1], boundary)
		if len(after) != 1 || len(before) != 1 {
			t.Fatalf("parts: %d before, %d after", len(before), len(after))
		}
		for k, v := range bh[0] {
			if strings.Join(ah[0][k], ",") != strings.Join(v, ",") {
				t.Fatalf("part header %s changed: %q → %q", k, v, ah[0][k])
			}
		}
		decoded := lines(after[0])
		for _, sep := range []string{"?key=", "&key=", "&amp;key="} {
			if strings.Contains(decoded, sep+key+"&") {
				t.Fatalf("the link's key is still there:\n%q", decoded)
			}
		}
		want, wn := r.Text(before[0])
		if lines(want) != decoded || wn != n {
			t.Fatalf("the part's content:\n got %q (%d)\nwant %q (%d)", decoded, n, lines(want), wn)
		}
	})
}

// lines normalises line breaks (a re-encoded part ends its lines with
// CRLF as quoted-printable asks).
func lines(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}
