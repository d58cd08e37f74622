package core

import "context"

// ErasedAddress replaces an erased email address wherever a log named it:
// the value WordPress's wp_privacy_anonymize_data('email') gives.
const ErasedAddress = "deleted@site.invalid"

// PersonalDatum is one named value of an exported item, as WordPress's
// personal data exporters return it.
type PersonalDatum struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// PersonalDataItem is one exported record (a log, a provider event, a
// suppression entry) in the shape of WordPress's exporter contract:
// items of one group are shown together under its label.
type PersonalDataItem struct {
	GroupID    string          `json:"group_id"`
	GroupLabel string          `json:"group_label"`
	ItemID     string          `json:"item_id"`
	Data       []PersonalDatum `json:"data"`
}

// PersonalDataStore finds and erases what the store keeps about an email
// address: the logs naming it as sender, recipient (To, Cc, Bcc) or
// Reply-To. (What an add-on keeps about the address, such as the Pro
// suppression list entry, it finds itself: app.PersonalDataKeeper, and
// per log app.LogItemExporter; what it keeps per log, such as the Pro
// provider events, the store's erase removes with the logs.) The
// address is compared ignoring case.
type PersonalDataStore interface {
	// FindLogsNaming returns the logs naming email, oldest (lowest id)
	// first, skipping offset and at most limit, with their Message
	// (bodies as stored) and without History. A log written after a
	// call may appear on a later page; pages of an unchanged log set
	// never overlap.
	FindLogsNaming(ctx context.Context, email string, offset, limit int) ([]*Log, error)
	// EraseLogsNaming erases email from up to limit delivered or failed
	// logs naming it, in one transaction: their bodies and attachments
	// are removed, the address (and the display name given with it) is
	// replaced by replacement in the addresses, the subject, the
	// headers, the last error and the attempts' responses, and what
	// add-on modules keep per log naming it (with Pro, the provider
	// events whose detail names it) is removed. Statuses,
	// times and the analytics roll-ups are left as they are. It returns
	// how many logs it erased and how many queued, sending or captured
	// logs still name the address (they are left alone until sent; a
	// captured one may still be released). An erased log
	// no longer names email, so calling again erases the next ones; 0
	// erased means none is left. Safe to retry.
	EraseLogsNaming(ctx context.Context, email, replacement string, limit int) (erased, pending int, err error)
}
