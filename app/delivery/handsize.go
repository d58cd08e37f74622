package delivery

import (
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// A worker holds BatchSize messages, and more while the process decides
// messages fast: its share of what the process decides in handHorizon,
// up to handGrowth × BatchSize. A bigger hand means bigger group writes
// (one commit and a few statements for more messages: the queue's cost
// per message falls) where the providers are fast, while a slow
// provider's messages stay in the queue for the other replicas rather
// than waiting in one process's hands. The pace is the process's, not
// the worker's: a connection's lane serves the messages of the workers
// in turns, so one worker's pace comes in bursts. The messages' bytes
// (bodies and attachments) bound the growth: past handBytes held, the
// worker goes back to BatchSize.
const (
	handGrowth  = 4
	handHorizon = time.Second
	handBytes   = 16 << 20
	// pacePeriod is the shortest time the pace is measured over.
	pacePeriod = 100 * time.Millisecond
)

// pace is the messages a process decides per second, averaged over its
// last few pacePeriods.
type pace struct {
	mu      sync.Mutex
	perSec  float64
	decided int
	since   time.Time
}

// add counts n messages decided and returns the pace.
func (p *pace) add(n int, now time.Time) float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.decided += n
	if p.since.IsZero() {
		p.since = now
		return p.perSec
	}
	if el := now.Sub(p.since); el >= pacePeriod {
		r := float64(p.decided) / el.Seconds()
		if p.perSec == 0 {
			p.perSec = r
		}
		p.perSec = 0.5*p.perSec + 0.5*r
		p.decided, p.since = 0, now
	}
	return p.perSec
}

// resize sets how many messages the worker holds from now on, given that
// decided messages were gathered since the last call.
func (h *hand) resize(decided int, now time.Time) {
	perSec := h.s.pace.add(decided, now)
	floor := h.s.o.BatchSize
	h.mu.Lock()
	heavy := h.bytes > handBytes
	h.mu.Unlock()
	if heavy {
		h.size = floor
		return
	}
	share := perSec * handHorizon.Seconds() / float64(max(h.s.o.Workers, 1))
	h.size = min(max(int(share), floor), floor*handGrowth)
}

// messageBytes is about what a claimed message takes in memory: its
// bodies and its attachments' bytes.
func messageBytes(m *core.Message) int {
	n := len(m.Text) + len(m.HTML)
	for _, a := range m.Attachments {
		n += len(a.Data)
	}
	return n
}
