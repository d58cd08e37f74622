package app

import (
	"context"
	"fmt"

	"github.com/mailsvc/mailsvc/core"
)

// oneTimeKey marks a context whose reader must not see or resend one-time
// links (WithoutOneTimeLinks).
type oneTimeKey struct{}

// WithoutOneTimeLinks returns ctx for a reader who may not see or resend
// the one-time links of a log's message, whatever the log_body mode kept:
// a site's administrator on a network (not a super admin), who would
// otherwise read, or resend to themselves, the password-reset mail a
// network user (a super admin among them) asked for on the site's login
// page. For such a reader Get answers the body redacted (the credentials
// the redacted mode replaces, the built-in rules and the site's patterns)
// and counts them in redacted_count; ResendOne and ResendOneTo refuse such
// a log (403), and the bulk resends skip it.
func WithoutOneTimeLinks(ctx context.Context) context.Context {
	return context.WithValue(ctx, oneTimeKey{}, true)
}

// withoutOneTime reports whether ctx is WithoutOneTimeLinks.
func withoutOneTime(ctx context.Context) bool {
	v, _ := ctx.Value(oneTimeKey{}).(bool)
	return v
}

// hideOneTime replaces the one-time credentials of l's body in place and
// adds them to l.RedactedCount; it reports how many it replaced.
func (s *Logs) hideOneTime(ctx context.Context, l *core.Log) int {
	r := s.Redaction.Redactor(ctx)
	text, nt := r.Body(l.Message.Text)
	html, nh := r.Body(l.Message.HTML)
	if nt+nh == 0 {
		return 0
	}
	l.Message.Text, l.Message.HTML = text, html
	l.RedactedCount += nt + nh
	return nt + nh
}

// holdsOneTime reports whether l's body holds a one-time credential that
// the reader of ctx may not resend (see WithoutOneTimeLinks).
func (s *Logs) holdsOneTime(ctx context.Context, l *core.Log) bool {
	if !withoutOneTime(ctx) {
		return false
	}
	c := *l
	return s.hideOneTime(ctx, &c) > 0
}

// errOneTimeResend is the refusal of a resend of a log whose message holds
// a one-time link, to a site's administrator on a network.
func errOneTimeResend(id int64) error {
	return core.Errorf(core.EFORBIDDEN, "Log %d holds a one-time link (a password reset or a similar confirmation): on a network only a super admin may resend it.", id)
}

// withoutOneTimeIDs returns ids without those of logs whose message holds
// a one-time link, for a reader WithoutOneTimeLinks; ids unchanged
// otherwise. Unknown ids are kept (the resend skips them).
func (s *Logs) withoutOneTimeIDs(ctx context.Context, ids []int64) ([]int64, error) {
	if !withoutOneTime(ctx) {
		return ids, nil
	}
	out := make([]int64, 0, len(ids))
	for _, id := range ids {
		l, err := s.Store.FindLogByID(ctx, id)
		if core.ErrorCode(err) == core.ENOTFOUND {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("resend log %d: %w", id, err)
		}
		if !s.holdsOneTime(ctx, l) {
			out = append(out, id)
		}
	}
	return out, nil
}
