package delivery

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// A worker does not wait for the slowest message of its batch: while one
// send hangs, the outcomes of the others are recorded and new messages
// claimed in their place, so the worker's share of the connections' send
// slots stays in use.
func TestSlowSendDoesNotHoldTheWorker(t *testing.T) {
	e := newEnv(t, nil, nil)
	e.svc.o.Workers, e.svc.o.BatchSize = 1, 4
	release := make(chan struct{})
	var once sync.Once
	e.tr[1].onSend = func() { <-release } // connection 1 hangs until released
	defer once.Do(func() { close(release) })
	slowConn := e.svc.mustBase(t, e)
	fastConn := slowConn + 1
	e.enqueue(t, &core.Log{ConnectionID: &slowConn, Message: msg("slow")})
	const n = 20
	for i := range n {
		e.enqueue(t, &core.Log{ConnectionID: &fastConn, Message: msg(fmt.Sprintf("fast-%d", i))})
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.svc.Run(ctx); close(done) }()
	waitDelivered := func(want int) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			st, _ := e.logs.QueueStats(context.Background())
			if st.Delivered == want {
				return
			}
			if time.Now().After(deadline) {
				cancel()
				t.Fatalf("stats %+v, want %d delivered", st, want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	// One worker of 4: the hanging send was claimed first, yet all the
	// others are delivered and recorded while it hangs.
	waitDelivered(n)
	if calls, _ := e.tr[2].stats(); calls != n {
		t.Fatalf("connection 2 sent %d, want %d", calls, n)
	}
	once.Do(func() { close(release) })
	waitDelivered(n + 1)
	cancel()
	<-done
}

// countingList is a suppression list that counts its calls.
type countingList struct {
	listed
	mu    sync.Mutex
	calls int
	asked int
}

func (c *countingList) Suppressed(ctx context.Context, emails []string) ([]string, error) {
	c.mu.Lock()
	c.calls++
	c.asked += len(emails)
	c.mu.Unlock()
	return c.listed.Suppressed(ctx, emails)
}

// The suppression list is read once per batch, not once per message, and
// still fails exactly the messages with a listed recipient.
func TestSuppressionListReadOncePerBatch(t *testing.T) {
	e := newEnv(t, nil, nil)
	list := &countingList{listed: listed{emails: []string{"gone@example.com"}}}
	e.svc.o.Suppressions = list
	var ids []int64
	for i := range e.svc.o.BatchSize {
		m := msg(fmt.Sprintf("m%d", i))
		m.To = []core.Address{{Email: fmt.Sprintf("r%d@example.com", i)}}
		if i == 2 {
			m.Cc = []core.Address{{Email: "GONE@example.com"}}
		}
		ids = append(ids, e.enqueue(t, &core.Log{Message: m}))
	}
	e.drain(t)
	if list.calls != 1 || list.asked != e.svc.o.BatchSize+1 {
		t.Fatalf("%d calls asking %d addresses, want 1 call asking %d", list.calls, list.asked, e.svc.o.BatchSize+1)
	}
	for i, id := range ids {
		l, err := e.logs.FindLogByID(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		want := core.StatusDelivered
		if i == 2 {
			want = core.StatusFailed
		}
		if l.Status != want {
			t.Errorf("message %d is %s, want %s (%s)", i, l.Status, want, l.LastError)
		}
	}
	if calls, _ := e.tr[1].stats(); calls != e.svc.o.BatchSize-1 {
		t.Errorf("%d sent, want %d", calls, e.svc.o.BatchSize-1)
	}
}
