package delivery

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// SuppressionList is an add-on's list of addresses mail is no longer
// sent to (Pro's suppression list, filled by hard bounces and spam
// complaints).
type SuppressionList interface {
	// Suppressed returns those of emails that are on the list. An error
	// means the list could not be read.
	Suppressed(ctx context.Context, emails []string) ([]string, error)
}

// suppressedOutcome checks l's recipients (To, Cc and Bcc) against
// s.Suppressions before a send. When any is listed, the message is not
// sent to anyone: it fails for good at once (no retry, no fallback),
// with an attempt and a last error naming the suppressed addresses, so
// the log says why. When the list cannot be read the message is sent as
// usual (the list is an add-on's safeguard, not a reason to hold mail),
// and a warning is logged.
func (s *Service) suppressedOutcome(ctx context.Context, l *core.Log) (core.LogOutcome, bool) {
	if s.Suppressions == nil {
		return core.LogOutcome{}, false
	}
	rcpts := l.Message.Recipients()
	emails := make([]string, 0, len(rcpts))
	for _, r := range rcpts {
		emails = append(emails, r.Email)
	}
	listed, err := s.Suppressions.Suppressed(ctx, emails)
	if err != nil {
		s.Logger.Warn("suppression list unreadable; sending anyway", "log_id", l.ID, "err", err)
		return core.LogOutcome{}, false
	}
	if len(listed) == 0 {
		return core.LogOutcome{}, false
	}
	msg := fmt.Sprintf("not sent: %s on the suppression list", strings.Join(listed, ", "))
	if len(listed) == 1 {
		msg = fmt.Sprintf("not sent: %s is on the suppression list", listed[0])
	}
	return core.LogOutcome{
		LogID:            l.ID,
		Status:           core.StatusFailed,
		Attempts:         l.Attempts + 1,
		PhaseAttempts:    l.PhaseAttempts + 1,
		UsedFallback:     l.UsedFallback,
		Simulated:        l.Simulated,
		SentConnectionID: l.SentConnectionID,
		LastError:        msg,
		History: []core.Attempt{{
			LogID: l.ID, At: time.Now().UTC(), Outcome: core.OutcomePermanent, Error: msg,
		}},
	}, true
}
