package suppression

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// PersonalStore finds and removes the entry of one address
// (adapters/pro/store.DB implements it).
type PersonalStore interface {
	// FindSuppression returns the entry with id, or with email when id
	// is 0; ENOTFOUND when there is none.
	FindSuppression(ctx context.Context, id int64, email string) (*Suppression, error)
	// DeleteSuppressionOf removes the entry of email (ignoring case) and
	// reports whether there was one.
	DeleteSuppressionOf(ctx context.Context, email string) (bool, error)
}

// PersonalData is the suppression list's part of personal data requests
// (an app.PersonalDataKeeper): an export carries an address's entry, an
// erase removes it.
type PersonalData struct {
	Store PersonalStore
}

// ExportPersonalData returns the entry of email as one exported item, or
// none when the address is not listed.
func (p *PersonalData) ExportPersonalData(ctx context.Context, email string) ([]core.PersonalDataItem, error) {
	s, err := p.Store.FindSuppression(ctx, 0, email)
	switch {
	case core.ErrorCode(err) == core.ENOTFOUND:
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("find the suppression of an address: %w", err)
	}
	return []core.PersonalDataItem{{
		GroupID: "mailsvc-suppressions", GroupLabel: "Email suppression list",
		ItemID: "mailsvc-suppression-" + strconv.FormatInt(s.ID, 10),
		Data: []core.PersonalDatum{
			{Name: "Address", Value: s.Email},
			{Name: "Reason", Value: s.Reason},
			{Name: "Source", Value: s.SourceEvent},
			{Name: "Added", Value: s.CreatedAt.UTC().Format(time.RFC3339)},
		},
	}}, nil
}

// ErasePersonalData removes the entry of email and reports whether there
// was one.
func (p *PersonalData) ErasePersonalData(ctx context.Context, email string) (bool, error) {
	return p.Store.DeleteSuppressionOf(ctx, email)
}
