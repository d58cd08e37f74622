package logbody_test

import (
	"encoding/base64"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/app/logbody"
	"github.com/mailsvc/mailsvc/core"
)

// The mails WordPress core sends with a one-time link, as wp-includes and
// wp-admin/includes write them (site http://example.test).
const (
	resetMail = `Someone has requested a password reset for the following account:

Site Name: Example

Username: bob

To reset your password, visit the following address:

http://example.test/wp-login.php?action=rp&key=AbCdEf1234567890XyZw&login=bob&wp_lang=en_US

This password reset request originated from the IP address 127.0.0.1.
`
	resetKept = `Someone has requested a password reset for the following account:

Site Name: Example

Username: bob

To reset your password, visit the following address:

http://example.test/wp-login.php?action=rp&key=[redacted]&login=bob&wp_lang=en_US

This password reset request originated from the IP address 127.0.0.1.
`
)

func TestRedactorText(t *testing.T) {
	r, errs := logbody.NewRedactor([]string{`/ORDER-[0-9]{6}/`, `(?i)pin: (\d{4})`, `#voucher (\w+)#i`})
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	tests := []struct {
		name, in, want string
		n              int
	}{
		{"password reset", resetMail, resetKept, 1},
		{"password reset, WordPress 7.1's parameter order", "visit the following address:\n\nhttp://example.test/wp-login.php?login=bob&key=SxzlCL1ZHkXSS5KQW3gu&action=rp&wp_lang=en_US\n",
			"visit the following address:\n\nhttp://example.test/wp-login.php?login=bob&key=[redacted]&action=rp&wp_lang=en_US\n", 1},
		{"new user set-password", "To set your password, visit the following address:\n\nhttp://example.test/wp-login.php?action=rp&key=Zy09xW&login=new%20user\n",
			"To set your password, visit the following address:\n\nhttp://example.test/wp-login.php?action=rp&key=[redacted]&login=new%20user\n", 1},
		{"email change confirmation", "click: http://example.test/wp-admin/profile.php?newuseremail=5f4dcc3b5aa765d61d8327deb882cf99 to confirm",
			"click: http://example.test/wp-admin/profile.php?newuseremail=[redacted] to confirm", 1},
		{"admin email confirmation", "http://example.test/wp-admin/options.php?adminhash=9a0364b9e99bb480dd25e1f0284c8555",
			"http://example.test/wp-admin/options.php?adminhash=[redacted]", 1},
		{"personal-data request confirmation", "http://example.test/wp-login.php?action=confirmaction&request_id=12&confirm_key=q1w2e3r4t5y6",
			"http://example.test/wp-login.php?action=confirmaction&request_id=12&confirm_key=[redacted]", 1},
		{"personal-data export download", "http://example.test/wp-content/uploads/wp-personal-data-exports/wp-personal-data-file-Ab12Cd34Ef56Gh78.zip\n",
			"http://example.test/wp-content/uploads/wp-personal-data-exports/wp-personal-data-file-[redacted]\n", 1},
		{"HTML entities as esc_url writes them", `<a href="http://example.test/wp-login.php?action=rp&#038;key=K1&#038;login=bob">reset</a> <a href="/x?a=1&amp;token=T2">x</a>`,
			`<a href="http://example.test/wp-login.php?action=rp&#038;key=[redacted]&#038;login=bob">reset</a> <a href="/x?a=1&amp;token=[redacted]">x</a>`, 2},
		{"credential parameter names", "https://cdn.test/f?X-Amz-Signature=abc&X-Amz-Date=1&access_token=t&sig=s&code=123&pass=p&auth=a&_wpnonce=n&api-key=k",
			"https://cdn.test/f?X-Amz-Signature=[redacted]&X-Amz-Date=1&access_token=[redacted]&sig=[redacted]&code=[redacted]&pass=[redacted]&auth=[redacted]&_wpnonce=[redacted]&api-key=[redacted]", 8},
		{"a link inside another's value", "https://example.test/login?redirect_to=https://example.test/wp-login.php?key=K9&x=1",
			"https://example.test/login?redirect_to=https://example.test/wp-login.php?key=[redacted]&x=1", 1},
		{"hex entity separator", `<a href="/r?a=1&#x26;token=T3">`, `<a href="/r?a=1&#x26;token=[redacted]">`, 1},
		{"not after a separator", "monkey=banana; apikey: x; a key=value", "monkey=banana; apikey: x; a key=value", 0},
		{"other parameters kept", "https://shop.test/p?author=5&utm_source=news&page=2&login=bob#key=frag",
			"https://shop.test/p?author=5&utm_source=news&page=2&login=bob#key=frag", 0},
		{"already redacted", resetKept, resetKept, 0},
		{"no link", "Hello,\nyour order shipped.\n", "Hello,\nyour order shipped.\n", 0},
		{"site pattern, whole match", "Your order ORDER-123456 is ready", "Your order [redacted] is ready", 1},
		{"site pattern, capture group", "Your PIN: 1234.", "Your PIN: [redacted].", 1},
		{"site pattern in PHP form with flags", "VOUCHER abc42 inside", "VOUCHER [redacted] inside", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, n := r.Body(tt.in)
			if got != tt.want || n != tt.n {
				t.Errorf("Body:\n got %q (%d)\nwant %q (%d)", got, n, tt.want, tt.n)
			}
		})
	}
}

func TestNewRedactorReportsBadPatterns(t *testing.T) {
	r, errs := logbody.NewRedactor([]string{`(unclosed`, ``, `/ok-[0-9]+/`})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "(unclosed") {
		t.Fatalf("errors = %v, want one naming the bad pattern", errs)
	}
	if got, n := r.Text("ok-42"); got != "[redacted]" || n != 1 {
		t.Errorf("the good pattern still applies: %q %d", got, n)
	}
}

// qp encodes s as quoted-printable with LF line endings.
func qp(s string) string {
	var b strings.Builder
	w := quotedprintable.NewWriter(&b)
	_, _ = w.Write([]byte(s))
	_ = w.Close()
	return strings.ReplaceAll(b.String(), "\r\n", "\n")
}

// parts parses a multipart body with boundary b and returns each part's
// decoded content and headers.
func parts(t *testing.T, body, b string) (contents []string, headers []map[string][]string) {
	t.Helper()
	mr := multipart.NewReader(strings.NewReader(body), b)
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			return contents, headers
		}
		if err != nil {
			t.Fatalf("parse the redacted body: %v\n%s", err, body)
		}
		var r io.Reader = p
		switch p.Header.Get("Content-Transfer-Encoding") {
		case "quoted-printable":
			r = quotedprintable.NewReader(p)
		case "base64":
			r = base64.NewDecoder(base64.StdEncoding, p)
		}
		c, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("decode a part of the redacted body: %v\n%s", err, body)
		}
		contents = append(contents, string(c))
		headers = append(headers, p.Header)
	}
}

func TestRedactorMIMEBody(t *testing.T) {
	link := "http://example.test/wp-login.php?action=rp&key=AbCdEf1234567890XyZw&login=bob"
	long := "To reset your password, visit the following address, which is long enough to be wrapped: " + link + " — thanks."
	html := `<p>Reset: <a href="` + strings.ReplaceAll(link, "&", "&amp;") + `">here</a></p>`
	pdf := base64.StdEncoding.EncodeToString([]byte("%PDF-1.4 ?key=notatext"))
	body := "This is a multi-part message in MIME format.\n" +
		"--outer\nContent-Type: multipart/alternative; boundary=\"inner\"\n\n" +
		"--inner\nContent-Type: text/plain; charset=UTF-8\nContent-Transfer-Encoding: quoted-printable\n\n" + qp(long) + "\n" +
		"--inner\nContent-Type: text/html; charset=UTF-8\nContent-Transfer-Encoding: base64\n\n" + wrap(base64.StdEncoding.EncodeToString([]byte(html)), 76) + "\n" +
		"--inner--\n\n" +
		"--outer\nContent-Type: application/pdf\nContent-Transfer-Encoding: base64\n\n" + pdf + "\n" +
		"--outer--\n"
	if !strings.Contains(qp(long), "=\n") {
		t.Fatal("the test link is not split by a soft line break")
	}
	got, n := (&logbody.Redactor{}).Body(body)
	if n != 2 {
		t.Errorf("redacted %d values, want 2 (the QP text and the base64 HTML)", n)
	}
	// The outer structure is whole: its parts, with the same headers.
	outer, oh := parts(t, got, "outer")
	if len(outer) != 2 || oh[1]["Content-Type"][0] != "application/pdf" {
		t.Fatalf("outer parts = %d %v", len(outer), oh)
	}
	if !strings.Contains(got, "\n"+pdf+"\n") {
		t.Error("the PDF part changed")
	}
	_, params, err := mime.ParseMediaType(oh[0]["Content-Type"][0])
	if err != nil || params["boundary"] != "inner" {
		t.Fatalf("inner boundary: %v %v", params, err)
	}
	inner, _ := parts(t, outer[0], "inner")
	wantText := strings.Replace(long, "key=AbCdEf1234567890XyZw", "key=[redacted]", 1)
	wantHTML := strings.Replace(html, "key=AbCdEf1234567890XyZw", "key=[redacted]", 1)
	if len(inner) != 2 || inner[0] != wantText || inner[1] != wantHTML {
		t.Errorf("inner parts:\n got %q\nwant %q", inner, []string{wantText, wantHTML})
	}
	// Redacting again changes nothing.
	if again, n := (&logbody.Redactor{}).Body(got); again != got || n != 0 {
		t.Errorf("a second pass redacted %d values", n)
	}
}

func TestRedactorBodyWithoutBoundaryHeader(t *testing.T) {
	// wp_mail() given a multipart body whose Content-Type (with the
	// boundary) the caller set apart: the delimiters are found by the
	// part headers that follow them.
	text := "Confirm: http://example.test/wp-login.php?action=confirmaction&request_id=3&confirm_key=abcdefghijklmnopqrstuvwxyz0123456789abcdefghij&x=1"
	body := "--b1\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n" +
		strings.ReplaceAll(qp(text), "\n", "\r\n") + "\r\n--b1--\r\n"
	got, n := (&logbody.Redactor{}).Body(body)
	if n != 1 {
		t.Fatalf("redacted %d, want 1:\n%s", n, got)
	}
	c, _ := parts(t, got, "b1")
	if len(c) != 1 || !strings.Contains(c[0], "confirm_key=[redacted]&x=1") {
		t.Errorf("content = %q", c)
	}
	if strings.Contains(strings.ReplaceAll(got, "\r\n", ""), "\n") {
		t.Error("the CRLF line endings were not kept")
	}
}

func wrap(s string, n int) string {
	var b strings.Builder
	for len(s) > n {
		b.WriteString(s[:n] + "\n")
		s = s[n:]
	}
	b.WriteString(s)
	return b.String()
}

func TestPolicyKeep(t *testing.T) {
	msg := &core.Message{Text: resetMail, HTML: "<p>no link</p>", Attachments: []core.Attachment{{Filename: "a.pdf", Data: []byte("x")}}}
	p := logbody.Policy{Mode: core.LogBodyRedacted, Sources: map[string]string{"my-plugin": core.LogBodyFull, "woocommerce": core.LogBodyNone}}
	tests := []struct {
		name, source string
		policy       logbody.Policy
		want         core.KeptBody
	}{
		{"default redacts and drops attachment bytes", "wp_mail", p,
			core.KeptBody{Mode: core.LogBodyRedacted, Text: resetKept, HTML: "<p>no link</p>", Changed: true, Redacted: 1, DropAttachments: true}},
		{"override: full", "my-plugin", p, core.KeptBody{Mode: core.LogBodyFull}},
		{"override: none", "woocommerce", p, core.KeptBody{Mode: core.LogBodyNone, Changed: true, DropAttachments: true}},
		{"log_attachments keeps them", "wp_mail", logbody.Policy{KeepAttachments: true},
			core.KeptBody{Mode: core.LogBodyRedacted, Text: resetKept, HTML: "<p>no link</p>", Changed: true, Redacted: 1}},
		{"none mode drops them anyway", "wp_mail", logbody.Policy{Mode: core.LogBodyNone, KeepAttachments: true},
			core.KeptBody{Mode: core.LogBodyNone, Changed: true, DropAttachments: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.policy.Keep(msg, tt.source, nil)
			if *got != tt.want {
				t.Errorf("Keep = %+v\nwant %+v", *got, tt.want)
			}
		})
	}
}

func TestPolicyOf(t *testing.T) {
	p := logbody.PolicyOf(core.Settings{"log_body": "none", "log_body_sources": map[string]any{"a": "full", "b": "bogus"}, "log_attachments": true})
	if p.ModeFor("a") != core.LogBodyFull || p.ModeFor("b") != core.LogBodyNone || p.ModeFor("c") != core.LogBodyNone || !p.KeepAttachments {
		t.Errorf("policy = %+v", p)
	}
	if m := (logbody.Policy{}).ModeFor("x"); m != core.LogBodyRedacted {
		t.Errorf("default mode = %q, want redacted", m)
	}
}
