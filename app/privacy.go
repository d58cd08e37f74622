package app

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// PrivacyPageSize is how many logs one page of a personal data export,
// and one call of an erase, covers.
const PrivacyPageSize = 100

// privacyGroupLogs is the group of the logs' exported items, as
// WordPress's export report shows them.
const privacyGroupLogs = "mailsvc-email-log"

// Privacy answers personal data export and erase requests for an email
// address, in the shape of WordPress's personal data exporters and
// erasers (the REST routes /privacy/export and /privacy/erase).
type Privacy struct {
	Store core.PersonalDataStore
	// Transcripts, when set, is the debug log's SMTP transcripts: an
	// erase removes those naming the address.
	Transcripts TranscriptEraser
	// Keepers are what add-on modules keep about an address beside the
	// logs (the Pro add-on: its suppression list entry), asked in order
	// after the logs. None in a build without add-ons.
	Keepers []PersonalDataKeeper
	// LogItems are what add-on modules keep per log (the Pro add-on:
	// the log's provider events), asked in order for each exported log;
	// their items follow the log's own. None in a build without add-ons.
	LogItems []LogItemExporter
}

// LogItemExporter is an add-on module's part of a personal data export
// per log: what it keeps about one log that names the address (the Pro
// provider events). The address is lower case and valid. (Erasing them
// is the store's: its erase of a log runs the modules' steps,
// adapters/store.RegisterLogEraser.)
type LogItemExporter interface {
	// ExportLogItems returns the items it keeps about the log logID that
	// name email, in the order they are exported (none is fine).
	ExportLogItems(ctx context.Context, logID int64, email string) ([]core.PersonalDataItem, error)
}

// PersonalDataKeeper is an add-on module's part of personal data
// requests: what it keeps about an email address outside the logs. The
// address is lower case and valid.
type PersonalDataKeeper interface {
	// ExportPersonalData returns the items it keeps about email; the
	// first page of an export carries them, after the logs' items.
	ExportPersonalData(ctx context.Context, email string) ([]core.PersonalDataItem, error)
	// ErasePersonalData removes them and reports whether there were
	// any. Safe to repeat: a second call removes nothing.
	ErasePersonalData(ctx context.Context, email string) (bool, error)
}

// TranscriptEraser removes the stored SMTP transcripts naming an address
// (debuglog.Transcripts).
type TranscriptEraser interface {
	DeleteNaming(ctx context.Context, email string) (int, error)
}

// PersonalDataExport is one page of an export: WordPress's exporter
// answer.
type PersonalDataExport struct {
	Data []core.PersonalDataItem `json:"data"`
	Done bool                    `json:"done"`
}

// PersonalDataErasure is the outcome of one erase call: WordPress's
// eraser answer. Done false means more is left: call again.
type PersonalDataErasure struct {
	ItemsRemoved  bool     `json:"items_removed"`
	ItemsRetained bool     `json:"items_retained"`
	Messages      []string `json:"messages"`
	Done          bool     `json:"done"`
}

// privacyEmail validates the address of a request.
func privacyEmail(email string, fields map[string]string) string {
	email = strings.TrimSpace(email)
	switch {
	case email == "":
		fields["email"] = "This field is required."
	case !core.ValidEmail(email):
		fields["email"] = "Must be an email address."
	}
	return strings.ToLower(email)
}

// Export returns page (from 1) of what the service keeps about email:
// PrivacyPageSize logs naming it, oldest first, each followed by what
// the LogItems keep about it naming the address (with Pro, its provider
// events), and on the first page what the Keepers keep about it (with
// Pro, its suppression list entry). A missing or invalid
// address or a page below 1 is a validation error.
func (p *Privacy) Export(ctx context.Context, email string, page int) (*PersonalDataExport, error) {
	fields := map[string]string{}
	email = privacyEmail(email, fields)
	if page < 1 {
		fields["page"] = "Must be a whole number of at least 1."
	}
	if err := core.Invalid(fields); err != nil {
		return nil, err
	}
	logs, err := p.Store.FindLogsNaming(ctx, email, (page-1)*PrivacyPageSize, PrivacyPageSize+1)
	if err != nil {
		return nil, fmt.Errorf("export personal data: %w", err)
	}
	out := &PersonalDataExport{Data: []core.PersonalDataItem{}, Done: len(logs) <= PrivacyPageSize}
	logs = logs[:min(len(logs), PrivacyPageSize)]
	for _, l := range logs {
		out.Data = append(out.Data, logItem(l, email))
		for _, x := range p.LogItems {
			items, err := x.ExportLogItems(ctx, l.ID, email)
			if err != nil {
				return nil, fmt.Errorf("export personal data: %w", err)
			}
			out.Data = append(out.Data, items...)
		}
	}
	if page == 1 {
		for _, k := range p.Keepers {
			items, err := k.ExportPersonalData(ctx, email)
			if err != nil {
				return nil, fmt.Errorf("export personal data: %w", err)
			}
			out.Data = append(out.Data, items...)
		}
	}
	return out, nil
}

// logItem is the exported item of one log. Other people's addresses are
// not exported: the item says in which fields the requester's address
// appears and how many other recipients the message had.
func logItem(l *core.Log, email string) core.PersonalDataItem {
	m := &l.Message
	var roles []string
	others := 0
	for _, f := range []struct {
		name string
		list []core.Address
	}{{"From", []core.Address{m.From}}, {"To", m.To}, {"Cc", m.Cc}, {"Bcc", m.Bcc}, {"Reply-To", m.ReplyTo}} {
		named := false
		for _, a := range f.list {
			if strings.EqualFold(strings.TrimSpace(a.Email), email) {
				named = true
			} else if f.name == "To" || f.name == "Cc" || f.name == "Bcc" {
				others++
			}
		}
		if named {
			roles = append(roles, f.name)
		}
	}
	data := []core.PersonalDatum{
		{Name: "Date", Value: l.CreatedAt.UTC().Format(time.RFC3339)},
		{Name: "Subject", Value: m.Subject},
		{Name: "Status", Value: l.Status},
		{Name: "Your address as", Value: strings.Join(roles, ", ")},
		{Name: "Other recipients", Value: strconv.Itoa(others)},
	}
	if m.Text != "" {
		data = append(data, core.PersonalDatum{Name: "Text body", Value: m.Text})
	}
	if m.HTML != "" {
		data = append(data, core.PersonalDatum{Name: "HTML body", Value: m.HTML})
	}
	if len(m.Attachments) > 0 {
		names := make([]string, 0, len(m.Attachments))
		for _, a := range m.Attachments {
			names = append(names, a.Filename)
		}
		data = append(data, core.PersonalDatum{Name: "Attachments", Value: strings.Join(names, ", ")})
	}
	return core.PersonalDataItem{
		GroupID: privacyGroupLogs, GroupLabel: "Email log",
		ItemID: "mailsvc-log-" + strconv.FormatInt(l.ID, 10), Data: data,
	}
}

// Erase erases email from up to PrivacyPageSize delivered or failed logs
// (bodies removed, the address replaced by core.ErasedAddress, what
// modules keep per log naming it removed, with Pro the provider events;
// statuses and analytics counts
// kept) and removes what the Keepers keep about it (with Pro, its
// suppression list entry) and the SMTP transcripts naming it. Done is
// false while more logs may be left; logs still queued or sending are
// kept until sent, which the answer says (items_retained and a message) once the
// rest is done. A missing or invalid address is a validation error.
func (p *Privacy) Erase(ctx context.Context, email string) (*PersonalDataErasure, error) {
	fields := map[string]string{}
	email = privacyEmail(email, fields)
	if err := core.Invalid(fields); err != nil {
		return nil, err
	}
	erased, pending, err := p.Store.EraseLogsNaming(ctx, email, core.ErasedAddress, PrivacyPageSize)
	if err != nil {
		return nil, fmt.Errorf("erase personal data: %w", err)
	}
	kept := false
	for _, k := range p.Keepers {
		removed, err := k.ErasePersonalData(ctx, email)
		if err != nil {
			return nil, fmt.Errorf("erase personal data: %w", err)
		}
		kept = kept || removed
	}
	transcripts := 0
	if p.Transcripts != nil {
		if transcripts, err = p.Transcripts.DeleteNaming(ctx, email); err != nil {
			return nil, fmt.Errorf("erase personal data: %w", err)
		}
	}
	out := &PersonalDataErasure{
		ItemsRemoved: erased > 0 || kept || transcripts > 0,
		Messages:     []string{},
		Done:         erased < PrivacyPageSize,
	}
	if out.Done && pending > 0 {
		out.ItemsRetained = true
		out.Messages = append(out.Messages, fmt.Sprintf(
			"%d email log(s) naming this address are still waiting to be sent (queued, or held by the staging guard) and were kept; erase again once they are sent or deleted.", pending))
	}
	return out, nil
}
