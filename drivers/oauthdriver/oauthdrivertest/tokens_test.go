package oauthdrivertest

import (
	"context"
	"errors"
	"slices"
	"testing"
)

func TestTokens(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name        string
		list        []string
		rejects     []string
		wantAnswers []string // what each Refreshed returns
		wantCurrent string
	}{
		{"refreshed to the next", []string{"a", "b"}, []string{"a"}, []string{"b"}, "b"},
		{"the last one stays", []string{"a", "b"}, []string{"a", "b"}, []string{"b", "b"}, "b"},
		{"a stale rejection does not move on", []string{"a", "b", "c"}, []string{"x", "a"}, []string{"a", "b"}, "b"},
		{"no tokens", nil, []string{""}, []string{""}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewTokens(tt.list...)
			first, err := s.AccessToken(ctx, 1)
			if err != nil || len(tt.list) > 0 && first != tt.list[0] {
				t.Fatalf("AccessToken = %q, %v", first, err)
			}
			var answers []string
			for _, r := range tt.rejects {
				tok, err := s.Refreshed(ctx, 1, r)
				if err != nil {
					t.Fatal(err)
				}
				answers = append(answers, tok)
			}
			if !slices.Equal(answers, tt.wantAnswers) || s.Current() != tt.wantCurrent {
				t.Errorf("Refreshed gave %v, current %q; want %v, %q", answers, s.Current(), tt.wantAnswers, tt.wantCurrent)
			}
			if s.Gets() != 1 || s.Refreshes() != len(tt.rejects) || !slices.Equal(s.Rejected(), tt.rejects) {
				t.Errorf("gets %d, refreshes %d, rejected %v", s.Gets(), s.Refreshes(), s.Rejected())
			}
		})
	}
}

func TestFailing(t *testing.T) {
	want := errors.New("needs authorization")
	s := Failing(want)
	if tok, err := s.AccessToken(context.Background(), 1); !errors.Is(err, want) || tok != "" || s.Gets() != 1 {
		t.Fatalf("AccessToken = %q, %v (gets %d)", tok, err, s.Gets())
	}
}
