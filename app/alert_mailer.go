package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/mailsvc/mailsvc/core"
)

// SourceAlert is the log source of alert emails.
const SourceAlert = "alert"

// AlertMailer sends the email alert channel's messages through a chosen
// connection at once, recorded in the log like any message
// (core.AlertMailer). A message without a sender gets the connection's
// from_email, else the from_email setting.
type AlertMailer struct {
	Sender      ImmediateSender
	Connections EffectiveConnections
	// Use, on a multisite network, keeps the alerts (the network's) off
	// the connections sites created for themselves: a channel stored
	// before the rule that names one fails as if the connection did not
	// exist. Nil (a single site) checks nothing.
	Use core.ConnectionUse
}

var _ core.AlertMailer = (*AlertMailer)(nil)

// SendAlertEmail sends msg through connection connID. A refused message or
// an unusable connection is a Permanent error; a provider failure is a
// Temporary one (the alert is retried).
func (m *AlertMailer) SendAlertEmail(ctx context.Context, connID int64, msg *core.Message) error {
	usable, err := core.CanUseConnection(ctx, m.Use, 0, connID)
	if err != nil {
		return core.Temporary(fmt.Errorf("alert email through connection %d: %w", connID, err))
	}
	if !usable {
		return core.Permanent(fmt.Errorf("alert email through connection %d: connection %d does not exist", connID, connID))
	}
	if msg.From.Email == "" {
		if conn, err := m.Connections.Effective(ctx, connID); err == nil {
			msg.From.Email = conn.Settings.String("from_email")
		}
	}
	l, err := m.Sender.SendNow(ctx, connID, msg, SourceAlert, nil)
	if err != nil {
		return core.Permanent(fmt.Errorf("alert email through connection %d: %w", connID, err))
	}
	if l.Status != core.StatusDelivered {
		return core.Temporary(fmt.Errorf("alert email through connection %d: %w", connID, errors.New(l.LastError)))
	}
	return nil
}
