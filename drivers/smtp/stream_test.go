package smtp

import (
	"bytes"
	"crypto/rand"
	"io"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/drivers/mime"
)

// oneByteWriter hands every byte to w in a write of its own.
type oneByteWriter struct{ w io.Writer }

func (o oneByteWriter) Write(p []byte) (int, error) {
	for i := range p {
		if _, err := o.w.Write(p[i : i+1]); err != nil {
			return i, err
		}
	}
	return len(p), nil
}

// writeMessage puts on the wire exactly what go-mail's own WriteTo
// writes, for attachments of every length around the base64 line and
// group boundaries, inline files included, and leaves the message as it
// found it (a second write is the same again).
func TestWriteMessageMatchesGoMail(t *testing.T) {
	var atts []core.Attachment
	for i, n := range []int{0, 1, 2, 3, 56, 57, 58, 76, 1024, 54*57 + 1, 200_001} {
		b := make([]byte, n)
		if _, err := rand.Read(b); err != nil {
			t.Fatal(err)
		}
		atts = append(atts, core.Attachment{Filename: strings.Repeat("f", i+1) + ".bin", Data: b, Inline: i%4 == 3, ContentID: "c" + strings.Repeat("x", i)})
	}
	msg := &core.Message{From: core.Address{Email: "a@example.com"}, To: []core.Address{{Email: "b@example.org"}},
		Subject: "files", Text: "text\r\n", HTML: "<p>html</p>", Attachments: atts}
	m, err := mime.Compose(msg)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if _, err := m.WriteTo(&want); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		w    func(io.Writer) io.Writer
	}{
		{"whole writes", func(w io.Writer) io.Writer { return w }},
		{"one byte at a time", func(w io.Writer) io.Writer { return oneByteWriter{w} }},
	} {
		var got bytes.Buffer
		if err := writeMessage(m, tc.w(&got)); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s: %d bytes differ from go-mail's %d", tc.name, got.Len(), want.Len())
		}
	}
	var again bytes.Buffer
	if _, err := m.WriteTo(&again); err != nil || !bytes.Equal(again.Bytes(), want.Bytes()) {
		t.Errorf("the message changed after writeMessage (%v)", err)
	}
}

// Lines that start like a placeholder, or end where one would, pass
// through unchanged; only a whole placeholder line is replaced.
func TestAttachmentStreamReplacesWholeLinesOnly(t *testing.T) {
	line := strings.Repeat("Q", placeholderLine-2) + "\r\n"
	in := "Subject: x\r\n" + line[:10] + "\r\n" + line[:len(line)-2] + "Z\r\n" + "x" + line + line + "end"
	var out bytes.Buffer
	s := &attachmentStream{out: &out, lines: [][]byte{[]byte(line)}, bodies: []func(io.Writer) (int64, error){
		func(w io.Writer) (int64, error) { n, err := w.Write([]byte("hi")); return int64(n), err },
	}}
	if _, err := io.Copy(oneByteWriter{s}, strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	if err := s.flush(); err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(in, "x"+line+line, "x"+line+"aGk=\r\n", 1)
	if out.String() != want || s.found != 1 {
		t.Errorf("got %q (%d replaced), want %q", out.String(), s.found, want)
	}
}
