// Package email is the "email" alert channel type: alerts are mailed to
// one or more addresses through a connection the channel chooses
// (connection_id), by the host's core.AlertMailer. The message has the
// subject "[mailsvc] <title>" and the alert as its text body; its sender
// is left empty for the mailer to fill (the site's default sender).
//
// An alert about the channel's own connection is refused with a permanent
// error: mail through a failing connection would fail too, or loop.
package email

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mailsvc/mailsvc/adapters/notify"
	"github.com/mailsvc/mailsvc/core"
)

// Slug is the channel type's slug.
const Slug = "email"

// Settings keys.
const (
	KeyTo           = "to"
	KeyConnectionID = "connection_id"
)

// SubjectPrefix starts the subject of every alert email.
const SubjectPrefix = "[mailsvc] "

func init() { core.RegisterChannelType(Type()) }

// Type returns the channel type as it is registered.
func Type() core.ChannelType {
	return core.ChannelType{
		Slug: Slug,
		Name: "Email",
		Fields: []core.Field{
			{Key: KeyTo, Label: "To", Type: core.FieldString, Required: true,
				Help: "One or more addresses, separated by commas."},
			{Key: KeyConnectionID, Label: "Connection", Type: core.FieldInteger, Required: true, Min: core.Int64(1),
				Help: "The connection that sends the alerts. Alerts about this connection itself are not sent through it."},
		},
		Validate: validate,
		New:      New,
	}
}

// validate checks every address of to.
func validate(s core.Settings) map[string]string {
	addrs := Recipients(s.String(KeyTo))
	if len(addrs) == 0 {
		return map[string]string{KeyTo: "At least one address is required."}
	}
	for _, a := range addrs {
		if !core.ValidEmail(a) {
			return map[string]string{KeyTo: fmt.Sprintf("%q is not a valid email address.", a)}
		}
	}
	return nil
}

// Recipients splits a comma-separated list of addresses, dropping blanks.
func Recipients(to string) []string {
	var out []string
	for _, a := range strings.Split(to, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// Notifier mails alerts through one connection.
type Notifier struct {
	to     []string
	connID int64
	mailer core.AlertMailer
}

// New returns the Notifier of an email channel. The host must provide a
// Mailer.
func New(ch *core.NotificationChannel, env core.NotifierEnv) (core.Notifier, error) {
	if env.Mailer == nil {
		return nil, errors.New("email channel: the host provides no mailer")
	}
	connID := ch.Settings.Int(KeyConnectionID, 0)
	to := Recipients(ch.Settings.String(KeyTo))
	if connID < 1 || len(to) == 0 {
		return nil, core.Invalid(map[string]string{KeyConnectionID: "A connection and at least one address are required."})
	}
	return &Notifier{to: to, connID: connID, mailer: env.Mailer}, nil
}

// Message returns the email of a for the recipients to.
func Message(a core.Alert, to []string) *core.Message {
	msg := &core.Message{
		From:    core.Address{Name: "mailsvc"},
		Subject: SubjectPrefix + notify.Title(a),
		Text:    notify.PlainText(a) + "\n",
	}
	for _, addr := range to {
		msg.To = append(msg.To, core.Address{Email: addr})
	}
	return msg
}

// Notify mails a through the channel's connection, unless a is about that
// connection (a permanent error).
func (n *Notifier) Notify(ctx context.Context, a core.Alert) (string, error) {
	if a.ConnectionID != 0 && a.ConnectionID == n.connID {
		return "", core.Permanent(fmt.Errorf("email channel: the alert concerns connection #%d, which this channel sends through; choose another connection", n.connID))
	}
	if err := n.mailer.SendAlertEmail(ctx, n.connID, Message(a, n.to)); err != nil {
		return "", fmt.Errorf("email channel: sending through connection #%d: %w", n.connID, err)
	}
	return fmt.Sprintf("Sent through connection #%d to %s.", n.connID, strings.Join(n.to, ", ")), nil
}
