package report

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/app/period"
	"github.com/mailsvc/mailsvc/core"
)

// SourceReport is the log source of summary report emails.
const SourceReport = "report"

// OutcomeCounter reads the roll-up of final delivery outcomes
// (core.OutcomeBucket, by 15-minute UTC bucket, connection and status).
type OutcomeCounter interface {
	OutcomeBuckets(ctx context.Context, from, to time.Time) ([]core.OutcomeBucket, error)
}

// QueueReader reads the queue: the messages waiting or being sent (the
// Queued and Sending fields), and the creation time of the oldest queued
// one (nil when none).
type QueueReader interface {
	PendingCounts(ctx context.Context) (core.QueueStats, error)
	OldestQueuedAt(ctx context.Context) (*time.Time, error)
}

// LogFinder lists logs newest first (core.LogStore.FindLogs).
type LogFinder interface {
	FindLogs(ctx context.Context, f core.LogFilter) ([]*core.Log, int, error)
}

// ConnectionFinder lists the stored connections with their health.
type ConnectionFinder interface {
	FindConnections(ctx context.Context, f core.ConnectionFilter) ([]*core.Connection, int, error)
}

// AlertCounter counts the alerts raised over a range
// (core.AlertHistoryStore.CountAlerts).
type AlertCounter interface {
	CountAlerts(ctx context.Context, from, to time.Time) ([]core.AlertCount, error)
}

// Site reads what a report needs of the WordPress site.
type Site interface {
	// TimeZone returns the site's zone as wp_timezone() does.
	TimeZone(ctx context.Context) (*time.Location, error)
	// AdminEmail returns the site's admin address, "" when unknown.
	AdminEmail(ctx context.Context) (string, error)
	// Name returns the site's title, "" when unknown.
	Name(ctx context.Context) (string, error)
	// StartOfWeek returns the first day of the site's week (WordPress's
	// start_of_week option).
	StartOfWeek(ctx context.Context) (time.Weekday, error)
}

// SettingsSource returns the free settings with defaults
// (app.Settings.Get).
type SettingsSource interface {
	Get(ctx context.Context) (map[string]any, error)
}

// Enqueuer queues a message for delivery (delivery.Service.Enqueue).
type Enqueuer interface {
	Enqueue(ctx context.Context, l *core.Log) (int64, error)
}

// EffectiveConnections reads a connection with its pinned settings
// applied (app.Connections.Effective), for its from_email.
type EffectiveConnections interface {
	Effective(ctx context.Context, id int64) (*core.Connection, error)
}

// Service builds, previews and sends summary reports. Outcomes,
// Connections and Settings are required; the others may be nil (their
// part of the report is then empty: no failure reasons, queue or alerts;
// UTC, weeks from Monday and no admin address without Site).
type Service struct {
	Outcomes    OutcomeCounter
	Queue       QueueReader
	Logs        LogFinder
	Connections ConnectionFinder
	Alerts      AlertCounter
	Site        Site
	// SiteURL is the site's public address, shown in the report.
	SiteURL  string
	Settings SettingsSource
	// Mailer queues the report; Effective gives the sender of the chosen
	// connection when the from_email setting is empty.
	Mailer    Enqueuer
	Effective EffectiveConnections
	// Jobs records which periods were sent (RunScheduled).
	Jobs core.JobStore
	// Owner names this process in the job records.
	Owner string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (s *Service) now() time.Time { return core.NowFrom(s.Now) }

// location returns the site's time zone, UTC without a Site.
func (s *Service) location(ctx context.Context) (*time.Location, error) {
	return period.Zone(ctx, s.Site)
}

// resolve turns q into a period of a report of freq in the site's time
// zone (location), which it returns beside it.
func (s *Service) resolve(ctx context.Context, q Query, freq string) (Period, *time.Location, error) {
	loc, err := s.location(ctx)
	if err != nil {
		return Period{}, nil, err
	}
	p, err := q.resolve(s.now(), loc, freq)
	if err != nil {
		return Period{}, nil, err
	}
	return p, loc, nil
}

// weekStart returns the first day of the site's week, Monday without a
// Site.
func (s *Service) weekStart(ctx context.Context) (time.Weekday, error) {
	if s.Site == nil {
		return time.Monday, nil
	}
	wd, err := s.Site.StartOfWeek(ctx)
	if err != nil {
		return 0, fmt.Errorf("site start of week: %w", err)
	}
	return wd, nil
}

// Query chooses the range of a preview or of a report sent now: Period
// (daily, weekly or monthly: that length ending now), or From and To
// (dates YYYY-MM-DD read in the site's time zone, To's day included, or
// RFC 3339 times, To excluded). All empty: the period of the
// summary_report frequency ending now (weekly when it is off).
type Query struct {
	Period string `json:"period"`
	From   string `json:"from"`
	To     string `json:"to"`
}

// MaxRangeDays bounds a custom range.
const MaxRangeDays = 366

// rules read a custom range: at most MaxRangeDays days of wall clock,
// from required, to now when to is not given.
var rules = period.Rules{MaxDays: MaxRangeDays, ToNow: true}

// resolve turns q into a period, or a validation error.
func (q Query) resolve(now time.Time, loc *time.Location, freq string) (Period, error) {
	if q.Period != "" && (q.From != "" || q.To != "") {
		return Period{}, core.InvalidField("period", "Give period or from/to, not both.")
	}
	if q.Period != "" {
		switch q.Period {
		case core.ReportDaily, core.ReportWeekly, core.ReportMonthly:
			return Ending(q.Period, now, loc), nil
		}
		return Period{}, core.InvalidField("period", "Must be one of: daily, weekly, monthly.")
	}
	if q.From == "" && q.To == "" {
		if freq == core.ReportOff || freq == "" {
			freq = core.ReportWeekly
		}
		return Ending(freq, now, loc), nil
	}
	p, fields := rules.Resolve(q.From, q.To, now, loc)
	if err := core.Invalid(fields); err != nil {
		return Period{}, err
	}
	return Period{From: p.From, To: p.To}, nil
}

// Rendered is a report as the email carries it.
type Rendered struct {
	Subject string  `json:"subject"`
	HTML    string  `json:"html"`
	Text    string  `json:"text"`
	Report  *Report `json:"report"`
}

// Preview builds the report of the range q without sending it.
func (s *Service) Preview(ctx context.Context, q Query) (*Rendered, error) {
	st, err := s.setting(ctx)
	if err != nil {
		return nil, err
	}
	p, loc, err := s.resolve(ctx, q, st.Frequency)
	if err != nil {
		return nil, err
	}
	return s.render(ctx, p, loc, st.Frequency)
}

func (s *Service) render(ctx context.Context, p Period, loc *time.Location, freq string) (*Rendered, error) {
	r, err := s.build(ctx, p, loc, freq)
	if err != nil {
		return nil, err
	}
	html, err := RenderHTML(r)
	if err != nil {
		return nil, err
	}
	return &Rendered{Subject: Subject(r), HTML: html, Text: RenderText(r), Report: r}, nil
}

func (s *Service) setting(ctx context.Context) (core.SummaryReportSetting, error) {
	m, err := s.Settings.Get(ctx)
	if err != nil {
		return core.SummaryReportSetting{}, fmt.Errorf("read settings: %w", err)
	}
	return core.ParseSummaryReport(m), nil
}

// SendResult is what POST /reports/summary/send answers.
type SendResult struct {
	// LogID is the queued message's log.
	LogID      int64     `json:"log_id"`
	Recipients []string  `json:"recipients"`
	From       time.Time `json:"from"`
	To         time.Time `json:"to"`
	Subject    string    `json:"subject"`
}

// SendNow queues the report of the range q at once to recipients (nil or
// empty: the summary_report recipients, else the site's admin address),
// through the summary_report connection (else the default one). A
// recipients value that is not a list of addresses, or no recipient or
// connection at all, is a validation error.
func (s *Service) SendNow(ctx context.Context, q Query, recipients any) (*SendResult, error) {
	st, err := s.setting(ctx)
	if err != nil {
		return nil, err
	}
	given, msg := core.ParseReportRecipients(recipients)
	if msg != "" {
		return nil, core.InvalidField("recipients", msg)
	}
	if len(given) > 0 {
		st.Recipients = given
	}
	p, loc, err := s.resolve(ctx, q, st.Frequency)
	if err != nil {
		return nil, err
	}
	to, connID, err := s.destination(ctx, st)
	if err != nil {
		return nil, err
	}
	if len(to) == 0 {
		return nil, core.InvalidField("recipients", "No recipient: give recipients, set summary_report.recipients, or set the site's admin email.")
	}
	if connID == 0 {
		return nil, core.InvalidField("connection_id", "No connection: set summary_report.connection_id or the default connection.")
	}
	freq := st.Frequency
	if p.Step != "" {
		freq = p.Step
	}
	out, err := s.render(ctx, p, loc, freq)
	if err != nil {
		return nil, err
	}
	id, err := s.enqueue(ctx, out, to, connID, st.ConnectionID != 0)
	if err != nil {
		return nil, err
	}
	return &SendResult{LogID: id, Recipients: to, From: p.From, To: p.To, Subject: out.Subject}, nil
}

// destination returns the recipients (the setting's, else the admin
// address) and the connection (the setting's, else the default one; 0
// when neither is set).
func (s *Service) destination(ctx context.Context, st core.SummaryReportSetting) ([]string, int64, error) {
	to := st.Recipients
	if len(to) == 0 && s.Site != nil {
		admin, err := s.Site.AdminEmail(ctx)
		if err != nil {
			return nil, 0, fmt.Errorf("site admin email: %w", err)
		}
		if core.ValidEmail(strings.TrimSpace(admin)) {
			to = []string{strings.TrimSpace(admin)}
		}
	}
	connID := st.ConnectionID
	if connID == 0 {
		m, err := s.Settings.Get(ctx)
		if err != nil {
			return nil, 0, fmt.Errorf("read settings: %w", err)
		}
		connID = core.DecodeGeneralSettings(m).DefaultConnectionID
	}
	return to, connID, nil
}

// enqueue queues the rendered report as a service-originated message.
// The message asks for connID when pinned; otherwise it takes the default
// connection's path (and its fallback) like any message.
func (s *Service) enqueue(ctx context.Context, out *Rendered, to []string, connID int64, pinned bool) (int64, error) {
	msg := core.Message{Subject: out.Subject, Text: out.Text, HTML: out.HTML}
	for _, a := range to {
		msg.To = append(msg.To, core.Address{Email: a})
	}
	m, err := s.Settings.Get(ctx)
	if err != nil {
		return 0, fmt.Errorf("read settings: %w", err)
	}
	if core.DecodeGeneralSettings(m).FromEmail == "" && s.Effective != nil {
		if conn, err := s.Effective.Effective(ctx, connID); err == nil {
			msg.From = core.Address{Email: conn.Settings.String("from_email"), Name: conn.Settings.String("from_name")}
		}
	}
	l := &core.Log{Message: msg, Source: SourceReport}
	if pinned {
		l.ConnectionID = &connID
	}
	logID, err := s.Mailer.Enqueue(ctx, l)
	if err != nil {
		return 0, fmt.Errorf("queue the summary report: %w", err)
	}
	return logID, nil
}
