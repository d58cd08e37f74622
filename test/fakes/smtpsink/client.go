package smtpsink

import (
	"testing"

	"github.com/emersion/go-smtp"
)

// Dial connects a client to the SMTP server at addr, failing t when it
// cannot; the client is closed when t ends.
func Dial(t testing.TB, addr string) *smtp.Client {
	t.Helper()
	c, err := smtp.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Send runs one mail transaction as a client over c (MAIL, RCPT for each
// recipient, DATA) and returns the server's reply text to DATA, or the
// first error (an *smtp.SMTPError carries the server's code).
func Send(c *smtp.Client, from string, to []string, data string) (string, error) {
	if err := c.Mail(from, nil); err != nil {
		return "", err
	}
	for _, r := range to {
		if err := c.Rcpt(r, nil); err != nil {
			return "", err
		}
	}
	w, err := c.Data()
	if err != nil {
		return "", err
	}
	if _, err := w.Write([]byte(data)); err != nil {
		return "", err
	}
	resp, err := w.CloseWithResponse()
	if err != nil {
		return "", err
	}
	return resp.StatusText, nil
}
