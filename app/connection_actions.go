package app

import (
	"context"
	"fmt"
	"html"
	"io"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// SourceTest is the log source of test emails.
const SourceTest = "test"

// DefaultVerifyTimeout bounds a credentials check.
const DefaultVerifyTimeout = 30 * time.Second

// maxSubjectLen bounds a test email's subject (RFC 5322 line length).
const maxSubjectLen = 998

// ImmediateSender sends one message synchronously through one connection
// and records it as a log (delivery.Service.SendNow): a bad message or a
// missing or inactive connection is an EINVALID error; a provider failure
// is a failed log, not an error.
type ImmediateSender interface {
	SendNow(ctx context.Context, connID int64, msg *core.Message, source string, hostHooks core.OutcomeHostHooks) (*core.Log, error)
}

// EffectiveConnections returns a connection with its secrets decrypted and
// constants applied (Connections.Effective).
type EffectiveConnections interface {
	Effective(ctx context.Context, id int64) (*core.Connection, error)
}

// SettingsReader returns the free settings with defaults (Settings.Get).
type SettingsReader interface {
	Get(ctx context.Context) (map[string]any, error)
}

// SiteSender gives the sender of last resort: the address the host sends
// from when neither the connection nor the settings name one (beside
// WordPress, wordpress@ and the site's domain, as wp_mail() computes it).
type SiteSender interface {
	// DefaultFrom returns the address, or "" when none can be made.
	DefaultFrom(ctx context.Context) (string, error)
}

// ConnectionActions are the connection operations beyond storage: test
// emails and credential checks.
type ConnectionActions struct {
	Connections EffectiveConnections
	Settings    SettingsReader
	// Site, when set, gives the test emails' sender when neither the
	// connection's from_email nor the from_email setting is set.
	Site   SiteSender
	Sender ImmediateSender
	// Use, on a multisite network, limits the test email
	// (SendTestEmail) to the connections the request's site may use
	// (core.ActingSite): the network's and the site's own; another
	// site's is answered as a missing one. Nil (a single site) lets it
	// use any connection.
	Use core.ConnectionUse
	// Env is passed to drivers when a transport is built for a check.
	Env   core.DriverEnv
	Hooks *core.Hooks
	// HostHooks, when set, carries mail_svc_test_email_sent to the host's
	// hooks (WordPress) while it listens to it.
	HostHooks core.HostHooks
	// VerifyTimeout bounds a check; 0 means DefaultVerifyTimeout.
	VerifyTimeout time.Duration
	// APIDebug, when set and true, attaches the attempts' raw provider
	// responses and errors to test email results (the
	// MAIL_SVC_DEBUG_ATTACH_API_DEBUG constant and the
	// mail_svc_api_debug_response_enabled filter).
	APIDebug func() bool
}

// TestEmailInput is a test email request. Nil fields were not given.
type TestEmailInput struct {
	To           *string
	ConnectionID *int64
	Subject      *string
}

// TestEmailResult reports a test email: Success is false when the
// provider refused it or could not be reached, with Message saying why.
type TestEmailResult struct {
	Success           bool   `json:"success"`
	Message           string `json:"message"`
	LogID             int64  `json:"log_id"`
	Status            string `json:"status"`
	ConnectionID      int64  `json:"connection_id"`
	To                string `json:"to"`
	ProviderMessageID string `json:"provider_message_id,omitempty"`
	// APIDebug holds the attempts with the provider's raw answers, only
	// when raw diagnostics are enabled.
	APIDebug []core.Attempt `json:"api_debug,omitempty"`
}

// VerifyResult reports a credentials check.
type VerifyResult struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
}

// SendTestEmail sends a real test email to in.To through the connection
// in.ConnectionID (POST /test-email). A missing or invalid address and a
// missing, unknown or inactive connection are validation errors; so is,
// on a network, a connection the acting site may not use (Use), with the
// unknown connection's text.
func (a *ConnectionActions) SendTestEmail(ctx context.Context, in TestEmailInput) (*TestEmailResult, error) {
	fields := map[string]string{}
	to := ""
	if in.To == nil || strings.TrimSpace(*in.To) == "" {
		fields["to"] = "This field is required."
	} else if to = strings.TrimSpace(*in.To); !core.ValidEmail(to) {
		fields["to"] = "Must be a valid email address."
	}
	if in.ConnectionID == nil {
		fields["connection_id"] = "This field is required."
	} else if *in.ConnectionID < 1 {
		fields["connection_id"] = "Must be the id of a connection."
	}
	if in.Subject != nil && len(*in.Subject) > maxSubjectLen {
		fields["subject"] = fmt.Sprintf("Must be at most %d characters.", maxSubjectLen)
	}
	if err := core.Invalid(fields); err != nil {
		return nil, err
	}
	if site, ok := core.ActingSite(ctx); ok {
		usable, err := core.CanUseConnection(ctx, a.Use, site, *in.ConnectionID)
		if err != nil {
			return nil, fmt.Errorf("test email: %w", err)
		}
		if !usable {
			return nil, core.InvalidField("connection_id", core.NoSuchConnection(*in.ConnectionID))
		}
	}
	conn, err := a.Connections.Effective(ctx, *in.ConnectionID)
	if core.ErrorCode(err) == core.ENOTFOUND {
		return nil, core.InvalidField("connection_id", core.NoSuchConnection(*in.ConnectionID))
	} else if err != nil {
		return nil, fmt.Errorf("test email: %w", err)
	}
	if !conn.IsActive {
		return nil, core.InvalidField("connection_id", fmt.Sprintf("Connection %d is inactive.", conn.ID))
	}
	subject := ""
	if in.Subject != nil {
		subject = *in.Subject
	}
	return a.send(ctx, conn, to, subject, nil)
}

// TestConnection sends a real test email through connection id (POST
// /connections/{id}/test) to `to`, or when empty to the connection's
// from_email, else the site's from_email, and fires the
// mail_svc_test_email_sent event with the connection id, the recipient
// and the log id once the provider accepted it. An unknown connection is
// ENOTFOUND; an inactive one or no recipient a validation error.
func (a *ConnectionActions) TestConnection(ctx context.Context, id int64, to string) (*TestEmailResult, error) {
	conn, err := a.Connections.Effective(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("test connection %d: %w", id, err)
	}
	if !conn.IsActive {
		return nil, core.InvalidField("connection_id", fmt.Sprintf("Connection %d is inactive.", id))
	}
	to = strings.TrimSpace(to)
	if to == "" {
		to = conn.Settings.String("from_email")
	}
	if to == "" && a.Settings != nil {
		st, err := a.Settings.Get(ctx)
		if err != nil {
			return nil, fmt.Errorf("test connection %d: %w", id, err)
		}
		to = core.DecodeGeneralSettings(st).FromEmail
	}
	if to == "" {
		return nil, core.InvalidField("to", "No recipient: give to, or set a from email on the connection or in the settings.")
	}
	if !core.ValidEmail(to) {
		return nil, core.InvalidField("to", "Must be a valid email address.")
	}
	var hostHooks core.OutcomeHostHooks
	if a.HostHooks != nil && a.HostHooks.Listens(ctx, core.HookTestEmailSent) {
		hostHooks = func(out core.LogOutcome) []core.HostHook {
			return []core.HostHook{{Name: core.HookTestEmailSent,
				Args: []any{conn.ID, to, testSubject(""), out.LogID, out.Status == core.StatusDelivered || out.Simulated, out.LastError}}}
		}
	}
	res, err := a.send(ctx, conn, to, "", hostHooks)
	if err != nil {
		return nil, err
	}
	if res.Success {
		a.Hooks.DoAction(core.HookTestEmailSent, conn.ID, to, res.LogID)
	}
	return res, nil
}

// testSubject is the subject of a test email: subject, or the default.
func testSubject(subject string) string {
	if subject == "" {
		return "mailsvc test email"
	}
	return subject
}

// send composes the test message and sends it synchronously; hostHooks
// (may be nil) are recorded with its outcome.
func (a *ConnectionActions) send(ctx context.Context, conn *core.Connection, to, subject string, hostHooks core.OutcomeHostHooks) (*TestEmailResult, error) {
	subject = testSubject(subject)
	now := time.Now().UTC().Format(time.RFC1123Z)
	msg := &core.Message{
		To:      []core.Address{{Email: to}},
		Subject: subject,
		Text: fmt.Sprintf("This is a test email sent by mailsvc through the connection %q (%s driver) at %s.\n\nIf you can read this, the connection works.\n",
			conn.Name, conn.Driver, now),
		HTML: fmt.Sprintf("<p>This is a test email sent by mailsvc through the connection <strong>%s</strong> (%s driver) at %s.</p><p>If you can read this, the connection works.</p>",
			html.EscapeString(conn.Name), html.EscapeString(conn.Driver), now),
	}
	from, err := a.sender(ctx, conn)
	if err != nil {
		return nil, err
	}
	msg.From = from
	l, err := a.Sender.SendNow(ctx, conn.ID, msg, SourceTest, hostHooks)
	if err != nil {
		return nil, err
	}
	res := &TestEmailResult{
		Success:           l.Status == core.StatusDelivered || l.Simulated,
		LogID:             l.ID,
		Status:            l.Status,
		ConnectionID:      conn.ID,
		To:                to,
		ProviderMessageID: l.ProviderMessageID,
	}
	switch {
	case l.Simulated:
		res.Message = "Simulation mode is on: the test email was recorded but not sent."
	case l.Status == core.StatusCaptured:
		res.Message = fmt.Sprintf("Mail is being held on this site: the test email to %s was captured, not sent. Release it from the capture list, or add the address to capture_allow_list.", to)
	case l.Status == core.StatusHeld:
		res.Message = fmt.Sprintf("The flood guard held the test email to %s, not sent: release it on the Email logs screen (filter: held).", to)
	case res.Success:
		res.Message = fmt.Sprintf("The test email to %s was accepted by the provider.", to)
	default:
		res.Message = "The test email could not be sent: " + l.LastError
	}
	if a.APIDebug != nil && a.APIDebug() {
		res.APIDebug = l.History
	}
	return res, nil
}

// sender returns a test email's From: the connection's from_email (and
// from_name), else the from_email and from_name settings, else the site's
// own sender (Site), else an empty address (the message then fails
// validation).
func (a *ConnectionActions) sender(ctx context.Context, conn *core.Connection) (core.Address, error) {
	if from := conn.Settings.String("from_email"); core.ValidEmail(from) {
		return core.Address{Email: from, Name: conn.Settings.String("from_name")}, nil
	}
	if a.Settings != nil {
		st, err := a.Settings.Get(ctx)
		if err != nil {
			return core.Address{}, fmt.Errorf("read the from settings: %w", err)
		}
		if g := core.DecodeGeneralSettings(st); core.ValidEmail(g.FromEmail) {
			return core.Address{Email: g.FromEmail, Name: g.FromName}, nil
		}
	}
	if a.Site != nil {
		from, err := a.Site.DefaultFrom(ctx)
		if err != nil {
			return core.Address{}, fmt.Errorf("the site's default sender: %w", err)
		}
		return core.Address{Email: from}, nil
	}
	return core.Address{}, nil
}

// speaksSMTP reports whether a connection logs in over SMTP: the smtp
// driver, and ses in its smtp delivery mode.
func speaksSMTP(c *core.Connection) bool {
	return c.Driver == "smtp" || c.Driver == "ses" && c.Settings.String("delivery_mode") == "smtp"
}

// VerifyCredentials checks the SMTP login of connection id without sending
// (POST /connections/{id}/verify-credentials). Connections that do not
// speak SMTP are a validation error; a rejected login is a result with
// Success false.
func (a *ConnectionActions) VerifyCredentials(ctx context.Context, id int64) (*VerifyResult, error) {
	conn, err := a.Connections.Effective(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("verify connection %d: %w", id, err)
	}
	if !speaksSMTP(conn) {
		return nil, core.InvalidField("driver", fmt.Sprintf("Connection %d uses the %s driver in API mode, which has no SMTP login; use verify-api-credentials.", id, conn.Driver))
	}
	return a.verify(ctx, conn, "The SMTP server accepted the credentials.")
}

// VerifyAPICredentials checks the API credentials of connection id with an
// authenticated read that sends nothing (POST
// /connections/{id}/verify-api-credentials). SMTP connections and drivers
// that cannot check without sending are a validation error.
func (a *ConnectionActions) VerifyAPICredentials(ctx context.Context, id int64) (*VerifyResult, error) {
	conn, err := a.Connections.Effective(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("verify connection %d: %w", id, err)
	}
	if speaksSMTP(conn) {
		return nil, core.InvalidField("driver", fmt.Sprintf("Connection %d logs in over SMTP; use verify-credentials.", id))
	}
	return a.verify(ctx, conn, "The provider accepted the API credentials.")
}

// verify builds conn's transport and runs its Verifier.
func (a *ConnectionActions) verify(ctx context.Context, conn *core.Connection, okMessage string) (*VerifyResult, error) {
	if conn.SettingsError != "" {
		return &VerifyResult{Success: false, Message: conn.SettingsError}, nil
	}
	d, ok := core.LookupDriver(conn.Driver)
	if !ok || d.New == nil {
		return nil, core.InvalidField("driver", fmt.Sprintf("The %s driver is not available in this build.", conn.Driver))
	}
	tr, err := d.New(conn, a.Env)
	if err != nil {
		if core.ErrorCode(err) != core.EINTERNAL {
			return &VerifyResult{Success: false, Message: core.ErrorMessage(err)}, nil
		}
		return &VerifyResult{Success: false, Message: "The connection's settings cannot be used: " + err.Error()}, nil
	}
	if cl, ok := tr.(io.Closer); ok {
		defer cl.Close()
	}
	v, ok := tr.(core.Verifier)
	if !ok {
		return nil, core.InvalidField("driver", fmt.Sprintf("The %s driver cannot check credentials without sending; send a test email instead.", conn.Driver))
	}
	timeout := a.VerifyTimeout
	if timeout <= 0 {
		timeout = DefaultVerifyTimeout
	}
	vctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := v.Verify(vctx); err != nil {
		kind := "The provider rejected the credentials"
		if core.IsTemporary(err) {
			kind = "The provider could not be reached"
		}
		return &VerifyResult{Success: false, Message: fmt.Sprintf("%s: %v", kind, err)}, nil
	}
	return &VerifyResult{Success: true, Message: okMessage}, nil
}
