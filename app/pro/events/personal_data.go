package events

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Finder reads the provider events recorded for a log
// (adapters/pro/store.DB implements it).
type Finder interface {
	// FindLogEvents returns a log's provider events, oldest first.
	FindLogEvents(ctx context.Context, logID int64) ([]LogEvent, error)
}

// groupEvents is the group of the events' exported items, as
// WordPress's export report shows them.
const groupEvents = "mailsvc-email-events"

// PersonalData is the provider events' part of personal data exports
// (an app.LogItemExporter): each exported log is followed by its events
// whose detail names the address. (An erase removes those events with
// the log's own erase: adapters/pro/store registers that step.)
type PersonalData struct {
	Store Finder
}

// ExportLogItems returns the items of the events of the log logID whose
// detail names email, oldest first (events about the message's other
// recipients are not exported).
func (p *PersonalData) ExportLogItems(ctx context.Context, logID int64, email string) ([]core.PersonalDataItem, error) {
	evs, err := p.Store.FindLogEvents(ctx, logID)
	if err != nil {
		return nil, fmt.Errorf("export the provider events of log %d: %w", logID, err)
	}
	var out []core.PersonalDataItem
	for _, ev := range evs {
		if it, ok := eventItem(ev, email); ok {
			out = append(out, it)
		}
	}
	return out, nil
}

// eventItem is the exported item of a provider event whose detail names
// email.
func eventItem(ev LogEvent, email string) (core.PersonalDataItem, bool) {
	detail, err := json.Marshal(ev.Detail)
	if err != nil || !strings.Contains(strings.ToLower(string(detail)), email) {
		return core.PersonalDataItem{}, false
	}
	return core.PersonalDataItem{
		GroupID: groupEvents, GroupLabel: "Email delivery events",
		ItemID: "mailsvc-log-event-" + strconv.FormatInt(ev.ID, 10),
		Data: []core.PersonalDatum{
			{Name: "Email log", Value: "mailsvc-log-" + strconv.FormatInt(ev.LogID, 10)},
			{Name: "Date", Value: ev.At.UTC().Format(time.RFC3339)},
			{Name: "Provider", Value: ev.Provider},
			{Name: "Event", Value: ev.Event},
			{Name: "Detail", Value: string(detail)},
		},
	}, true
}
