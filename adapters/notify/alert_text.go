package notify

import (
	"strconv"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Fact is one labelled detail of an alert (a Teams fact, a Telegram line).
type Fact struct {
	Name  string
	Value string
}

// Title returns the alert's one-line summary, marked as a test when it is
// one.
func Title(a core.Alert) string {
	t := strings.TrimSpace(a.Title)
	if t == "" {
		t = EventLabel(a.Event)
	}
	if a.Test {
		t = "[test] " + t
	}
	return t
}

// eventLabels names each event in words.
var eventLabels = map[string]string{
	core.EventDeliveryFailed:      "Delivery failed",
	core.EventFallbackUsed:        "Fallback connection used",
	core.EventConnectionDown:      "Connection down",
	core.EventConnectionRecovered: "Connection recovered",
	core.EventOAuthRefreshFailed:  "OAuth token refresh failed",
	core.EventQueueStalled:        "Queue stalled",
}

// EventLabel returns the event in words, or the event name itself when it
// is not one of core.AlertEvents.
func EventLabel(event string) string {
	if l, ok := eventLabels[event]; ok {
		return l
	}
	return event
}

// Facts returns the alert's details in a fixed order, leaving out the
// empty ones: event, connection, log, site and time (UTC, RFC 3339).
func Facts(a core.Alert) []Fact {
	facts := []Fact{{Name: "Event", Value: EventLabel(a.Event)}}
	if a.ConnectionID != 0 || a.ConnectionName != "" {
		v := a.ConnectionName
		if a.ConnectionID != 0 {
			id := "#" + strconv.FormatInt(a.ConnectionID, 10)
			if v == "" {
				v = id
			} else {
				v += " (" + id + ")"
			}
		}
		facts = append(facts, Fact{Name: "Connection", Value: v})
	}
	if a.LogID != 0 {
		facts = append(facts, Fact{Name: "Log", Value: "#" + strconv.FormatInt(a.LogID, 10)})
	}
	if a.Site != "" {
		facts = append(facts, Fact{Name: "Site", Value: a.Site})
	}
	if !a.At.IsZero() {
		facts = append(facts, Fact{Name: "Time", Value: a.At.UTC().Format(time.RFC3339)})
	}
	return facts
}

// PlainText returns the whole alert as plain text: the title, the
// message, then one "Name: value" line per fact.
func PlainText(a core.Alert) string {
	var b strings.Builder
	b.WriteString(Title(a))
	if m := strings.TrimSpace(a.Message); m != "" {
		b.WriteString("\n" + m)
	}
	b.WriteString("\n")
	for _, f := range Facts(a) {
		b.WriteString("\n" + f.Name + ": " + f.Value)
	}
	return b.String()
}

// Truncate cuts s to at most n runes, ending with "…" when it was cut.
func Truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n < 1 {
		return ""
	}
	return string(r[:n-1]) + "…"
}
