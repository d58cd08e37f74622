package apptest

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// AlertHistory is an in-memory core.AlertHistoryStore.
type AlertHistory struct {
	mu     sync.Mutex
	alerts []core.Alert
}

var _ core.AlertHistoryStore = (*AlertHistory)(nil)

// RecordAlert implements core.AlertHistoryStore.
func (h *AlertHistory) RecordAlert(_ context.Context, a core.Alert) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if a.At.IsZero() {
		a.At = time.Now().UTC()
	}
	h.alerts = append(h.alerts, a)
	return nil
}

// Recorded returns a copy of the recorded alerts, in order.
func (h *AlertHistory) Recorded() []core.Alert {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]core.Alert(nil), h.alerts...)
}

// CountAlerts implements core.AlertHistoryStore.
func (h *AlertHistory) CountAlerts(_ context.Context, from, to time.Time) ([]core.AlertCount, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	type key struct {
		event string
		conn  int64
	}
	byKey := map[key]*core.AlertCount{}
	var out []*core.AlertCount
	for _, a := range h.alerts {
		if a.At.Before(from) || !a.At.Before(to) {
			continue
		}
		k := key{a.Event, a.ConnectionID}
		c := byKey[k]
		if c == nil {
			c = &core.AlertCount{Event: a.Event, ConnectionID: a.ConnectionID}
			byKey[k] = c
			out = append(out, c)
		}
		c.Count++
		if a.At.After(c.Last) {
			c.Last = a.At.UTC()
		}
		if a.ConnectionName != "" {
			c.ConnectionName = a.ConnectionName
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Count > out[j].Count })
	res := make([]core.AlertCount, len(out))
	for i, c := range out {
		res[i] = *c
	}
	return res, nil
}

// PruneAlerts implements core.AlertHistoryStore.
func (h *AlertHistory) PruneAlerts(_ context.Context, before time.Time) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	kept := h.alerts[:0]
	for _, a := range h.alerts {
		if !a.At.Before(before) {
			kept = append(kept, a)
		}
	}
	n := len(h.alerts) - len(kept)
	h.alerts = kept
	return n, nil
}
