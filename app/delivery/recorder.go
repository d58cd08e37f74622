package delivery

import (
	"context"
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// maxRecordGroup bounds the batches one group write takes.
const maxRecordGroup = 32

// recorder is the group commit of the workers' outcomes: it writes the
// batches that are waiting at the same time in one transaction
// (core.LogBatchStore): while one group commits, the next gathers, and
// the same transaction claims the messages the workers ask for in their
// place. A worker waits for its
// batch's write, so what follows a write (alerts, the end of the lease
// renewal) is as before; when the group write fails, each worker records
// its batch on its own.
type recorder struct {
	store core.LogBatchStore
	lease time.Duration
	reqs  chan *recordRequest
	wg    sync.WaitGroup
}

// recordRequest is one batch's outcomes, how many messages its worker
// wants claimed in their place, and where the result goes.
type recordRequest struct {
	owner   string
	outs    []core.LogOutcome
	claim   int
	applied int
	claimed []*core.Log
	didTry  bool // the claim was made (claimed may be empty)
	err     error
	done    chan struct{}
}

// startRecorder starts the group writer when the queue has a batch part
// (Options.Batches), for the workers of one Run; stop ends it once no
// worker records any more.
func (s *pool) startRecorder() (stop func()) {
	if s.o.Batches == nil {
		return func() {}
	}
	r := newRecorder(s.o.Batches, s.o.Lease, s.o.Workers)
	r.wg.Go(r.loop)
	s.recorderMu.Lock()
	s.recorder = r
	s.recorderMu.Unlock()
	return func() {
		s.recorderMu.Lock()
		s.recorder = nil
		s.recorderMu.Unlock()
		close(r.reqs)
		r.wg.Wait()
	}
}

// newRecorder returns the group writer of store for workers workers.
func newRecorder(store core.LogBatchStore, lease time.Duration, workers int) *recorder {
	return &recorder{store: store, lease: lease, reqs: make(chan *recordRequest, workers)}
}

// loop writes the requests, a group of those waiting at once per
// transaction, until reqs is closed.
func (r *recorder) loop() {
	for first := range r.reqs {
		group := []*recordRequest{first}
	gather:
		for len(group) < maxRecordGroup {
			select {
			case req, ok := <-r.reqs:
				if !ok {
					break gather
				}
				group = append(group, req)
			default:
				break gather
			}
		}
		owners := make([]string, len(group))
		outs := make([][]core.LogOutcome, len(group))
		claims := make([]int, len(group))
		claiming := false
		for i, req := range group {
			owners[i], outs[i] = req.owner, req.outs
			claims[i] = req.claim
			claiming = claiming || req.claim > 0
		}
		// The batches in hand are recorded even while the service stops.
		var (
			applied []int
			claimed [][]*core.Log
			err     error
		)
		if claiming {
			applied, claimed, err = r.store.RecordOutcomesAndClaim(context.Background(), owners, outs, claims, r.lease)
		} else {
			applied, err = r.store.RecordOutcomesOfOwners(context.Background(), owners, outs)
		}
		for i, req := range group {
			if err != nil {
				req.err = err
			} else {
				req.applied = applied[i]
				if claiming {
					req.claimed, req.didTry = claimed[i], true
				}
			}
			close(req.done)
		}
	}
}

// recordGrouped writes outs through the group writer and claims up to
// claim messages for owner in the same transaction (claimTried). ok is
// false when there is no group writer (the caller
// writes them itself).
func (s *pool) recordGrouped(owner string, outs []core.LogOutcome, claim int) (applied int, claimed []*core.Log, claimTried, ok bool, err error) {
	s.recorderMu.Lock()
	r := s.recorder
	if r == nil {
		s.recorderMu.Unlock()
		return 0, nil, false, false, nil
	}
	req := &recordRequest{owner: owner, outs: outs, claim: claim, done: make(chan struct{})}
	// Sent under the lock, so stop never closes the channel under a send.
	r.reqs <- req
	s.recorderMu.Unlock()
	<-req.done
	return req.applied, req.claimed, req.didTry, true, req.err
}
