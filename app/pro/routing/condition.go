// Package routing is the Pro add-on's choice of connections: routing
// rules (conditions on a message that send it through one connection) and
// sender groups (the connections that send as one address, used with a
// failover, balance or overflow strategy). Its Service serves the routes
// of both and is the delivery engine's ConnectionChooser: routing rules
// first, then the sender group of the message's From, then (no opinion)
// the free default connection. The rules and groups are stored through
// the RoutingStore port (store.go; adapters/pro/store implements it).
package routing

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// Condition fields and operators.
const (
	FieldTo            = "to"
	FieldCc            = "cc"
	FieldBcc           = "bcc"
	FieldFrom          = "from"
	FieldReplyTo       = "reply_to"
	FieldSubject       = "subject"
	FieldSource        = "source"
	FieldHasAttachment = "has_attachment"
	// FieldSite is the id of the multisite network site that sent the
	// message ("1" on a single site).
	FieldSite = "site"
	// FieldHeaderPrefix starts a header field: header:<name>.
	FieldHeaderPrefix = "header:"

	OpIs          = "is"
	OpIsNot       = "is_not"
	OpContains    = "contains"
	OpNotContains = "not_contains"
	OpStartsWith  = "starts_with"
	OpEndsWith    = "ends_with"
	OpMatches     = "matches"
	OpExists      = "exists"
)

// Bounds of a condition.
const (
	// MaxPatternLength bounds a matches pattern (RE2), in bytes.
	MaxPatternLength = 512
	// MaxValueLength bounds any other condition value, in bytes.
	MaxValueLength = 1000
	// MaxConditions bounds the conditions of one rule.
	MaxConditions = 50
)

var (
	// Fields lists the condition fields other than header:<name>.
	Fields = []string{FieldTo, FieldCc, FieldBcc, FieldFrom, FieldReplyTo, FieldSubject, FieldSource, FieldHasAttachment, FieldSite}
	// Operators lists the condition operators.
	Operators = []string{OpIs, OpIsNot, OpContains, OpNotContains, OpStartsWith, OpEndsWith, OpMatches, OpExists}
)

// headerName is the RFC 5322 field-name syntax (printable ASCII but colon).
var headerName = regexp.MustCompile(`^[!-9;-~]{1,76}$`)

// condition is a validated, compiled RoutingCondition.
type condition struct {
	RoutingCondition
	header string // header name for header:<name>
	value  string // lower-cased Value (string operators)
	re     *regexp.Regexp
}

// compileCondition validates c and compiles it; the error map is keyed
// by the condition's own field names (field, operator, value).
func compileCondition(c RoutingCondition) (condition, map[string]string) {
	errs := map[string]string{}
	out := condition{RoutingCondition: c, value: strings.ToLower(c.Value)}
	known := false
	for _, f := range Fields {
		known = known || c.Field == f
	}
	if name, ok := strings.CutPrefix(c.Field, FieldHeaderPrefix); ok {
		if !headerName.MatchString(name) {
			errs["field"] = "A header field is header:<name> with a valid header name."
		}
		out.header, known = name, true
	}
	if !known {
		errs["field"] = fmt.Sprintf("Unknown field %q: use one of %s or header:<name>.", c.Field, strings.Join(Fields, ", "))
	}
	knownOp := false
	for _, op := range Operators {
		knownOp = knownOp || c.Operator == op
	}
	switch {
	case !knownOp:
		errs["operator"] = fmt.Sprintf("Unknown operator %q: use one of %s.", c.Operator, strings.Join(Operators, ", "))
	case c.Field == FieldHasAttachment && c.Operator != OpIs && c.Operator != OpIsNot && c.Operator != OpExists:
		errs["operator"] = "has_attachment takes is, is_not or exists."
	case c.Field == FieldHasAttachment && c.Operator != OpExists && c.Value != "true" && c.Value != "false":
		errs["value"] = `has_attachment compares with "true" or "false".`
	case c.Operator == OpMatches && len(c.Value) > MaxPatternLength:
		errs["value"] = fmt.Sprintf("A pattern is at most %d characters.", MaxPatternLength)
	case c.Operator == OpMatches:
		re, err := regexp.Compile(c.Value)
		if err != nil {
			errs["value"] = "Not a valid regular expression (RE2): " + err.Error()
		}
		out.re = re
	case len(c.Value) > MaxValueLength:
		errs["value"] = fmt.Sprintf("A value is at most %d characters.", MaxValueLength)
	case c.Operator != OpExists && c.Operator != OpIsNot && c.Operator != OpNotContains && c.Value == "":
		errs["value"] = "A value is required for this operator."
	}
	return out, errs
}

// fieldValues returns what the condition's field of l holds: one entry
// per address of an address field (the bare address), one per header of
// that name, the text of the others; none when the field is absent (no
// such header, an empty address list or text).
func fieldValues(c condition, l *core.Log) []string {
	m := &l.Message
	addrs := func(list []core.Address) []string {
		out := make([]string, 0, len(list))
		for _, a := range list {
			out = append(out, a.Email)
		}
		return out
	}
	switch c.Field {
	case FieldTo:
		return addrs(m.To)
	case FieldCc:
		return addrs(m.Cc)
	case FieldBcc:
		return addrs(m.Bcc)
	case FieldReplyTo:
		return addrs(m.ReplyTo)
	case FieldFrom:
		if m.From.Email == "" {
			return nil
		}
		return []string{m.From.Email}
	case FieldSubject:
		if m.Subject == "" {
			return nil
		}
		return []string{m.Subject}
	case FieldSite:
		site := l.SiteID
		if site <= 0 {
			site = core.MainSiteID
		}
		return []string{strconv.FormatInt(site, 10)}
	case FieldSource:
		if l.Source == "" {
			return nil
		}
		return []string{l.Source}
	case FieldHasAttachment:
		return []string{fmt.Sprint(len(m.Attachments) > 0)}
	}
	var out []string
	for _, h := range m.Headers {
		if strings.EqualFold(h.Name, c.header) {
			out = append(out, h.Value)
		}
	}
	return out
}

// holds reports whether the condition holds for l. Text comparisons
// ignore case; matches uses the pattern as written (add (?i) to ignore
// case). A field with several values (addresses, repeated headers) meets
// a positive operator when any value does, and a negative one (is_not,
// not_contains) when no value meets its positive form.
func (c condition) holds(l *core.Log) bool {
	vals := fieldValues(c, l)
	if c.Field == FieldHasAttachment {
		has := vals[0] == "true"
		switch c.Operator {
		case OpExists:
			return has
		case OpIs:
			return vals[0] == c.value
		default:
			return vals[0] != c.value
		}
	}
	anyValue := func(pred func(v string) bool) bool {
		for _, v := range vals {
			if pred(v) {
				return true
			}
		}
		return false
	}
	lower := func(pred func(v string) bool) func(string) bool {
		return func(v string) bool { return pred(strings.ToLower(v)) }
	}
	switch c.Operator {
	case OpExists:
		return len(vals) > 0
	case OpIs:
		return anyValue(lower(func(v string) bool { return v == c.value }))
	case OpIsNot:
		return !anyValue(lower(func(v string) bool { return v == c.value }))
	case OpContains:
		return anyValue(lower(func(v string) bool { return strings.Contains(v, c.value) }))
	case OpNotContains:
		return !anyValue(lower(func(v string) bool { return strings.Contains(v, c.value) }))
	case OpStartsWith:
		return anyValue(lower(func(v string) bool { return strings.HasPrefix(v, c.value) }))
	case OpEndsWith:
		return anyValue(lower(func(v string) bool { return strings.HasSuffix(v, c.value) }))
	case OpMatches:
		return c.re != nil && anyValue(c.re.MatchString)
	}
	return false
}
