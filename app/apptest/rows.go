package apptest

import (
	"sync"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// rowTable is what the in-memory stores of rows by id share: the lock,
// the rows, the last id given, how a row is copied in and out (clone)
// and what a missing row's error says (notFound, a format whose one verb
// is the id). A store embeds it and locks mu for its own methods.
type rowTable[V any] struct {
	mu       sync.Mutex
	nextID   int64
	rows     map[int64]*V
	clone    func(*V) *V
	notFound string
}

// byID returns a copy of the row of id, or ENOTFOUND.
func (t *rowTable[V]) byID(id int64) (*V, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return rowByID(t.rows, id, t.clone, t.notFound)
}

// insert keeps a copy of row under the next id, once stamp has given the
// row that id and now as its creation and update times.
func (t *rowTable[V]) insert(row *V, stamp func(id int64, now time.Time)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.nextID++
	stamp(t.nextID, time.Now().UTC())
	t.rows[t.nextID] = t.clone(row)
}

// update replaces the row of id with what write makes of the row held
// (which write must not change); ENOTFOUND when there is none.
func (t *rowTable[V]) update(id int64, write func(old *V) *V) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	old, ok := t.rows[id]
	if !ok {
		return core.Errorf(core.ENOTFOUND, t.notFound, id)
	}
	t.rows[id] = write(old)
	return nil
}

// deleteIDs removes the rows of ids and returns how many it removed
// (deleteRows).
func (t *rowTable[V]) deleteIDs(ids []int64) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return deleteRows(t.rows, ids)
}

// raw returns a copy of the row of id as the table holds it, nil when
// there is none.
func (t *rowTable[V]) raw(id int64) *V {
	t.mu.Lock()
	defer t.mu.Unlock()
	if row, ok := t.rows[id]; ok {
		return t.clone(row)
	}
	return nil
}

// rowByID returns a copy (by clone) of the row of id, or ENOTFOUND with
// notFound (a format whose one verb is the id) when rows has none. The
// caller holds the store's lock.
func rowByID[V any](rows map[int64]*V, id int64, clone func(*V) *V, notFound string) (*V, error) {
	row, ok := rows[id]
	if !ok {
		return nil, core.Errorf(core.ENOTFOUND, notFound, id)
	}
	return clone(row), nil
}

// deleteRows removes the rows of ids from rows and returns how many it
// removed (an id given twice counts once), as the store's DELETE … IN
// does.
func deleteRows[V any](rows map[int64]V, ids []int64) int {
	n := 0
	for _, id := range ids {
		if _, ok := rows[id]; ok {
			delete(rows, id)
			n++
		}
	}
	return n
}
