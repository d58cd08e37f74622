package store_test

import (
	"context"
	"slices"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/store/storetest"
	"github.com/mailsvc/mailsvc/app/pro/suppression"
	"github.com/mailsvc/mailsvc/core"
)

// suppressionTests are the contract tests of the suppression list.
func (s *suite) suppressionTests() []struct {
	name string
	fn   func(t *testing.T)
} {
	return []struct {
		name string
		fn   func(t *testing.T)
	}{
		{"SuppressionList", s.testSuppressionList},
		{"SuppressionOfAnAddress", s.testSuppressionOfAnAddress},
	}
}

func (s *suite) testSuppressionList(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	n, err := db.Suppressions().AddSuppressions(ctx, []suppression.Suppression{
		{Email: "Ann@Example.com", Reason: suppression.SuppressBounce, SourceEvent: "ses:bounce:Permanent/General"},
		{Email: "bob_x@example.com", Reason: suppression.SuppressComplaint, SourceEvent: "sendgrid:spamreport"},
		{Email: "ann@example.com", Reason: suppression.SuppressManual}, // already listed
		{Email: "  "},
	})
	if err != nil || n != 2 {
		t.Fatalf("AddSuppressions = %d, %v; want 2", n, err)
	}
	got, err := db.Suppressions().SuppressedAmong(ctx, []string{"ANN@example.com", "carl@example.com", "bob_x@example.com", "ann@example.com"})
	if err != nil || !slices.Equal(got, []string{"ann@example.com", "bob_x@example.com"}) {
		t.Fatalf("SuppressedAmong = %v, %v", got, err)
	}
	tests := []struct {
		search    string
		wantTotal int
		first     string
	}{
		{"", 2, "bob_x@example.com"},
		{"ANN", 1, "ann@example.com"},
		{"b_x", 1, "bob_x@example.com"},
		{"n_@", 0, ""}, // _ is no wildcard
		{"%", 0, ""},
	}
	for _, tt := range tests {
		list, total, err := db.Suppressions().FindSuppressions(ctx, suppression.SuppressionFilter{Search: tt.search, Limit: 1})
		if err != nil || total != tt.wantTotal || (tt.first != "" && (len(list) != 1 || list[0].Email != tt.first)) || (tt.first == "" && len(list) != 0) {
			t.Fatalf("FindSuppressions(%q) = %v, %d, %v", tt.search, list, total, err)
		}
	}
	ann, err := db.Suppressions().FindSuppression(ctx, 0, "ANN@EXAMPLE.COM")
	if err != nil || ann.Reason != suppression.SuppressBounce || ann.SourceEvent != "ses:bounce:Permanent/General" || ann.CreatedAt.IsZero() {
		t.Fatalf("FindSuppression = %+v, %v", ann, err)
	}
	if byID, err := db.Suppressions().FindSuppression(ctx, ann.ID, ""); err != nil || byID.Email != "ann@example.com" {
		t.Fatalf("FindSuppression by id = %+v, %v", byID, err)
	}
	if ok, err := db.Suppressions().DeleteSuppression(ctx, ann.ID); err != nil || !ok {
		t.Fatalf("DeleteSuppression = %v, %v", ok, err)
	}
	if ok, err := db.Suppressions().DeleteSuppression(ctx, ann.ID); err != nil || ok {
		t.Fatalf("second DeleteSuppression = %v, %v", ok, err)
	}
	_, err = db.Suppressions().FindSuppression(ctx, 0, "ann@example.com")
	storetest.WantCode(t, err, core.ENOTFOUND)
	if got, err := db.Suppressions().SuppressedAmong(ctx, []string{"ann@example.com"}); err != nil || len(got) != 0 {
		t.Fatalf("removed address still suppressed: %v, %v", got, err)
	}
}

// testSuppressionOfAnAddress erases an address's entry (a personal data
// erase), ignoring case, once.
func (s *suite) testSuppressionOfAnAddress(t *testing.T) {
	ctx := context.Background()
	db := s.open(t, s.prefix())
	const bob = "bob@example.com"
	if _, err := db.Suppressions().AddSuppressions(ctx, []suppression.Suppression{{Email: bob, Reason: suppression.SuppressBounce, SourceEvent: "ses:bounce"}}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{true, false} {
		if got, err := db.Suppressions().DeleteSuppressionOf(ctx, "BOB@example.com"); err != nil || got != want {
			t.Fatalf("DeleteSuppressionOf #%d = %v, %v; want %v", i+1, got, err, want)
		}
	}
}
