package smtp

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"

	gomail "github.com/wneessen/go-mail"
)

// go-mail encodes each part of a message into a buffer of its own before
// writing it (msgWriter.writeBody), so a 10 MB attachment costs about
// 14 MB of base64, grown by doubling (some 28 MB allocated), on top of its
// bytes, for every message in flight. writeMessage streams instead: each
// base64 attachment part gets a placeholder, one line of random base64
// that go-mail writes in the attachment's place; on its way to the server
// the output is scanned line by line, and the placeholder line is replaced
// by the attachment encoded straight from its reader, in 76-character
// lines as go-mail writes them. Headers, boundaries and every other part
// are go-mail's, unchanged; the bytes on the wire are the same.

// placeholderSize is the random bytes of a placeholder: 64 base64
// characters, one line (go-mail breaks lines at 76).
const placeholderSize = 48

// placeholderLine is the length of a placeholder line with its CRLF.
const placeholderLine = placeholderSize/3*4 + 2

// writeMessage writes m to w as m.WriteTo does, the base64 attachments
// and inline files streamed from their readers.
func writeMessage(m *gomail.Msg, w io.Writer) error {
	var files []*gomail.File
	for _, f := range append(append([]*gomail.File(nil), m.GetAttachments()...), m.GetEmbeds()...) {
		if f.Enc == "" || f.Enc == gomail.EncodingB64 {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		_, err := m.WriteTo(w)
		return err
	}
	s := &attachmentStream{out: w}
	for _, f := range files {
		raw := make([]byte, placeholderSize)
		if _, err := rand.Read(raw); err != nil {
			return fmt.Errorf("attachment placeholder: %w", err)
		}
		s.lines = append(s.lines, []byte(base64.StdEncoding.EncodeToString(raw)+"\r\n"))
		s.bodies = append(s.bodies, f.Writer)
		f.Writer = func(w io.Writer) (int64, error) {
			n, err := w.Write(raw)
			return int64(n), err
		}
	}
	defer func() {
		for i, f := range files {
			f.Writer = s.bodies[i]
		}
	}()
	if _, err := m.WriteTo(s); err != nil {
		return err
	}
	if s.found != len(files) {
		// The message went out with a placeholder in place of a file:
		// it must not be ended (the caller drops the session).
		return fmt.Errorf("stream attachments: %d of %d placeholders found in go-mail's output", s.found, len(files))
	}
	return s.flush()
}

// attachmentStream passes a message through to out, replacing each
// placeholder line with its attachment's body in base64.
type attachmentStream struct {
	out    io.Writer
	lines  [][]byte                         // placeholder lines, CRLF included
	bodies []func(io.Writer) (int64, error) // the attachments' writers, raw bytes
	// head is the start of the current line while it may still be a
	// placeholder line; passing means it is not: copy to its end.
	head    []byte
	passing bool
	found   int // placeholders replaced
}

// Write implements io.Writer.
func (s *attachmentStream) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if s.passing {
			i := bytes.IndexByte(p, '\n')
			if i < 0 {
				_, err := s.out.Write(p)
				return n, err
			}
			if _, err := s.out.Write(p[:i+1]); err != nil {
				return n, err
			}
			p, s.passing = p[i+1:], false
			continue
		}
		take := p[:min(placeholderLine-len(s.head), len(p))]
		if i := bytes.IndexByte(take, '\n'); i >= 0 {
			take = take[:i+1]
		}
		s.head = append(s.head, take...)
		p = p[len(take):]
		k, prefix := s.match()
		switch {
		case k >= 0:
			s.head = s.head[:0]
			s.found++
			if err := s.body(k); err != nil {
				return n, err
			}
		case !prefix:
			ended := s.head[len(s.head)-1] == '\n'
			if err := s.flush(); err != nil {
				return n, err
			}
			s.passing = !ended
		}
	}
	return n, nil
}

// match returns the placeholder that head is, or -1 and whether head may
// still become one.
func (s *attachmentStream) match() (int, bool) {
	prefix := false
	for k, line := range s.lines {
		if bytes.Equal(s.head, line) {
			return k, true
		}
		if len(s.head) < len(line) && bytes.HasPrefix(line, s.head) {
			prefix = true
		}
	}
	return -1, prefix
}

// flush writes out the line start held back.
func (s *attachmentStream) flush() error {
	if len(s.head) == 0 {
		return nil
	}
	_, err := s.out.Write(s.head)
	s.head = s.head[:0]
	return err
}

// body writes attachment k in base64, in lines of 76 characters ended
// by CRLF, the last one shorter (nothing for an empty attachment).
func (s *attachmentStream) body(k int) error {
	lw := &base64Lines{out: s.out}
	enc := base64.NewEncoder(base64.StdEncoding, lw)
	if _, err := s.bodies[k](enc); err != nil {
		return fmt.Errorf("attachment %d: %w", k+1, err)
	}
	if err := enc.Close(); err != nil {
		return err
	}
	return lw.Close()
}

// base64Lines breaks base64 text into lines of base64LineLength characters
// ended by CRLF, gathering several lines per write to out.
type base64Lines struct {
	out  io.Writer
	buf  [54 * (base64LineLength + 2)]byte
	n    int // bytes in buf
	line int // characters on the current line
}

// base64LineLength is the characters of a full base64 line (RFC 2045).
const base64LineLength = 76

// Write implements io.Writer.
func (l *base64Lines) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		if l.line == base64LineLength {
			if err := l.room(2); err != nil {
				return 0, err
			}
			l.n += copy(l.buf[l.n:], "\r\n")
			l.line = 0
		}
		if err := l.room(1); err != nil {
			return 0, err
		}
		c := copy(l.buf[l.n:], p[:min(len(p), base64LineLength-l.line)])
		l.n += c
		l.line += c
		p = p[c:]
	}
	return n, nil
}

// room makes sure buf has space for k more bytes.
func (l *base64Lines) room(k int) error {
	if len(l.buf)-l.n >= k {
		return nil
	}
	_, err := l.out.Write(l.buf[:l.n])
	l.n = 0
	return err
}

// Close ends the last line and writes what is held.
func (l *base64Lines) Close() error {
	if l.line > 0 {
		if err := l.room(2); err != nil {
			return err
		}
		l.n += copy(l.buf[l.n:], "\r\n")
		l.line = 0
	}
	if l.n == 0 {
		return nil
	}
	_, err := l.out.Write(l.buf[:l.n])
	l.n = 0
	return err
}
