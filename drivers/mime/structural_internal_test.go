package mime

import (
	"strings"
	"testing"
)

// TestStructural: a structural header name is known in any case, others
// (and names longer than any structural one) are not, and asking
// allocates nothing.
func TestStructural(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"Content-Type", true},
		{"CONTENT-TRANSFER-ENCODING", true},
		{"reply-to", true},
		{"Bcc", true},
		{"Message-ID", false},
		{"X-Mailer", false},
		{"", false},
		{strings.Repeat("x", 40), false},
	} {
		if got := structural(tc.name); got != tc.want {
			t.Errorf("structural(%q) = %v, want %v", tc.name, got, tc.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { structural("Message-ID") }); n != 0 {
		t.Errorf("%v allocations, want 0", n)
	}
}
