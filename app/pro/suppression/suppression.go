// Package suppression is the Pro suppression list: addresses mail is no
// longer sent to. Hard bounces and spam complaints reported by the
// provider webhooks add addresses; an administrator lists, adds and
// removes them; the delivery engine asks Suppressed before each send and
// fails a message addressed to a listed address.
package suppression

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// Store persists the list (adapters/pro/store.DB implements it).
type Store interface {
	// AddSuppressions adds each address (lower-cased), keeping an entry
	// already there, and returns how many it added.
	AddSuppressions(ctx context.Context, ss []Suppression) (int, error)
	// FindSuppressions returns one page of entries, newest first, and the
	// total count matching f.
	FindSuppressions(ctx context.Context, f SuppressionFilter) ([]*Suppression, int, error)
	// FindSuppression returns the entry with id, or with email when id
	// is 0; ENOTFOUND when there is none.
	FindSuppression(ctx context.Context, id int64, email string) (*Suppression, error)
	// DeleteSuppression removes the entry with id and reports whether it
	// existed.
	DeleteSuppression(ctx context.Context, id int64) (bool, error)
	// SuppressedAmong returns those of emails on the list, lower-cased.
	SuppressedAmong(ctx context.Context, emails []string) ([]string, error)
}

// Service manages the suppression list.
type Service struct {
	Store Store
}

// List returns one page of entries whose address contains search
// (ignoring case), newest first, and the total count.
func (s *Service) List(ctx context.Context, search string, offset, limit int) ([]*Suppression, int, error) {
	list, total, err := s.Store.FindSuppressions(ctx, SuppressionFilter{Search: search, Offset: offset, Limit: limit})
	if err != nil {
		return nil, 0, fmt.Errorf("list suppressions: %w", err)
	}
	return list, total, nil
}

// reasons an administrator may give.
var reasons = []string{SuppressManual, SuppressBounce, SuppressComplaint}

// Add puts an address on the list by hand (reason "" means manual). An
// invalid address or reason is a validation error; an address already
// listed is a conflict.
func (s *Service) Add(ctx context.Context, email, reason string) (*Suppression, error) {
	email = strings.ToLower(strings.TrimSpace(email))
	fields := map[string]string{}
	if email == "" {
		fields["email"] = "This field is required."
	} else if !core.ValidEmail(email) {
		fields["email"] = "Must be an email address."
	}
	if reason == "" {
		reason = SuppressManual
	}
	valid := false
	for _, r := range reasons {
		valid = valid || r == reason
	}
	if !valid {
		fields["reason"] = "Must be one of: " + strings.Join(reasons, ", ") + "."
	}
	if err := core.Invalid(fields); err != nil {
		return nil, err
	}
	n, err := s.Store.AddSuppressions(ctx, []Suppression{{Email: email, Reason: reason, SourceEvent: "manual"}})
	if err != nil {
		return nil, fmt.Errorf("add suppression: %w", err)
	}
	if n == 0 {
		return nil, core.Errorf(core.ECONFLICT, "%s is already on the suppression list.", email)
	}
	return s.Store.FindSuppression(ctx, 0, email)
}

// Remove takes an entry off the list, named by its id or its address,
// and returns it; ENOTFOUND when there is no such entry.
func (s *Service) Remove(ctx context.Context, ref string) (*Suppression, error) {
	ref = strings.TrimSpace(ref)
	var id int64
	email := ""
	if n, err := strconv.ParseInt(ref, 10, 64); err == nil && n > 0 {
		id = n
	} else if core.ValidEmail(ref) {
		email = ref
	} else {
		return nil, core.Errorf(core.ENOTFOUND, "No such address on the suppression list.")
	}
	entry, err := s.Store.FindSuppression(ctx, id, email)
	if err != nil {
		return nil, err
	}
	ok, err := s.Store.DeleteSuppression(ctx, entry.ID)
	if err != nil {
		return nil, fmt.Errorf("remove suppression: %w", err)
	}
	if !ok {
		return nil, core.Errorf(core.ENOTFOUND, "No such address on the suppression list.")
	}
	return entry, nil
}

// AddFromEvent lists addresses a provider event reported as hard
// bounced or complained, with the event as the source, and returns how
// many were new.
func (s *Service) AddFromEvent(ctx context.Context, emails []string, reason, source string) (int, error) {
	ss := make([]Suppression, 0, len(emails))
	for _, e := range emails {
		ss = append(ss, Suppression{Email: e, Reason: reason, SourceEvent: source})
	}
	n, err := s.Store.AddSuppressions(ctx, ss)
	if err != nil {
		return n, fmt.Errorf("suppress addresses: %w", err)
	}
	return n, nil
}

// Suppressed returns those of emails on the list (lower-cased): the
// delivery engine's check before a send.
func (s *Service) Suppressed(ctx context.Context, emails []string) ([]string, error) {
	out, err := s.Store.SuppressedAmong(ctx, emails)
	if err != nil {
		return nil, fmt.Errorf("check the suppression list: %w", err)
	}
	return out, nil
}
