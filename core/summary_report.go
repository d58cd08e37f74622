package core

import (
	"fmt"
	"slices"
	"strings"
)

// SummaryReportKey is the free setting of the periodic summary email.
const SummaryReportKey = "summary_report"

// Frequencies of the summary report.
const (
	ReportOff     = "off"
	ReportDaily   = "daily"
	ReportWeekly  = "weekly"
	ReportMonthly = "monthly"
)

// ReportFrequencies lists the allowed values of summary_report.frequency.
var ReportFrequencies = []string{ReportOff, ReportDaily, ReportWeekly, ReportMonthly}

// MaxReportRecipients bounds the recipients of one summary report.
const MaxReportRecipients = 20

// SummaryReportSetting is the summary_report setting read into fields:
// how often the report goes out, to whom (empty: the site's admin
// address) and through which connection (0: the default connection).
type SummaryReportSetting struct {
	Frequency    string
	Recipients   []string
	ConnectionID int64
}

// SummaryReportDefault returns the default value of summary_report: a
// weekly report to the site's admin address through the default
// connection.
func SummaryReportDefault() map[string]any {
	return map[string]any{"frequency": ReportWeekly, "recipients": []any{}, "connection_id": nil}
}

// ParseSummaryReport reads the summary_report value of a settings map
// (app.Settings.Get); a missing or unreadable value gives the defaults.
func ParseSummaryReport(settings map[string]any) SummaryReportSetting {
	out := SummaryReportSetting{Frequency: ReportWeekly}
	m, ok := settings[SummaryReportKey].(map[string]any)
	if !ok {
		return out
	}
	if f, ok := m["frequency"].(string); ok && slices.Contains(ReportFrequencies, f) {
		out.Frequency = f
	}
	out.Recipients, _ = ParseReportRecipients(m["recipients"])
	if n, ok := AsInt(m["connection_id"]); ok && n > 0 {
		out.ConnectionID = n
	}
	return out
}

// ParseReportRecipients reads a list of recipients given as an array of
// addresses or one comma-separated string (nil: none). It returns the
// addresses trimmed, without duplicates (ignoring case), or the reason
// the value is refused.
func ParseReportRecipients(v any) ([]string, string) {
	var raw []string
	switch r := v.(type) {
	case nil:
	case string:
		raw = strings.Split(r, ",")
	case []string:
		raw = r
	case []any:
		for _, e := range r {
			s, ok := e.(string)
			if !ok {
				return nil, "Must be a list of email addresses."
			}
			raw = append(raw, s)
		}
	default:
		return nil, "Must be a list of email addresses."
	}
	out := []string{}
	seen := map[string]bool{}
	for _, s := range raw {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !ValidEmail(s) {
			return nil, fmt.Sprintf("%q is not a valid email address.", s)
		}
		if seen[strings.ToLower(s)] {
			continue
		}
		seen[strings.ToLower(s)] = true
		out = append(out, s)
	}
	if len(out) > MaxReportRecipients {
		return nil, fmt.Sprintf("At most %d addresses.", MaxReportRecipients)
	}
	return out, ""
}

// CheckSummaryReport validates a summary_report value (SettingDef.Check):
// an object with frequency (one of ReportFrequencies), recipients (a list
// of addresses, or a comma-separated string) and connection_id (an id or
// null). Fields left out take their defaults; unknown fields are refused.
// The normalised value has all three fields, recipients as a list.
func CheckSummaryReport(v any) (any, map[string]string) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, map[string]string{"": "Must be an object with frequency, recipients and connection_id."}
	}
	out := SummaryReportDefault()
	fields := map[string]string{}
	for k, e := range m {
		switch k {
		case "frequency":
			s, ok := e.(string)
			if !ok || !slices.Contains(ReportFrequencies, s) {
				fields[k] = "Must be one of: " + strings.Join(ReportFrequencies, ", ") + "."
				continue
			}
			out[k] = s
		case "recipients":
			list, msg := ParseReportRecipients(e)
			if msg != "" {
				fields[k] = msg
				continue
			}
			anyList := make([]any, len(list))
			for i, s := range list {
				anyList[i] = s
			}
			out[k] = anyList
		case "connection_id":
			if e == nil {
				continue
			}
			n, ok := AsInt(e)
			if !ok || n < 0 {
				fields[k] = "Must be a connection id or null."
				continue
			}
			if n > 0 {
				out[k] = n
			}
		default:
			fields[k] = "Unknown field."
		}
	}
	if len(fields) > 0 {
		return nil, fields
	}
	return out, nil
}
