package report

import (
	"bytes"
	"fmt"
	"html/template"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mailsvc/mailsvc/core"
)

// Subject is the report email's subject line.
func Subject(r *Report) string {
	name := r.SiteName
	if name == "" {
		name = "mailsvc"
	}
	return fmt.Sprintf("[%s] Email summary: %s", name, r.Period.Label())
}

// frequencyWord names a report by its frequency.
func frequencyWord(freq string) string {
	switch freq {
	case core.ReportDaily:
		return "Daily"
	case core.ReportMonthly:
		return "Monthly"
	case core.ReportWeekly:
		return "Weekly"
	}
	return "Email"
}

func rate(r *float64) string {
	if r == nil {
		return "–"
	}
	return strconv.FormatFloat(*r, 'f', -1, 64) + "%"
}

func signed(n int64) string {
	if n > 0 {
		return "+" + strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10)
}

// changeWords says how a count changed: "+12 (+20%)", "no change", "+3
// (none before)".
func changeWords(delta int64, pct *float64, prev int64) string {
	switch {
	case delta == 0:
		return "no change"
	case pct != nil:
		return fmt.Sprintf("%s (%s%%)", signed(delta), strings.TrimSuffix(signedFloat(*pct), ".0"))
	case prev == 0:
		return signed(delta) + " (none before)"
	}
	return signed(delta)
}

func signedFloat(v float64) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if v > 0 {
		return "+" + s
	}
	return s
}

func pointsWords(p *float64) string {
	if p == nil {
		return "–"
	}
	if *p == 0 {
		return "no change"
	}
	return signedFloat(*p) + " points"
}

func healthWord(h string) string {
	switch h {
	case core.HealthHealthy:
		return "healthy"
	case core.HealthDegraded:
		return "slow"
	case core.HealthDown:
		return "down"
	}
	return "not checked"
}

func connName(c ConnectionLine) string {
	switch {
	case c.ID == 0:
		return "(no connection)"
	case c.Name == "":
		return fmt.Sprintf("connection %d (deleted)", c.ID)
	}
	return c.Name
}

func alertWord(event string) string {
	switch event {
	case core.EventDeliveryFailed:
		return "Delivery failed"
	case core.EventFallbackUsed:
		return "Fallback used"
	case core.EventConnectionDown:
		return "Connection down"
	case core.EventConnectionRecovered:
		return "Connection recovered"
	case core.EventOAuthRefreshFailed:
		return "OAuth refresh failed"
	case core.EventQueueStalled:
		return "Queue stalled"
	}
	return event
}

func ago(t time.Time, now time.Time) string {
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "less than a minute"
	case d < time.Hour:
		return plural(int(d/time.Minute), "minute")
	case d < 48*time.Hour:
		return plural(int(d/time.Hour), "hour")
	}
	return plural(int(d/(24*time.Hour)), "day")
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// RenderText renders the plain-text part: short lines, columns aligned
// with spaces, bars drawn with # so that a text-only mail client shows
// the same report.
func RenderText(r *Report) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	title := frequencyWord(r.Frequency) + " email summary"
	if r.SiteName != "" {
		title += " for " + r.SiteName
	}
	w("%s", title)
	w("%s", strings.Repeat("=", utf8.RuneCountInString(title)))
	w("%s (%s)", r.Period.Label(), r.TimeZone)
	if r.SiteURL != "" {
		w("%s", r.SiteURL)
	}
	w("")
	w("TOTALS")
	w("  Sent          %8d   %s", r.Totals.Sent, changeWords(r.Change.Sent, r.Change.SentPercent, r.PreviousTotals.Sent))
	w("  Delivered     %8d", r.Totals.Delivered)
	w("  Failed        %8d   %s", r.Totals.Failed, changeWords(r.Change.Failed, nil, r.PreviousTotals.Failed))
	if r.Totals.Partial > 0 {
		w("  Partly refused%8d", r.Totals.Partial)
	}
	w("  Success rate  %8s   %s", rate(r.Totals.SuccessRate), pointsWords(r.Change.SuccessRatePoints))
	w("  Previous period (%s): %d sent, %d failed, success rate %s",
		r.Previous.Label(), r.PreviousTotals.Sent, r.PreviousTotals.Failed, rate(r.PreviousTotals.SuccessRate))
	w("")
	w("CONNECTIONS")
	if len(r.Connections) == 0 {
		w("  No connection.")
	}
	var most int64 = 1
	for _, c := range r.Connections {
		most = max(most, c.Sent())
	}
	for _, c := range r.Connections {
		w("  %s", connName(c))
		w("    %-24s %d sent, %d failed, success %s (before: %d sent)",
			strings.Repeat("#", int(c.Sent()*24/most)), c.Sent(), c.Failed, rate(c.Rate), c.PreviousSent)
		if c.ID != 0 && c.Name != "" {
			health := "    Health: " + healthWord(c.Health)
			if !c.Active {
				health += " (inactive)"
			}
			if c.HealthError != "" {
				health += ": " + c.HealthError
			}
			w("%s", health)
		}
	}
	if len(r.Days) > 0 {
		w("")
		w("BY DAY (delivered / failed)")
		var top int64 = 1
		for _, d := range r.Days {
			top = max(top, d.Delivered+d.Failed)
		}
		for _, d := range r.Days {
			w("  %-10s %-24s %d / %d", d.Date.Format("Mon 2 Jan"), strings.Repeat("#", int((d.Delivered+d.Failed)*24/top)), d.Delivered, d.Failed)
		}
	}
	w("")
	w("MOST FREQUENT FAILURE REASONS")
	if len(r.FailureReasons) == 0 {
		w("  None.")
	}
	for _, f := range r.FailureReasons {
		w("  %5d  %s", f.Count, f.Reason)
	}
	if r.FailuresRead > 0 && int64(r.FailuresRead) < r.Totals.Failed {
		w("  (from the %d most recent failed messages in the log)", r.FailuresRead)
	}
	w("")
	w("QUEUE NOW")
	if r.Queue.OldestQueuedAt == nil {
		w("  %d queued, %d sending. Nothing is waiting.", r.Queue.Queued, r.Queue.Sending)
	} else {
		w("  %d queued, %d sending. The oldest queued message has waited %s (since %s).", r.Queue.Queued, r.Queue.Sending,
			ago(*r.Queue.OldestQueuedAt, r.GeneratedAt), r.Queue.OldestQueuedAt.In(r.GeneratedAt.Location()).Format("Mon 2 Jan 15:04"))
	}
	w("")
	w("ALERTS RAISED")
	if len(r.Alerts) == 0 {
		w("  None.")
	}
	for _, a := range r.Alerts {
		line := fmt.Sprintf("  %5d  %s", a.Count, alertWord(a.Event))
		if a.ConnectionName != "" {
			line += " (" + a.ConnectionName + ")"
		} else if a.ConnectionID != 0 {
			line += fmt.Sprintf(" (connection %d)", a.ConnectionID)
		}
		w("%s", line)
	}
	w("")
	w("-- ")
	w("Sent by mailsvc. Change or stop this report under Settings, Summary report.")
	return b.String()
}

var funcs = template.FuncMap{
	"rate":   rate,
	"points": pointsWords,
	"health": healthWord,
	"conn":   connName,
	"alert":  alertWord,
	"label":  func(p Period) string { return p.Label() },
	"day":    func(t time.Time) string { return t.Format("Mon 2 Jan") },
	"clock":  func(t time.Time) string { return t.Format("Mon 2 Jan 15:04") },
	"freq":   frequencyWord,
	"change": changeWords,
	"sentOf": func(c ConnectionLine) int64 { return c.Sent() },
	"ago":    ago,
	"in":     func(t *time.Time, ref time.Time) time.Time { return t.In(ref.Location()) },
	"barOf":  barOf,
}

// barPercent is n as a whole percentage of of (at least 1 for n > 0).
func barPercent(n, of int64) int {
	if of <= 0 || n <= 0 {
		return 0
	}
	return max(1, int(n*100/of))
}

var htmlTemplate = template.Must(template.New("report").Funcs(funcs).Parse(`<!DOCTYPE html>
<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>{{.Subject}}</title></head>
<body style="margin:0;padding:0;background:#f4f4f4;font-family:-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;color:#222222">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="background:#f4f4f4"><tr><td align="center" style="padding:16px">
<table role="presentation" width="600" cellpadding="0" cellspacing="0" style="max-width:600px;width:100%;background:#ffffff;border:1px solid #dddddd">
<tr><td style="padding:20px 24px 8px 24px">
<h1 style="margin:0;font-size:20px">{{freq .R.Frequency}} email summary{{if .R.SiteName}} for {{.R.SiteName}}{{end}}</h1>
<p style="margin:4px 0 0 0;color:#666666;font-size:14px">{{label .R.Period}} ({{.R.TimeZone}}){{if .R.SiteURL}} · {{.R.SiteURL}}{{end}}</p>
</td></tr>
<tr><td style="padding:8px 24px">
<table role="presentation" width="100%" cellpadding="8" cellspacing="0" style="border-collapse:collapse;font-size:14px">
<tr>
<td style="border:1px solid #eeeeee;text-align:center"><div style="font-size:24px;font-weight:bold">{{.R.Totals.Sent}}</div><div style="color:#666666">sent</div><div style="font-size:12px;color:#666666">{{change .R.Change.Sent .R.Change.SentPercent .R.PreviousTotals.Sent}}</div></td>
<td style="border:1px solid #eeeeee;text-align:center"><div style="font-size:24px;font-weight:bold;color:#2e7d32">{{.R.Totals.Delivered}}</div><div style="color:#666666">delivered</div></td>
<td style="border:1px solid #eeeeee;text-align:center"><div style="font-size:24px;font-weight:bold;color:#c62828">{{.R.Totals.Failed}}</div><div style="color:#666666">failed</div><div style="font-size:12px;color:#666666">{{change .R.Change.Failed nil .R.PreviousTotals.Failed}}</div></td>
<td style="border:1px solid #eeeeee;text-align:center"><div style="font-size:24px;font-weight:bold">{{rate .R.Totals.SuccessRate}}</div><div style="color:#666666">success rate</div><div style="font-size:12px;color:#666666">{{points .R.Change.SuccessRatePoints}}</div></td>
</tr></table>
<p style="margin:6px 0 0 0;font-size:12px;color:#666666">Previous period ({{label .R.Previous}}): {{.R.PreviousTotals.Sent}} sent, {{.R.PreviousTotals.Failed}} failed, success rate {{rate .R.PreviousTotals.SuccessRate}}.{{if gt .R.Totals.Partial 0}} {{.R.Totals.Partial}} delivered messages had some recipients refused.{{end}}</p>
</td></tr>
<tr><td style="padding:8px 24px"><h2 style="margin:8px 0;font-size:16px">Connections</h2>
{{if not .R.Connections}}<p style="font-size:14px;color:#666666">No connection.</p>{{else}}
<table role="presentation" width="100%" cellpadding="6" cellspacing="0" style="border-collapse:collapse;font-size:13px">
<tr style="text-align:left;color:#666666"><th style="border-bottom:1px solid #dddddd">Connection</th><th style="border-bottom:1px solid #dddddd">Volume</th><th style="border-bottom:1px solid #dddddd;text-align:right">Sent</th><th style="border-bottom:1px solid #dddddd;text-align:right">Failed</th><th style="border-bottom:1px solid #dddddd;text-align:right">Success</th><th style="border-bottom:1px solid #dddddd">Health</th></tr>
{{range .R.Connections}}<tr>
<td style="border-bottom:1px solid #eeeeee">{{conn .}}{{if .Driver}} <span style="color:#666666">({{.Driver}})</span>{{end}}</td>
<td style="border-bottom:1px solid #eeeeee;width:160px">{{template "bar" (barOf .Delivered .Failed $.MaxConn)}}</td>
<td style="border-bottom:1px solid #eeeeee;text-align:right">{{sentOf .}}<div style="font-size:11px;color:#666666">before: {{.PreviousSent}}</div></td>
<td style="border-bottom:1px solid #eeeeee;text-align:right">{{.Failed}}</td>
<td style="border-bottom:1px solid #eeeeee;text-align:right">{{rate .Rate}}</td>
<td style="border-bottom:1px solid #eeeeee">{{if .ID}}{{if .Name}}{{health .Health}}{{if not .Active}} (inactive){{end}}{{if .HealthError}}<div style="font-size:11px;color:#c62828">{{.HealthError}}</div>{{end}}{{end}}{{end}}</td>
</tr>{{end}}
</table>{{end}}
</td></tr>
{{if .R.Days}}<tr><td style="padding:8px 24px"><h2 style="margin:8px 0;font-size:16px">By day</h2>
<table role="presentation" width="100%" cellpadding="3" cellspacing="0" style="border-collapse:collapse;font-size:12px">
{{range .R.Days}}<tr><td style="width:90px;color:#666666">{{day .Date}}</td><td>{{template "bar" (barOf .Delivered .Failed $.MaxDay)}}</td><td style="width:90px;text-align:right">{{.Delivered}} / <span style="color:#c62828">{{.Failed}}</span></td></tr>
{{end}}</table>
<p style="margin:4px 0 0 0;font-size:11px;color:#666666"><span style="color:#2e7d32">■</span> delivered · <span style="color:#c62828">■</span> failed</p>
</td></tr>{{end}}
<tr><td style="padding:8px 24px"><h2 style="margin:8px 0;font-size:16px">Most frequent failure reasons</h2>
{{if not .R.FailureReasons}}<p style="font-size:14px;color:#666666">None.</p>{{else}}
<table role="presentation" width="100%" cellpadding="6" cellspacing="0" style="border-collapse:collapse;font-size:13px">
{{range .R.FailureReasons}}<tr><td style="border-bottom:1px solid #eeeeee;width:50px;text-align:right;font-weight:bold">{{.Count}}</td><td style="border-bottom:1px solid #eeeeee;font-family:Menlo,Consolas,monospace;font-size:12px">{{.Reason}}</td></tr>
{{end}}</table>{{if .ReasonsSampled}}<p style="font-size:11px;color:#666666">From the {{.R.FailuresRead}} most recent failed messages in the log.</p>{{end}}{{end}}
</td></tr>
<tr><td style="padding:8px 24px"><h2 style="margin:8px 0;font-size:16px">Queue now</h2>
<p style="margin:0;font-size:14px">{{.R.Queue.Queued}} queued, {{.R.Queue.Sending}} sending.
{{with .R.Queue.OldestQueuedAt}}The oldest queued message has waited {{ago . $.R.GeneratedAt}} (since {{clock (in . $.R.GeneratedAt)}}).{{else}}Nothing is waiting.{{end}}</p>
</td></tr>
<tr><td style="padding:8px 24px 16px 24px"><h2 style="margin:8px 0;font-size:16px">Alerts raised</h2>
{{if not .R.Alerts}}<p style="font-size:14px;color:#666666">None.</p>{{else}}
<table role="presentation" width="100%" cellpadding="6" cellspacing="0" style="border-collapse:collapse;font-size:13px">
{{range .R.Alerts}}<tr><td style="border-bottom:1px solid #eeeeee;width:50px;text-align:right;font-weight:bold">{{.Count}}</td><td style="border-bottom:1px solid #eeeeee">{{alert .Event}}{{if .ConnectionName}} ({{.ConnectionName}}){{end}}</td></tr>
{{end}}</table>{{end}}
</td></tr>
<tr><td style="padding:12px 24px;border-top:1px solid #eeeeee;font-size:11px;color:#666666">Sent by mailsvc. Change or stop this report under Settings › Summary report.</td></tr>
</table></td></tr></table>
</body></html>
{{define "bar"}}<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="border-collapse:collapse"><tr>{{if .D}}<td width="{{.D}}%" style="background:#2e7d32;height:10px;font-size:1px;line-height:10px">&nbsp;</td>{{end}}{{if .F}}<td width="{{.F}}%" style="background:#c62828;height:10px;font-size:1px;line-height:10px">&nbsp;</td>{{end}}{{if .E}}<td width="{{.E}}%" style="background:#eeeeee;height:10px;font-size:1px;line-height:10px">&nbsp;</td>{{end}}</tr></table>{{end}}`))

type bar struct{ D, F, E int }

// barOf sizes a bar of delivered and failed against the longest, most.
func barOf(delivered, failed, most int64) bar {
	d, f := barPercent(delivered, most), barPercent(failed, most)
	if d+f > 100 {
		d = 100 - f
	}
	return bar{D: d, F: f, E: 100 - d - f}
}

// RenderHTML renders the HTML part: tables and bars drawn with coloured
// table cells, every style inline, no script, no image, no link to fetch.
func RenderHTML(r *Report) (string, error) {
	var maxConn, maxDay int64 = 1, 1
	for _, c := range r.Connections {
		maxConn = max(maxConn, c.Sent())
	}
	for _, d := range r.Days {
		maxDay = max(maxDay, d.Delivered+d.Failed)
	}
	var b bytes.Buffer
	err := htmlTemplate.Execute(&b, map[string]any{
		"R": r, "Subject": Subject(r), "MaxConn": maxConn, "MaxDay": maxDay,
		"ReasonsSampled": r.FailuresRead > 0 && int64(r.FailuresRead) < r.Totals.Failed,
	})
	if err != nil {
		return "", fmt.Errorf("render the summary report: %w", err)
	}
	return b.String(), nil
}
