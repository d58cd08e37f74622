package delivery

import (
	"context"
	"errors"
	"net"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/mailsvc/mailsvc/core"
)

var (
	httpStatusRe = regexp.MustCompile(`HTTP (\d{3})`)
	smtpCodeRe   = regexp.MustCompile(`\b([45]\d\d)\b`)
)

// smtpDrivers are the drivers whose errors carry SMTP reply codes.
var smtpDrivers = map[string]bool{"smtp": true}

// errorClass sorts a send error into the classes Metrics.ProviderError
// reports.
func errorClass(driver string, err error) string {
	if _, ok := core.AsRateLimited(err); ok {
		return ErrorClassRateLimited
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return ErrorClassTimeout
	}
	msg := err.Error()
	if m := httpStatusRe.FindStringSubmatch(msg); m != nil {
		if code, _ := strconv.Atoi(m[1]); code >= 500 {
			return ErrorClass5xx
		} else if code >= 400 {
			return ErrorClass4xx
		}
	}
	if smtpDrivers[driver] {
		if m := smtpCodeRe.FindStringSubmatch(msg); m != nil {
			if m[1][0] == '5' {
				return ErrorClassSMTP5xx
			}
			return ErrorClassSMTP4xx
		}
	}
	var oe *net.OpError
	if errors.As(err, &oe) || errors.As(err, &ne) {
		return ErrorClassNetwork
	}
	return ErrorClassOther
}

var (
	// connectionRefusals are texts of failures to reach a provider at all.
	connectionRefusals = []string{
		"connection refused", "no such host", "network is unreachable", "host is unreachable",
		"i/o timeout", "context deadline exceeded", "Client.Timeout exceeded", "TLS handshake timeout",
		// oauthdriver.ErrUnauthorized, and SES refusing the access key.
		"the provider refused the access token", "InvalidClientTokenId", "SignatureDoesNotMatch", "UnrecognizedClient",
	}
	// smtpSessionFailures prefix the drivers' errors of a failed SMTP
	// session set-up: TCP, greeting, EHLO, STARTTLS and AUTH, before any
	// recipient is named (drivers/smtp classify's "connect" and
	// "reconnect" operations).
	smtpSessionFailures = []string{"smtp: connect ", "smtp: reconnect "}
	httpAuthRe          = regexp.MustCompile(`HTTP 40[13]\b`)
)

// connectionLevel reports whether a failed attempt's error text says the
// connection itself failed — the provider could not be reached, did not
// answer in time, or refused the credentials — rather than the message or
// one of its recipients. The engine has only the text here (the attempt
// record), so it matches what the drivers write: an SMTP failure before
// the mail transaction began, a network error, an HTTP 401 or 403.
func connectionLevel(errText string) bool {
	if strings.Contains(errText, "waiting for a connection") {
		return false // this process's own send slots were busy
	}
	for _, s := range smtpSessionFailures {
		if strings.Contains(errText, s) {
			return true
		}
	}
	for _, s := range connectionRefusals {
		if strings.Contains(errText, s) {
			return true
		}
	}
	return httpAuthRe.MatchString(errText)
}

var (
	// smtp452Re finds an SMTP 452 reply in an error text.
	smtp452Re = regexp.MustCompile(`\b452\b`)
	// overloadTexts are failures that say the server is overloaded or
	// unreachable rather than that the message is wrong.
	overloadTexts = []string{"connection refused", "i/o timeout", "context deadline exceeded", "Client.Timeout exceeded", "TLS handshake timeout"}
)

// slowDownSignal reports whether a failed send asks the connection to
// carry fewer sends at once: a rate-limit answer (SMTP 421, 451 4.7.x and
// the "slow down" replies, HTTP 429), an SMTP 452 other than "too many
// recipients" (4.5.3, which concerns one transaction), a refused
// connection or a timeout. A wait for this process's own send slots is
// none of these.
func slowDownSignal(err error) bool {
	if _, ok := core.AsRateLimited(err); ok {
		return true
	}
	text := err.Error()
	if strings.Contains(text, "waiting for a connection") {
		return false
	}
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) || errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	if smtp452Re.MatchString(text) && !strings.Contains(text, "4.5.3") && !strings.Contains(strings.ToLower(text), "recipients") {
		return true
	}
	for _, s := range overloadTexts {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}
