package smtpsink

import (
	"bytes"
	"errors"
	"strings"

	"github.com/emersion/go-smtp"
)

// mechXOAUTH2 is the SASL mechanism of Google's and Microsoft's SMTP
// servers for OAuth 2.0 bearer tokens.
const mechXOAUTH2 = "XOAUTH2"

// checkXOAUTH2 asks the test's validator about one user and token and
// counts the outcome.
func (ss *session) checkXOAUTH2(user, token string) error {
	ok := ss.sink.cfg.xoauth2(user, token)
	ss.sink.mu.Lock()
	defer ss.sink.mu.Unlock()
	if !ok {
		ss.sink.authFails++
		return &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 3}, Message: "Authentication unsuccessful"}
	}
	ss.sink.auths++
	ss.username = user
	return nil
}

// xoauth2Server is the server side of XOAUTH2: one client response,
// "user=" user "\x01auth=Bearer " token "\x01\x01" (base64-decoded by
// go-smtp), answered with success or 535.
type xoauth2Server struct {
	check func(user, token string) error
	done  bool
}

// Next implements sasl.Server.
func (x *xoauth2Server) Next(response []byte) ([]byte, bool, error) {
	if x.done {
		return nil, false, errors.New("unexpected XOAUTH2 step")
	}
	if response == nil {
		// No initial response: ask for it with an empty challenge.
		return []byte{}, false, nil
	}
	x.done = true
	user, token, err := parseXOAUTH2(response)
	if err != nil {
		return nil, false, &smtp.SMTPError{Code: 501, EnhancedCode: smtp.EnhancedCode{5, 5, 2}, Message: "Malformed XOAUTH2 response"}
	}
	if err := x.check(user, token); err != nil {
		return nil, false, err
	}
	return nil, true, nil
}

// parseXOAUTH2 splits an XOAUTH2 initial response into user and token.
func parseXOAUTH2(resp []byte) (user, token string, err error) {
	if !bytes.HasSuffix(resp, []byte("\x01\x01")) {
		return "", "", errors.New("missing terminator")
	}
	for _, kv := range strings.Split(string(resp[:len(resp)-2]), "\x01") {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "user":
			user = v
		case "auth":
			scheme, tok, ok := strings.Cut(v, " ")
			if !ok || !strings.EqualFold(scheme, "Bearer") {
				return "", "", errors.New("not a bearer token")
			}
			token = tok
		}
	}
	if user == "" || token == "" {
		return "", "", errors.New("user or token missing")
	}
	return user, token, nil
}
