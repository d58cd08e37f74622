package delivery

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// logIfFailed calls logFailure when the last attempt of out failed
// (temporary or permanent): one comparison on the path of a delivered
// message.
func (s *engine) logIfFailed(l *core.Log, out *core.LogOutcome, conns *connLookup) {
	if n := len(out.History); n > 0 {
		if o := out.History[n-1].Outcome; o == core.OutcomeTemporary || o == core.OutcomePermanent {
			s.logFailure(l, out, conns)
		}
	}
}

// logFailure writes the service's log line for an attempt of l that
// failed: WARN when the message will be tried again (on the same
// connection after a back-off, or handed to the fallback), ERROR when the
// failure is final. The line names the connection, the recipients'
// domains (never an address) and the error with the connection's secret
// settings masked. A delivered, uncertain or partly delivered outcome
// writes nothing: decide calls it only on the failure path, so a
// successful attempt costs nothing.
func (s *engine) logFailure(l *core.Log, out *core.LogOutcome, conns *connLookup) {
	if len(out.History) == 0 {
		return
	}
	a := out.History[len(out.History)-1]
	if a.Outcome != core.OutcomeTemporary && a.Outcome != core.OutcomePermanent {
		return
	}
	level, msg := slog.LevelWarn, "delivery attempt failed: will retry"
	switch {
	case out.Status == core.StatusFailed:
		level, msg = slog.LevelError, "delivery failed"
	case out.Status != core.StatusQueued:
		return
	case out.UsedFallback && !l.UsedFallback:
		msg = "delivery attempt failed: handed to the fallback connection"
	}
	name, errText := "none", a.Error
	if a.ConnectionID != 0 {
		name = "#" + strconv.FormatInt(a.ConnectionID, 10)
		if conn, err := conns.get(a.ConnectionID); err == nil && conn != nil {
			if conn.Name != "" {
				name = conn.Name
			}
			errText = core.ScrubText(errText, connectionSecrets(conn)...)
		}
	}
	errText = maskRecipients(errText, &l.Message)
	attrs := []slog.Attr{
		slog.Int64("log_id", l.ID),
		slog.String("connection", name),
		slog.String("recipient_domains", recipientDomains(&l.Message)),
		slog.Int("attempt", out.Attempts),
		slog.String("error", errText),
	}
	if level == slog.LevelWarn {
		attrs = append(attrs, slog.Time("next_attempt", out.NextAttemptAt))
	}
	s.o.Logger.LogAttrs(context.Background(), level, msg, attrs...)
}

// connectionSecrets returns the values of conn's sensitive settings, to
// mask in a log line.
func connectionSecrets(conn *core.Connection) []string {
	var out []string
	for k, v := range conn.Settings {
		if sv, ok := v.(string); ok && len(sv) >= 4 && core.IsSensitiveKey(k, nil) {
			out = append(out, sv)
		}
	}
	return out
}

// maskRecipients returns text with each recipient's address of msg (as
// given, or in lower case, as providers often echo it) replaced by its
// domain alone, "…@example.com".
func maskRecipients(text string, msg *core.Message) string {
	for _, r := range msg.Recipients() {
		at := strings.LastIndexByte(r.Email, '@')
		if at <= 0 {
			continue
		}
		masked := "…" + r.Email[at:]
		text = strings.ReplaceAll(text, r.Email, masked)
		text = strings.ReplaceAll(text, strings.ToLower(r.Email), strings.ToLower(masked))
	}
	return text
}

// recipientDomains returns the distinct domains of msg's recipients,
// sorted and comma-separated: where the mail was going, without whom.
func recipientDomains(msg *core.Message) string {
	var domains []string
	for _, r := range msg.Recipients() {
		at := strings.LastIndexByte(r.Email, '@')
		if at < 0 {
			continue
		}
		d := strings.ToLower(r.Email[at+1:])
		if !slices.Contains(domains, d) {
			domains = append(domains, d)
		}
	}
	slices.Sort(domains)
	return strings.Join(domains, ",")
}
