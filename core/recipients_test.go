package core_test

import (
	"fmt"
	"testing"

	"github.com/mailsvc/mailsvc/core"
)

func addrs(prefix string, n int) []core.Address {
	out := make([]core.Address, n)
	for i := range out {
		out[i] = core.Address{Email: fmt.Sprintf("%s%d@example.org", prefix, i)}
	}
	return out
}

// TestSplitRecipients: every recipient lands in exactly one part, no part
// passes a cap, and parts are as full as the caps allow.
func TestSplitRecipients(t *testing.T) {
	tests := []struct {
		name       string
		to, cc, bc int
		want       map[string]bool
		caps       core.RecipientCaps
		wantSizes  []int
	}{
		{"no cap", 3, 2, 1, nil, core.RecipientCaps{}, []int{6}},
		{"per message", 1200, 0, 0, nil, core.RecipientCaps{PerMessage: 1000}, []int{1000, 200}},
		{"per field", 60, 10, 120, nil, core.RecipientCaps{To: 50, Cc: 50, Bcc: 50}, []int{110, 60, 20}},
		{"per message across lists", 30, 30, 30, nil, core.RecipientCaps{PerMessage: 50}, []int{50, 40}},
		{"needs to: a part without To goes one by one", 1, 0, 4, nil, core.RecipientCaps{PerMessage: 2, NeedsTo: true}, []int{2, 1, 1, 1}},
		{"only wanted ones", 5, 0, 0, map[string]bool{"t1@example.org": true, "t3@example.org": true}, core.RecipientCaps{}, []int{2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &core.Message{To: addrs("t", tt.to), Cc: addrs("c", tt.cc), Bcc: addrs("b", tt.bc)}
			parts := core.SplitRecipients(m, tt.want, tt.caps)
			seen := map[string]int{}
			var sizes []int
			for _, p := range parts {
				sizes = append(sizes, len(p))
				for _, a := range p {
					seen[a.Email]++
				}
				pm := *m
				pm.Envelope = p
				f := pm.ForEnvelope()
				for _, c := range []struct{ n, cap int }{{len(f.To), tt.caps.To}, {len(f.Cc), tt.caps.Cc}, {len(f.Bcc), tt.caps.Bcc}, {len(p), tt.caps.PerMessage}} {
					if c.cap > 0 && c.n > c.cap {
						t.Errorf("part of %d passes a cap: %d > %d", len(p), c.n, c.cap)
					}
				}
				if tt.caps.NeedsTo && len(f.To) == 0 {
					t.Errorf("a part without To: %+v", f)
				}
			}
			if fmt.Sprint(sizes) != fmt.Sprint(tt.wantSizes) {
				t.Errorf("part sizes %v, want %v", sizes, tt.wantSizes)
			}
			total := tt.to + tt.cc + tt.bc
			if tt.want != nil {
				total = len(tt.want)
			}
			if len(seen) != total {
				t.Errorf("%d recipients in parts, want %d", len(seen), total)
			}
			for e, n := range seen {
				if n != 1 {
					t.Errorf("%s in %d parts", e, n)
				}
			}
		})
	}
}

// TestForEnvelope: a part shows its own To and Cc recipients; a lone Cc
// or Bcc recipient shows as To; no envelope leaves the message as is.
func TestForEnvelope(t *testing.T) {
	m := &core.Message{To: addrs("t", 2), Cc: addrs("c", 1), Bcc: addrs("b", 2)}
	if m.ForEnvelope() != m {
		t.Fatal("no envelope: a copy")
	}
	part := *m
	part.Envelope = []core.Address{m.To[1], m.Bcc[0], m.Bcc[1]}
	f := part.ForEnvelope()
	if len(f.To) != 1 || f.To[0] != m.To[1] || len(f.Cc) != 0 || len(f.Bcc) != 2 || f.Envelope != nil {
		t.Errorf("part = %+v", f)
	}
	part.Envelope = []core.Address{m.Bcc[1]}
	if f := part.ForEnvelope(); len(f.To) != 1 || f.To[0] != m.Bcc[1] || len(f.Bcc) != 0 {
		t.Errorf("lone Bcc part = %+v", f)
	}
}
