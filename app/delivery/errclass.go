package delivery

import (
	"context"
	"errors"
	"net"
	"regexp"
	"strconv"

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
