package delivery

import (
	"context"
	"fmt"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// outcomeAlerts returns the alerts one decided outcome calls for: a
// message failed for good (core.EventDeliveryFailed, naming the
// connection last tried), or the fallback connection taking over a
// message (core.EventFallbackUsed, naming the connection that failed, so
// the alerter folds a failing connection's repeats). The texts carry the
// provider's error as recorded in the log, never settings.
func outcomeAlerts(l *core.Log, out core.LogOutcome, st settings, conns *connLookup) []core.Alert {
	now := time.Now().UTC()
	subject := l.Message.Subject
	switch {
	case out.Status == core.StatusFailed:
		a := core.Alert{
			Event: core.EventDeliveryFailed,
			LogID: l.ID,
			Title: "Email delivery failed",
			Message: fmt.Sprintf("Message %d (%q) failed for good after %d attempt(s): %s",
				l.ID, subject, out.Attempts, out.LastError),
			At: now,
		}
		if out.SentConnectionID != nil {
			a.ConnectionID, a.ConnectionName = *out.SentConnectionID, conns.name(*out.SentConnectionID)
		}
		return []core.Alert{a}
	case out.UsedFallback && !l.UsedFallback && st.fallbackConn != nil:
		a := core.Alert{
			Event: core.EventFallbackUsed,
			LogID: l.ID,
			Title: "Fallback connection used",
			At:    now,
		}
		fb := *st.fallbackConn
		fbName := conns.name(fb)
		if out.SentConnectionID != nil {
			id := *out.SentConnectionID
			a.ConnectionID, a.ConnectionName = id, conns.name(id)
			a.Message = fmt.Sprintf("Message %d (%q) could not be sent through connection %d %q (%s); the fallback connection %d %q takes over.",
				l.ID, subject, id, a.ConnectionName, out.LastError, fb, fbName)
		} else {
			a.Message = fmt.Sprintf("Message %d (%q) could not be sent (%s); the fallback connection %d %q takes over.",
				l.ID, subject, out.LastError, fb, fbName)
		}
		return []core.Alert{a}
	}
	return nil
}

// name returns the name of a connection the batch looked up, or "".
func (c *connLookup) name(id int64) string {
	if conn, ok := c.m[id]; ok {
		return conn.Name
	}
	return ""
}

// recordedAlerts keeps the alerts whose outcome the store applied, when
// some outcomes of a batch were skipped (their lease had passed to another
// worker, which decides them again and alerts then if need be).
func (s *pool) recordedAlerts(ctx context.Context, alerts []core.Alert) []core.Alert {
	var out []core.Alert
	for _, a := range alerts {
		l, err := s.o.Logs.FindLogByID(ctx, a.LogID)
		if err != nil {
			continue
		}
		if (a.Event == core.EventDeliveryFailed && l.Status == core.StatusFailed) ||
			(a.Event == core.EventFallbackUsed && l.UsedFallback) {
			out = append(out, a)
		}
	}
	return out
}

// raise hands alerts to the Alerter, which returns at once.
func (s *pool) raise(ctx context.Context, alerts []core.Alert) {
	if s.o.Alerts == nil {
		return
	}
	for _, a := range alerts {
		s.o.Alerts.Raise(ctx, a)
	}
}
