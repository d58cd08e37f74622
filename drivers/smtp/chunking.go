package smtp

import (
	"bytes"
	"strconv"
)

// Chunking (RFC 3030): when the server offers CHUNKING beside
// PIPELINING, a rendered message goes out in the same write as its
// envelope, MAIL, RCPT and "BDAT <size> LAST" followed by the message's
// bytes as they are (no dot-stuffing), and the three replies are read
// together: one round trip per message, where DATA costs two (its 354
// must come back before the data may go). It is used only where the
// outcome cannot differ from DATA's:
//   - one recipient: with several, a refused RCPT would not keep the data
//     from the others, and the DATA path never sends a message to part of
//     its recipients;
//   - a rendered message (no streamed attachments) of at most
//     chunkedLimit bytes, its lines ending in CRLF: a refused envelope
//     wastes at most that much.
//
// A connection that fails before the first reply comes back is taken
// for a pooled session the server closed while idle, as on the DATA
// path, and the message is sent again on a new session: a server that
// took the message and failed before any reply reached us looks the
// same, the window in which DATA's final reply can be lost too (there
// the message is retried later). A failure after a reply came back is
// never retried at once: the data may have been taken.
const chunkedLimit = 64 << 10

// chunkable reports whether l goes out with BDAT on this session.
func (s *session) chunkable(l *letter) bool {
	return s.chunking && l.data != nil && len(l.rcpts) == 1 && l.data.Len() <= chunkedLimit && crlfLines(l.data.Bytes())
}

// sendChunked runs one mail transaction of l with its data in a single
// BDAT LAST chunk, pipelined with the envelope, and returns the server's
// reply to the chunk (without the 250 code).
func (s *session) sendChunked(l *letter) (string, error) {
	s.setDeadline()
	text := s.smtp.Text
	w := text.W
	data := l.data.Bytes()
	size, end := len(data), !bytes.HasSuffix(data, crlf)
	if end {
		size += len(crlf)
	}
	s.writeEnvelope(w, l)
	var num [20]byte
	_, _ = w.WriteString("BDAT ")
	_, _ = w.Write(strconv.AppendInt(num[:0], int64(size), 10))
	_, _ = w.WriteString(" LAST\r\n")
	_, _ = w.Write(data)
	if end {
		_, _ = w.Write(crlf)
	}
	if err := w.Flush(); err != nil {
		// The chunk did not leave whole: nothing can have been taken.
		return "", &transactionError{stage: stageMail, err: err}
	}
	// Every reply is read, in order, before anything is decided.
	var (
		failed  *transactionError
		resp    string
		replies int
	)
	read := func(stage transactionStage, expect int) bool {
		_, msg, err := text.ReadResponse(expect)
		if err == nil {
			resp = msg
			replies++
			return true
		}
		if failed == nil {
			failed = &transactionError{stage: stage, err: err}
			if !failed.replied() && replies > 0 {
				// Not a session closed while idle: the data may have
				// been taken.
				failed.stage = stageBody
				failed.unanswered = true
			}
		}
		return failed.replied()
	}
	ok := read(stageMail, 250)
	for range l.rcpts {
		ok = ok && read(stageRcpt, 25)
	}
	ok = ok && read(stageBody, 250)
	switch {
	case !ok:
		return "", failed
	case failed != nil:
		// A command or the chunk was refused, and the server read and
		// dropped the chunk: RSET clears the transaction for the next.
		failed.ended = s.reset() == nil
		return "", failed
	}
	return resp, nil
}
