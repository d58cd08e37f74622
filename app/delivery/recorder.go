package delivery

import (
	"context"
	"sync"

	"github.com/mailsvc/mailsvc/core"
)

// OwnersRecorder is a store that records several lease owners' outcomes
// in one transaction (the store: one commit for many batches).
type OwnersRecorder interface {
	RecordOutcomesOfOwners(ctx context.Context, owners []string, outs [][]core.LogOutcome) ([]int, error)
}

// maxRecordGroup bounds the batches one group write takes.
const maxRecordGroup = 32

// recorder writes the outcomes of the workers' batches, those that are
// waiting at the same time in one transaction: while one group commits,
// the next gathers. A worker waits for its batch's write, so what follows
// a write (alerts, the end of the lease renewal) is as before; when the
// group write fails, each worker records its batch on its own.
type recorder struct {
	store OwnersRecorder
	reqs  chan *recordRequest
	wg    sync.WaitGroup
}

// recordRequest is one batch's outcomes and where its result goes.
type recordRequest struct {
	owner   string
	outs    []core.LogOutcome
	applied int
	err     error
	done    chan struct{}
}

// startRecorder starts the group writer when the store has one, for the
// workers of one Run; stop ends it once no worker records any more.
func (s *Service) startRecorder() (stop func()) {
	store, ok := s.Logs.(OwnersRecorder)
	if !ok {
		return func() {}
	}
	r := &recorder{store: store, reqs: make(chan *recordRequest, s.Workers)}
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
		for i, req := range group {
			owners[i], outs[i] = req.owner, req.outs
		}
		// The batches in hand are recorded even while the service stops.
		applied, err := r.store.RecordOutcomesOfOwners(context.Background(), owners, outs)
		for i, req := range group {
			if err != nil {
				req.err = err
			} else {
				req.applied = applied[i]
			}
			close(req.done)
		}
	}
}

// recordGrouped writes outs through the group writer; ok is false when
// there is none (the caller writes them itself).
func (s *Service) recordGrouped(owner string, outs []core.LogOutcome) (applied int, ok bool, err error) {
	s.recorderMu.Lock()
	r := s.recorder
	if r == nil {
		s.recorderMu.Unlock()
		return 0, false, nil
	}
	req := &recordRequest{owner: owner, outs: outs, done: make(chan struct{})}
	// Sent under the lock, so stop never closes the channel under a send.
	r.reqs <- req
	s.recorderMu.Unlock()
	<-req.done
	return req.applied, true, req.err
}
