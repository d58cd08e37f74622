package intake

import (
	"github.com/mailsvc/mailsvc/test/servicetest"

	"bytes"
	"encoding/base64"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/mailparse"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
)

// attachmentBytes returns n bytes covering every byte value.
func attachmentBytes(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*13) ^ seed
	}
	return b
}

// wrap64 encodes data as base64 in 76-column lines.
func wrap64(data []byte) string {
	s := base64.StdEncoding.EncodeToString(data)
	var b strings.Builder
	for len(s) > 76 {
		b.WriteString(s[:76] + "\n")
		s = s[76:]
	}
	return b.String() + s + "\n"
}

var (
	pdfBytes = attachmentBytes(40000, 0x5a)
	pngBytes = attachmentBytes(777, 0x01)
)

// withAttachments is a multipart message with a text body (holding a line
// with a single dot), an HTML body and two binary attachments.
func withAttachments(headers, text string) string {
	return headers +
		"MIME-Version: 1.0\n" +
		"Content-Type: multipart/mixed; boundary=\"b1\"\n\n" +
		"--b1\n" +
		"Content-Type: multipart/alternative; boundary=\"b2\"\n\n" +
		"--b2\n" +
		"Content-Type: text/plain; charset=utf-8\n\n" +
		text + "\n" +
		"--b2\n" +
		"Content-Type: text/html; charset=utf-8\n\n" +
		"<p>HTML body</p>\n" +
		"--b2--\n" +
		"--b1\n" +
		"Content-Type: application/pdf\n" +
		"Content-Disposition: attachment; filename=\"invoice.pdf\"\n" +
		"Content-Transfer-Encoding: base64\n\n" +
		wrap64(pdfBytes) +
		"--b1\n" +
		"Content-Type: image/png; name=\"=?UTF-8?B?bG9nb+Kcky5wbmc=?=\"\n" +
		"Content-Disposition: attachment\n" +
		"Content-Transfer-Encoding: base64\n\n" +
		wrap64(pngBytes) +
		"--b1--\n"
}

// withAttachmentsWant are the attachments of withAttachments.
var withAttachmentsWant = []core.Attachment{
	{Filename: "invoice.pdf", ContentType: "application/pdf", Data: pdfBytes},
	{Filename: "logo✓.png", ContentType: "image/png", Data: pngBytes},
}

func TestSendmail(t *testing.T) {
	sink := smtpsink.Start(t)
	dir := t.TempDir()
	svc := servicetest.Start(t, dir)
	admin := basic("admin", adminPassword(t, svc))
	useSink(t, svc, admin, sink.Host(), sink.Port())

	type want struct {
		from          core.Address
		to, cc, bcc   []string
		envelope      []string
		text          string
		attachments   bool
		headerAbsent  string
		headerPresent string
	}
	tests := []struct {
		name  string
		args  []string
		input string
		want  want
	}{
		{
			name: "-t -i: headers give the recipients, Bcc is removed, the lone dot is data",
			args: []string{"-t", "-i"},
			input: withAttachments("From: Site <site@example.org>\nTo: Al <al@example.org>\nCc: cy@example.org\nBcc: hidden@example.org\nSubject: sendmail-t-i\nX-Source: cron\n",
				"before\n.\nafter the dot"),
			want: want{from: core.Address{Name: "Site", Email: "site@example.org"}, to: []string{"al@example.org"}, cc: []string{"cy@example.org"}, bcc: []string{"hidden@example.org"},
				envelope: []string{"al@example.org", "cy@example.org", "hidden@example.org"}, text: "before\n.\nafter the dot", attachments: true,
				headerAbsent: "hidden@example.org", headerPresent: "X-Source: cron"},
		},
		{
			name:  "-t without -i: a lone dot ends the message",
			args:  []string{"-t"},
			input: "From: site@example.org\nTo: al@example.org\nSubject: sendmail-dot\n\nkept\n.\ndropped after the dot\n",
			want:  want{from: core.Address{Name: "", Email: "site@example.org"}, to: []string{"al@example.org"}, envelope: []string{"al@example.org"}, text: "kept\n"},
		},
		{
			name:  "-f and -F make the From; argument recipients are the envelope",
			args:  []string{"-f", "cron@example.org", "-F", "Cron Daemon", "al@example.org", "extra@example.org"},
			input: withAttachments("To: al@example.org\nSubject: sendmail-f-F\n", "from cron"),
			want: want{from: core.Address{Name: "Cron Daemon", Email: "cron@example.org"}, to: []string{"al@example.org"}, bcc: []string{"extra@example.org"},
				envelope: []string{"al@example.org", "extra@example.org"}, text: "from cron", attachments: true, headerAbsent: "extra@example.org"},
		},
		{
			name:  "-oi with no-op flags and no From: the from_email setting",
			args:  []string{"-oi", "-odi", "-oem", "-bm", "al@example.org"},
			input: "To: al@example.org\nSubject: sendmail-defaults\n\nline\n.\nstill here\n",
			want:  want{from: core.Address{Name: "Default Sender", Email: "default@example.org"}, to: []string{"al@example.org"}, envelope: []string{"al@example.org"}, text: "line\n.\nstill here\n"},
		},
		{
			name:  "-t with an added argument recipient and attached -r",
			args:  []string{"-ti", "-rbounce@example.org", "extra@example.org"},
			input: "From: site@example.org\nTo: al@example.org\nSubject: sendmail-t-extra\n\nhi\n",
			want: want{from: core.Address{Name: "", Email: "site@example.org"}, to: []string{"al@example.org"}, bcc: []string{"extra@example.org"},
				envelope: []string{"al@example.org", "extra@example.org"}, text: "hi\n"},
		},
	}
	subjects := map[string]int{}
	for i, tt := range tests {
		_, errOut, code := result(svc.Run(tt.input, append([]string{"sendmail"}, tt.args...)...))
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tt.name, code, errOut)
		}
		subjects[subjectOf(tt.input)] = i
	}
	received, err := sink.WaitFor(len(tests), 60*time.Second)
	if err != nil {
		t.Fatalf("sink: %v", err)
	}
	bySubject := map[string]smtpsink.Received{}
	for _, r := range received {
		m, err := mailparse.Parse(bytes.NewReader(r.Data))
		if err != nil {
			t.Fatalf("the sink's message does not parse: %v", err)
		}
		bySubject[m.Subject] = r
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			subject := subjectOf(tt.input)
			d := findLog(t, svc, admin, subject)
			if d.Source != "sendmail" || d.Message.From != tt.want.from {
				t.Errorf("log source %q from %+v, want sendmail %+v", d.Source, d.Message.From, tt.want.from)
			}
			for _, c := range []struct {
				field     string
				got, want []string
			}{{"to", emails(d.Message.To), tt.want.to}, {"cc", emails(d.Message.Cc), tt.want.cc}, {"bcc", emails(d.Message.Bcc), tt.want.bcc}} {
				if c.want == nil {
					c.want = []string{}
				}
				if !reflect.DeepEqual(c.got, c.want) {
					t.Errorf("log %s %v, want %v", c.field, c.got, c.want)
				}
			}
			r, ok := bySubject[subject]
			if !ok {
				t.Fatalf("the sink did not receive %q", subject)
			}
			env := slices.Clone(r.To)
			slices.Sort(env)
			if !reflect.DeepEqual(env, tt.want.envelope) {
				t.Errorf("envelope %v, want %v", env, tt.want.envelope)
			}
			head, _, _ := strings.Cut(strings.ReplaceAll(string(r.Data), "\r\n", "\n"), "\n\n")
			if tt.want.headerAbsent != "" && strings.Contains(head, tt.want.headerAbsent) {
				t.Errorf("the delivered header names %s:\n%s", tt.want.headerAbsent, head)
			}
			if strings.Contains(strings.ToLower(head), "\nbcc:") {
				t.Errorf("a Bcc header was delivered:\n%s", head)
			}
			if tt.want.headerPresent != "" && !strings.Contains(head, tt.want.headerPresent) {
				t.Errorf("the delivered header lacks %s:\n%s", tt.want.headerPresent, head)
			}
			m, _ := mailparse.Parse(bytes.NewReader(r.Data))
			if strings.TrimRight(m.Text, "\n") != strings.TrimRight(tt.want.text, "\n") {
				t.Errorf("delivered text %q, want %q", m.Text, tt.want.text)
			}
			if !tt.want.attachments {
				if len(m.Attachments) != 0 {
					t.Errorf("unexpected attachments %d", len(m.Attachments))
				}
				return
			}
			if m.HTML != "<p>HTML body</p>" || len(d.Attachments) != 2 {
				t.Errorf("html %q, logged attachments %+v", m.HTML, d.Attachments)
			}
			assertAttachments(t, m.Attachments, withAttachmentsWant)
		})
	}
}

// assertAttachments compares names, types and bytes.
func assertAttachments(t *testing.T, got, want []core.Attachment) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d attachments, want %d", len(got), len(want))
	}
	for i := range want {
		wantName := want[i].Filename
		if got[i].Filename != wantName || !strings.HasPrefix(got[i].ContentType, want[i].ContentType) {
			t.Errorf("attachment %d: %q %q, want %q %q", i, got[i].Filename, got[i].ContentType, wantName, want[i].ContentType)
		}
		if !bytes.Equal(got[i].Data, want[i].Data) {
			t.Errorf("attachment %d (%s): %d bytes differ from the %d sent", i, wantName, len(got[i].Data), len(want[i].Data))
		}
	}
}

func subjectOf(msg string) string {
	for _, line := range strings.Split(msg, "\n") {
		if s, ok := strings.CutPrefix(line, "Subject: "); ok {
			return s
		}
	}
	return ""
}

func TestSendmailFailures(t *testing.T) {
	dir := t.TempDir()
	env := servicetest.Environ(dir)
	const good = "From: site@example.org\nTo: al@example.org\nSubject: s\n\nbody\n"
	tests := []struct {
		name     string
		env      []string
		args     []string
		input    string
		wantCode int
		wantErr  string
	}{
		{"no recipients", env, nil, good, 64, "no recipients"},
		{"unknown option", env, []string{"-q", "al@example.org"}, good, 64, "unknown option -q"},
		{"SMTP mode is not supported", env, []string{"-bs"}, good, 64, "not supported"},
		{"bad sender", env, []string{"-f", "not an address", "al@example.org"}, good, 64, "-f"},
		{"bad recipient", env, []string{"al@@example.org"}, good, 64, "not a valid address"},
		{"-t without recipient headers", env, []string{"-t"}, "From: site@example.org\nSubject: s\n\nx\n", 65, "no recipient addresses"},
		{"broken MIME", env, []string{"-t"}, "From: site@example.org\nTo: al@example.org\nContent-Type: multipart/mixed\n\nx\n", 65, "no boundary"},
		{"no sender anywhere", env, []string{"al@example.org"}, "Subject: s\n\nx\n", 65, "sender address"},
		{"database unreachable", append(slices.Clone(env), "MAILSVC_DB=mysql:root:secret-pw@tcp(127.0.0.1:1)/mailsvc"), []string{"-t"}, good, 75, "connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := result(servicetest.Run(dir, tt.env, tt.input, append([]string{"sendmail"}, tt.args...)...))
			if code != tt.wantCode || !strings.Contains(errOut, tt.wantErr) {
				t.Fatalf("exit %d, stderr %q; want %d with %q", code, errOut, tt.wantCode, tt.wantErr)
			}
			if out != "" {
				t.Errorf("stdout %q", out)
			}
			if strings.Contains(errOut, "secret-pw") {
				t.Errorf("the database password leaked: %s", errOut)
			}
		})
	}
	// Nothing was queued by the failures.
	svc := servicetest.Start(t, dir)
	var list []any
	callJSON(t, "GET", svc.Base+"/logs", "", basic("admin", adminPassword(t, svc)), 200, &list)
	if len(list) != 0 {
		t.Errorf("failures queued %d messages", len(list))
	}
}
