package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestScrub(t *testing.T) {
	const key, secret = "AKIA-KEY-123", "s3cr3t/value"
	tests := []struct {
		name      string
		err       error
		secrets   []string
		wantText  string
		wantSame  bool // the error is returned as it is
		temporary bool
	}{
		{"nil stays nil", nil, []string{key}, "", true, false},
		{"no secret in the text", Temporary(errors.New("dial tcp: refused")), []string{key}, "temporary failure: dial tcp: refused", true, true},
		{"one secret", Permanent(fmt.Errorf("GET /x?k=%s: 401", key)), []string{key}, "permanent failure: GET /x?k=" + Mask + ": 401", false, false},
		{"every occurrence", Temporary(fmt.Errorf("%s and %s", key, key)), []string{key}, "temporary failure: " + Mask + " and " + Mask, false, true},
		{"every secret when one shows", Temporary(fmt.Errorf("url /%s/%s", key, secret)), []string{secret, key}, "temporary failure: url /" + Mask + "/" + Mask, false, true},
		{"empty secrets are ignored", errors.New("plain text"), []string{"", ""}, "plain text", true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Scrub(tc.err, tc.secrets...)
			if tc.err == nil {
				if got != nil {
					t.Fatalf("Scrub(nil) = %v", got)
				}
				return
			}
			if got.Error() != tc.wantText {
				t.Errorf("text %q, want %q", got.Error(), tc.wantText)
			}
			if (got == tc.err) != tc.wantSame {
				t.Errorf("returned the same error: %v, want %v", got == tc.err, tc.wantSame)
			}
			if !errors.Is(got, tc.err) {
				t.Errorf("the scrubbed error does not wrap the original")
			}
			var de *DeliveryError
			if tc.temporary && (!errors.As(got, &de) || !IsTemporary(got)) {
				t.Errorf("the class was lost: %v", got)
			}
			for _, s := range tc.secrets {
				if s != "" && strings.Contains(got.Error(), s) {
					t.Errorf("text shows a secret: %q", got.Error())
				}
			}
		})
	}
	ctxErr := Scrub(Temporary(fmt.Errorf("post %s: %w", key, context.DeadlineExceeded)), key)
	if !errors.Is(ctxErr, context.DeadlineExceeded) {
		t.Errorf("the chain was cut: %v", ctxErr)
	}
}

func TestScrubText(t *testing.T) {
	tests := []struct {
		name, text string
		secrets    []string
		want       string
	}{
		{"every occurrence of every secret", "a=k1 b=k2 c=k1", []string{"k1", "k2"}, "a=" + Mask + " b=" + Mask + " c=" + Mask},
		{"empty secrets are ignored", "plain", []string{""}, "plain"},
		{"no secrets", "plain k1", nil, "plain k1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ScrubText(tc.text, tc.secrets...); got != tc.want {
				t.Errorf("ScrubText = %q, want %q", got, tc.want)
			}
		})
	}
}
