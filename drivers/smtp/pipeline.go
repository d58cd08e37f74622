package smtp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net/textproto"

	gosmtp "github.com/wneessen/go-mail/smtp"
)

// Pipelining (RFC 2920): when the server offers PIPELINING, a message's
// MAIL, RCPT and DATA commands go out in one write and their replies are
// read together, and no RSET follows a transaction that ended well, so a
// message costs two round trips on a pooled session instead of six
// (go-mail's NOOP, MAIL, RCPT, DATA, the data, RSET). A session that
// keeps a transcript (the mailer debug channel), or a server without
// PIPELINING, goes command by command (sendStepwise), each line recorded
// in the transcript, still without NOOP or RSET around a good
// transaction; both paths write the same message data, attachments
// streamed.

// transactionStage names the part of a mail transaction that failed.
type transactionStage string

const (
	stageMail transactionStage = "MAIL FROM"
	stageRcpt transactionStage = "RCPT TO"
	stageData transactionStage = "DATA"
	stageBody transactionStage = "message data"
)

// transactionError is a failed mail transaction: the stage and the
// server's reply (a *textproto.Error) or the network error.
type transactionError struct {
	stage transactionStage
	err   error
	// ended: the session is ready for the next transaction (the server's
	// reply ended this one, or RSET did).
	ended bool
	// unanswered: the message data left whole (the final "." or the
	// last BDAT chunk) and no reply came: the server may have taken it.
	unanswered bool
}

func (e *transactionError) Error() string { return fmt.Sprintf("%s: %v", e.stage, e.err) }
func (e *transactionError) Unwrap() error { return e.err }

// replied reports whether the server answered the failed stage (rather
// than the connection failing).
func (e *transactionError) replied() bool {
	var te *textproto.Error
	return errors.As(e.err, &te)
}

// writeEnvelope writes l's MAIL and RCPT commands to w (not flushed).
func (s *session) writeEnvelope(w *bufio.Writer, l *letter) {
	_, _ = w.WriteString("MAIL FROM:")
	_, _ = w.WriteString(l.from)
	if s.eightBitMIME {
		_, _ = w.WriteString(" BODY=8BITMIME")
	}
	if s.smtpUTF8 {
		_, _ = w.WriteString(" SMTPUTF8")
	}
	_, _ = w.WriteString("\r\n")
	for _, r := range l.rcpts {
		_, _ = w.WriteString("RCPT TO:")
		_, _ = w.WriteString(r)
		_, _ = w.WriteString("\r\n")
	}
}

// rejection is the server's refusal of some RCPTs of a transaction (by
// their index in the letter's rcpts), beside an outcome that is not a
// failure of the whole transaction.
type rejection map[int]error

// allRefused returns the failure of a transaction whose every RCPT was
// refused: the first refusal, the session ended by RSET when it answers.
func allRefused(rejected rejection, rset func() error) error {
	terr := &transactionError{stage: stageRcpt, err: rejected[0]}
	terr.ended = rset() == nil
	return terr
}

// sendPipelined runs one mail transaction of l pipelined and returns the
// server's reply to the message data (without the 250 code) and the
// recipients it refused; the others got the message. A transaction whose
// every recipient was refused fails (allRefused), with rejected set.
func (s *session) sendPipelined(l *letter) (string, rejection, error) {
	s.setDeadline()
	text := s.smtp.Text
	w := text.W
	s.writeEnvelope(w, l)
	_, _ = w.WriteString("DATA\r\n")
	if err := w.Flush(); err != nil {
		return "", nil, &transactionError{stage: stageMail, err: err}
	}
	// Every reply is read, in order, before anything is decided.
	var failed *transactionError
	var rejected rejection
	dataOpen := false
	read := func(stage transactionStage, expect int) bool {
		_, _, err := text.ReadResponse(expect)
		if err == nil {
			dataOpen = stage == stageData
			return true
		}
		if failed == nil {
			failed = &transactionError{stage: stage, err: err}
		}
		return failed.replied()
	}
	ok := read(stageMail, 250)
	mailOK := ok && failed == nil
	for i := range l.rcpts {
		if !ok {
			break
		}
		_, _, err := text.ReadResponse(25)
		switch {
		case err == nil:
		case mailOK && replyCode(err) != 0:
			// One recipient refused: the others may still get it.
			if rejected == nil {
				rejected = rejection{}
			}
			rejected[i] = err
		default:
			if failed == nil {
				failed = &transactionError{stage: stageRcpt, err: err}
			}
			ok = failed.replied()
		}
	}
	none := mailOK && len(rejected) == len(l.rcpts)
	ok = ok && read(stageData, 354)
	switch {
	case !ok:
		// The connection failed: nothing was sent beyond the commands.
		return "", rejected, failed
	case none && dataOpen:
		// DATA was accepted although no recipient was: the session is
		// dropped rather than the data sent.
		return "", rejected, &transactionError{stage: stageRcpt, err: rejected[0]}
	case failed != nil && dataOpen:
		// DATA was accepted although MAIL was refused (or no recipient
		// accepted): the server waits for data. The session is dropped.
		return "", rejected, failed
	case none:
		return "", rejected, allRefused(rejected, s.reset)
	case failed != nil:
		// The transaction failed before its data: RSET clears it for the
		// next one.
		failed.ended = s.reset() == nil
		return "", rejected, failed
	}
	var err error
	if l.data != nil {
		err = writeData(w, l.data.Bytes())
	} else {
		dw := text.DotWriter()
		if err = l.writeTo(dw); err == nil {
			err = dw.Close()
		}
		// Else not ended with the final dot: a part of a message is never
		// handed over; the session is dropped.
	}
	if err != nil {
		return "", rejected, &transactionError{stage: stageBody, err: err}
	}
	_, resp, err := text.ReadResponse(250)
	if err != nil {
		terr := &transactionError{stage: stageBody, err: err}
		terr.ended = terr.replied()
		terr.unanswered = !terr.ended
		return "", rejected, terr
	}
	return resp, rejected, nil
}

// sendStepwise runs one mail transaction of l command by command, each
// reply awaited (and recorded in the transcript, when the session keeps
// one), for servers without PIPELINING and sessions with a transcript;
// the message data is written as on the pipelined path, attachments
// streamed. It returns the server's reply to the data and the recipients
// it refused, as sendPipelined does.
func (s *session) sendStepwise(l *letter) (string, rejection, error) {
	s.setDeadline()
	if err := s.smtp.Mail(l.from); err != nil {
		return "", nil, s.refused(stageMail, err)
	}
	var rejected rejection
	for i, r := range l.rcpts {
		if err := s.smtp.Rcpt(r); err != nil {
			if replyCode(err) == 0 {
				return "", rejected, &transactionError{stage: stageRcpt, err: err}
			}
			if rejected == nil {
				rejected = rejection{}
			}
			rejected[i] = err
		}
	}
	if len(rejected) == len(l.rcpts) {
		return "", rejected, allRefused(rejected, s.smtp.Reset)
	}
	w, err := s.smtp.Data()
	if err != nil {
		return "", rejected, s.refused(stageData, err)
	}
	if err := l.writeTo(w); err != nil {
		return "", rejected, &transactionError{stage: stageBody, err: err}
	}
	if err := w.Close(); err != nil {
		// Close writes the final "." and reads the reply: a failure
		// without a reply may come after the server took the message.
		terr := &transactionError{stage: stageBody, err: err}
		terr.ended = terr.replied()
		terr.unanswered = !terr.ended
		return "", rejected, terr
	}
	var resp string
	if dc, ok := w.(*gosmtp.DataCloser); ok {
		resp = dc.ServerResponse()
	}
	return resp, rejected, nil
}

// refused returns the failure of a command before the data; when the
// server answered it, RSET clears the transaction for the next one.
func (s *session) refused(stage transactionStage, err error) error {
	terr := &transactionError{stage: stage, err: err}
	if terr.replied() {
		terr.ended = s.smtp.Reset() == nil
	}
	return terr
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

// writeData writes a rendered message to w as the data of a mail
// transaction, dot-stuffed and ended with the final dot, and flushes w.
// data's lines end in CRLF, but perhaps the last (as the renderer writes
// them); anything else goes through textproto's dot-writer.
func writeData(w *bufio.Writer, data []byte) error {
	if !crlfLines(data) {
		dw := textproto.NewWriter(w).DotWriter()
		if _, err := dw.Write(data); err != nil {
			return err
		}
		return dw.Close()
	}
	if len(data) > 0 && data[0] == '.' {
		_ = w.WriteByte('.')
	}
	rest := data
	for {
		i := bytes.Index(rest, lfDot)
		if i < 0 {
			break
		}
		_, _ = w.Write(rest[:i+1])
		_ = w.WriteByte('.')
		rest = rest[i+1:]
	}
	_, _ = w.Write(rest)
	if !bytes.HasSuffix(data, crlf) {
		_, _ = w.WriteString("\r\n")
	}
	_, _ = w.WriteString(".\r\n")
	return w.Flush()
}

var (
	crlf  = []byte("\r\n")
	lfDot = []byte("\n.")
)

// crlfLines reports whether every LF in data follows a CR and data does
// not end in a CR.
func crlfLines(data []byte) bool {
	if len(data) > 0 && data[len(data)-1] == '\r' {
		return false
	}
	for i := 0; ; {
		j := bytes.IndexByte(data[i:], '\n')
		if j < 0 {
			return true
		}
		if i+j == 0 || data[i+j-1] != '\r' {
			return false
		}
		i += j + 1
	}
}
