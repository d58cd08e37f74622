package delivery

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/core"
)

// groupingStore is the in-memory store with a group writer that records
// each owner's outcomes in turn, counting the groups and the batches in
// them; the first failGroups groups fail without recording anything.
type groupingStore struct {
	*apptest.LogStore
	mu         sync.Mutex
	groups     int
	batches    int
	outcomes   int
	largest    int
	failGroups int
}

func (g *groupingStore) RecordOutcomesOfOwners(ctx context.Context, owners []string, outs [][]core.LogOutcome) ([]int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.failGroups > 0 {
		g.failGroups--
		return nil, errors.New("group write failed")
	}
	g.groups++
	g.batches += len(owners)
	g.largest = max(g.largest, len(owners))
	applied := make([]int, len(owners))
	for i, owner := range owners {
		n, err := g.LogStore.RecordOutcomes(ctx, owner, outs[i])
		if err != nil {
			return nil, err
		}
		applied[i] = n
		g.outcomes += len(outs[i])
	}
	return applied, nil
}

// RecordOutcomesAndClaim records as RecordOutcomesOfOwners does (a
// failing group fails here too), then claims each owner's share.
func (g *groupingStore) RecordOutcomesAndClaim(ctx context.Context, owners []string, outs [][]core.LogOutcome, claims []int, lease time.Duration) ([]int, [][]*core.Log, error) {
	applied, err := g.RecordOutcomesOfOwners(ctx, owners, outs)
	if err != nil {
		return nil, nil, err
	}
	claimed := make([][]*core.Log, len(owners))
	for i, owner := range owners {
		if claims[i] <= 0 {
			continue
		}
		if claimed[i], err = g.LogStore.ClaimLogs(ctx, owner, claims[i], lease); err != nil {
			return nil, nil, err
		}
	}
	return applied, claimed, nil
}

func (g *groupingStore) counts() (groups, batches, outcomes int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.groups, g.batches, g.outcomes
}

// TestRunRecordsThroughTheGroupWriter runs the workers on a store with a
// group writer: every outcome is written through it (several workers'
// writes per group when they wait together), and when a
// group write fails each batch is recorded on its own, so every message
// is still delivered once and recorded.
func TestRunRecordsThroughTheGroupWriter(t *testing.T) {
	tests := []struct {
		name       string
		failGroups int
	}{
		{name: "groups write every batch"},
		{name: "a failed group is recorded batch by batch", failGroups: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, nil, nil)
			store := &groupingStore{LogStore: e.logs, failGroups: tt.failGroups}
			e.svc.o.Logs, e.svc.o.Batches = store, store
			e.svc.o.Workers = 4
			const n = 80
			var ids []int64
			for i := range n {
				ids = append(ids, e.enqueue(t, &core.Log{Message: msg(fmt.Sprintf("m%d", i))}))
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { e.svc.Run(ctx); close(done) }()
			deadline := time.Now().Add(20 * time.Second)
			for {
				st, _ := e.logs.QueueStats(context.Background())
				if st.Delivered == n {
					break
				}
				if time.Now().After(deadline) {
					cancel()
					t.Fatalf("stats %+v after 20s, want %d delivered", st, n)
				}
				time.Sleep(5 * time.Millisecond)
			}
			cancel()
			<-done
			_, acc := e.tr[1].stats()
			if len(acc) != n {
				t.Fatalf("accepted %d sends, want %d", len(acc), n)
			}
			groups, batches, outcomes := store.counts()
			if tt.failGroups == 0 && outcomes != n {
				t.Errorf("the group writer recorded %d outcomes, want all %d", outcomes, n)
			}
			if tt.failGroups > 0 && outcomes >= n {
				t.Errorf("the group writer recorded %d outcomes although %d groups failed", outcomes, tt.failGroups)
			}
			if groups > batches {
				t.Errorf("%d groups for %d batches", groups, batches)
			}
			for _, id := range ids {
				l, err := e.logs.FindLogByID(context.Background(), id)
				if err != nil {
					t.Fatal(err)
				}
				if len(l.History) != 1 || l.History[0].Outcome != core.OutcomeDelivered {
					t.Fatalf("log %d history %v, want one delivered attempt", l.ID, l.History)
				}
			}
		})
	}
}
