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

// suppressionChunk bounds the addresses of one Suppressed call.
const suppressionChunk = 500

// suppressed is what the suppression list says of the recipients of a
// batch: the listed addresses, lower-cased. A nil suppressed lists none.
type suppressed map[string]bool

// normalEmail is an address as the suppression list compares it.
func normalEmail(e string) string { return strings.ToLower(strings.TrimSpace(e)) }

// suppressedAmong checks the recipients (To, Cc and Bcc) of every log of
// a batch against s.o.Suppressions in one call per suppressionChunk
// addresses, not one per message. When the list cannot be read the
// messages are sent as usual (the list is an add-on's safeguard, not a
// reason to hold mail), and a warning is logged.
func (s *engine) suppressedAmong(ctx context.Context, logs []*core.Log) suppressed {
	if s.o.Suppressions == nil || len(logs) == 0 {
		return nil
	}
	seen := map[string]bool{}
	var emails []string
	for _, l := range logs {
		for _, r := range l.Message.Recipients() {
			if e := normalEmail(r.Email); e != "" && !seen[e] {
				seen[e] = true
				emails = append(emails, e)
			}
		}
	}
	var out suppressed
	for from := 0; from < len(emails); from += suppressionChunk {
		listed, err := s.o.Suppressions.Suppressed(ctx, emails[from:min(from+suppressionChunk, len(emails))])
		if err != nil {
			s.o.Logger.Warn("suppression list unreadable; sending anyway", "messages", len(logs), "err", err)
			return nil
		}
		for _, e := range listed {
			if out == nil {
				out = suppressed{}
			}
			out[normalEmail(e)] = true
		}
	}
	return out
}

// suppressedOutcome fails l for good at once (no retry, no fallback)
// when any of its recipients is in listed: the message is not sent to
// anyone, and an attempt and the last error name the suppressed
// addresses, so the log says why.
func (s *engine) suppressedOutcome(l *core.Log, listed suppressed) (core.LogOutcome, bool) {
	if len(listed) == 0 {
		return core.LogOutcome{}, false
	}
	var found []string
	for _, r := range l.Message.Recipients() {
		if e := normalEmail(r.Email); listed[e] {
			listed := false
			for _, f := range found {
				listed = listed || f == e
			}
			if !listed {
				found = append(found, e)
			}
		}
	}
	if len(found) == 0 {
		return core.LogOutcome{}, false
	}
	msg := fmt.Sprintf("not sent: %s on the suppression list", strings.Join(found, ", "))
	if len(found) == 1 {
		msg = fmt.Sprintf("not sent: %s is on the suppression list", found[0])
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
