package delivery

import (
	"testing"
	"time"
)

// TestHandSize: a worker holds BatchSize messages, more (up to
// handGrowth × BatchSize) while the process decides enough messages in
// handHorizon to give each worker more, BatchSize again once the
// messages it holds pass handBytes, and it gives the growth back as the
// pace falls.
func TestHandSize(t *testing.T) {
	const batch, workers = 100, 8
	tests := []struct {
		name  string
		paces []int // messages the process decides in successive seconds
		bytes int   // held when the last is gathered
		want  int
	}{
		{name: "slow provider keeps the batch", paces: []int{500, 500, 500}, want: batch},
		{name: "moderate pace holds a second of it", paces: []int{2400, 2400}, want: 300},
		{name: "fast pace grows to the ceiling", paces: []int{8000, 8000}, want: handGrowth * batch},
		{name: "heavy messages keep the batch", paces: []int{8000, 8000}, bytes: handBytes + 1, want: batch},
		{name: "a pace that falls gives the growth back", paces: []int{8000, 800, 800, 800}, want: 212},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(Options{BatchSize: batch, Workers: workers})
			h := &hand{s: s.pool, size: batch, ids: map[int64]int{}}
			t0 := time.Now()
			s.pace.add(0, t0) // the first gather starts the clock
			last := t0
			for i, n := range tt.paces {
				last = t0.Add(time.Duration(i+1) * time.Second)
				s.pace.add(n, last)
			}
			// The worker's gather counts nothing new, within the period.
			h.bytes = tt.bytes
			h.resize(0, last)
			if h.size != tt.want {
				t.Errorf("hand of %d messages (pace %.0f/s), want %d", h.size, s.pace.perSec, tt.want)
			}
		})
	}
}
