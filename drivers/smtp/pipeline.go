package smtp

import (
	"errors"
	"fmt"
	"net/textproto"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// Pipelining (RFC 2920): when the server offers PIPELINING, a message's
// MAIL, RCPT and DATA commands go out in one write and their replies are
// read together, and no RSET follows a transaction that ended well, so a
// message costs two round trips on a pooled session instead of six
// (go-mail's NOOP, MAIL, RCPT, DATA, the data, RSET). A session that
// keeps a transcript (the mailer debug channel) uses go-mail's
// command-by-command path, whose every line the transcript records, and
// so does a message go-mail would refuse before talking to the server.

// pipelineStage names the part of a pipelined transaction that failed.
type pipelineStage string

const (
	stageMail pipelineStage = "MAIL FROM"
	stageRcpt pipelineStage = "RCPT TO"
	stageData pipelineStage = "DATA"
	stageBody pipelineStage = "message data"
)

// pipelineError is a failed pipelined transaction: the stage and the
// server's reply (a *textproto.Error) or the network error.
type pipelineError struct {
	stage pipelineStage
	err   error
	// ended: the session is ready for the next transaction (the server's
	// reply ended this one, or RSET did).
	ended bool
}

func (e *pipelineError) Error() string { return fmt.Sprintf("%s: %v", e.stage, e.err) }
func (e *pipelineError) Unwrap() error { return e.err }

// replied reports whether the server answered the failed stage (rather
// than the connection failing).
func (e *pipelineError) replied() bool {
	var te *textproto.Error
	return errors.As(e.err, &te)
}

// envelope is a message's sender and recipients as the SMTP commands
// carry them.
type envelope struct {
	from  string
	rcpts []string
}

// pipelineEnvelope returns m's envelope when the session can send m
// pipelined.
func (s *session) pipelineEnvelope(m *gomail.Msg) (envelope, bool) {
	if s.rec != nil || s.smtp == nil {
		return envelope{}, false
	}
	if ok, _ := s.smtp.Extension("PIPELINING"); !ok {
		return envelope{}, false
	}
	if m.Encoding() == gomail.NoEncoding.String() {
		if ok, _ := s.smtp.Extension("8BITMIME"); !ok {
			return envelope{}, false
		}
	}
	from, err := m.GetSender(false)
	if err != nil {
		return envelope{}, false
	}
	rcpts, err := m.GetRecipients()
	if err != nil {
		return envelope{}, false
	}
	for _, line := range append([]string{from}, rcpts...) {
		if strings.ContainsAny(line, "\r\n") {
			return envelope{}, false
		}
	}
	return envelope{from: from, rcpts: rcpts}, true
}

// sendPipelined runs one mail transaction of m to env pipelined and
// returns the server's reply to the message data (without the 250 code).
func (s *session) sendPipelined(m *gomail.Msg, env envelope) (string, error) {
	if c := s.rawConn(); c != nil {
		_ = c.SetDeadline(time.Now().Add(s.timeout))
	}
	text := s.smtp.Text
	w := text.W
	_, _ = w.WriteString("MAIL FROM:" + env.from)
	if ok, _ := s.smtp.Extension("8BITMIME"); ok {
		_, _ = w.WriteString(" BODY=8BITMIME")
	}
	if ok, _ := s.smtp.Extension("SMTPUTF8"); ok {
		_, _ = w.WriteString(" SMTPUTF8")
	}
	_, _ = w.WriteString("\r\n")
	for _, r := range env.rcpts {
		_, _ = w.WriteString("RCPT TO:" + r + "\r\n")
	}
	_, _ = w.WriteString("DATA\r\n")
	if err := w.Flush(); err != nil {
		return "", &pipelineError{stage: stageMail, err: err}
	}
	// Every reply is read, in order, before anything is decided.
	var failed *pipelineError
	dataOpen := false
	read := func(stage pipelineStage, expect int) bool {
		_, _, err := text.ReadResponse(expect)
		if err == nil {
			dataOpen = stage == stageData
			return true
		}
		if failed == nil {
			failed = &pipelineError{stage: stage, err: err}
		}
		return failed.replied()
	}
	ok := read(stageMail, 250)
	for range env.rcpts {
		ok = ok && read(stageRcpt, 25)
	}
	ok = ok && read(stageData, 354)
	switch {
	case !ok:
		// The connection failed: nothing was sent beyond the commands.
		return "", failed
	case failed != nil && dataOpen:
		// DATA was accepted although MAIL or a RCPT was refused: the
		// server waits for data. The session is dropped rather than the
		// message sent to part of its recipients.
		return "", failed
	case failed != nil:
		// The transaction failed before its data: RSET clears it for the
		// next one.
		failed.ended = s.reset() == nil
		return "", failed
	}
	dw := text.DotWriter()
	if err := writeMessage(m, dw); err != nil {
		// Not ended with the final dot: a part of a message is never
		// handed over; the session is dropped.
		return "", &pipelineError{stage: stageBody, err: err}
	}
	if err := dw.Close(); err != nil {
		return "", &pipelineError{stage: stageBody, err: err}
	}
	_, resp, err := text.ReadResponse(250)
	if err != nil {
		perr := &pipelineError{stage: stageBody, err: err}
		perr.ended = perr.replied()
		return "", perr
	}
	return resp, nil
}

// reset sends RSET and reads its reply.
func (s *session) reset() error {
	text := s.smtp.Text
	if _, err := text.W.WriteString("RSET\r\n"); err != nil {
		return err
	}
	if err := text.W.Flush(); err != nil {
		return err
	}
	_, _, err := text.ReadResponse(250)
	return err
}
