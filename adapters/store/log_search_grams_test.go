package store

import (
	"slices"
	"testing"
)

// TestGrams checks the pieces of a local part against the pieces read
// rune by rune: distinct, in order, for plain, repeated, non-ASCII,
// short and invalid UTF-8 text.
func TestGrams(t *testing.T) {
	for _, s := range []string{
		"", "a", "ab", "abc", "john.doe", "aaaaaa", "abcabcabc", "jürgen", "名前太郎です",
		"x\xffy\xfez", "\xff\xff\xff\xff", "a-very-long-local-part-that-goes-past-sixty-four-characters-of-text-0123456789",
	} {
		if got, want := grams(s), gramsByRunes(s); !slices.Equal(got, want) {
			t.Errorf("grams(%q) = %q, want %q", s, got, want)
		}
	}
}

// FuzzGrams compares grams with the pieces read rune by rune for any
// text.
func FuzzGrams(f *testing.F) {
	for _, s := range []string{"john.doe", "jürgen", "x\xffy"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := grams(s), gramsByRunes(s); !slices.Equal(got, want) {
			t.Fatalf("grams(%q) = %q, want %q", s, got, want)
		}
	})
}

// gramsByRunes is what grams returns, read rune by rune.
func gramsByRunes(s string) []string {
	r := []rune(s)
	var out []string
	for i := 0; i+gramSize <= len(r); i++ {
		if g := string(r[i : i+gramSize]); !slices.Contains(out, g) {
			out = append(out, g)
		}
	}
	return out
}
