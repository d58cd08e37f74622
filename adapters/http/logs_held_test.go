package http_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/core"
)

// movedHeld is a held-mail store that records the ids it is asked to
// move and moves each once (the logs stay held in the list's store: a
// second move of one finds it moved).
type movedHeld struct {
	mu        sync.Mutex
	moved     map[int64]bool
	released  []int64
	discarded []int64
}

func (m *movedHeld) move(ids []int64, into *[]int64) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, id := range ids {
		if m.moved[id] {
			continue
		}
		m.moved[id] = true
		*into = append(*into, id)
		n++
	}
	return n, nil
}

func (m *movedHeld) ReleaseHeld(_ context.Context, ids []int64) (int, error) {
	return m.move(ids, &m.released)
}

func (m *movedHeld) DiscardHeld(_ context.Context, ids []int64) (int, error) {
	return m.move(ids, &m.discarded)
}

// TestHeldRoutes: POST /logs/held/release and /logs/held/discard act on
// the held logs the list's filters match (from the body or the query
// string), each once, and refuse bad input without moving anything.
func TestHeldRoutes(t *testing.T) {
	logs := apptest.NewLogStore()
	held := &movedHeld{moved: map[int64]bool{}}
	s, _ := newAPI()
	woken := 0
	s.Logs = &app.Logs{Store: logs, Held: held, HeldWake: func() { woken++ }}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	ctx := context.Background()
	day := func(d int) time.Time { return time.Date(2026, 3, d, 12, 0, 0, 0, time.UTC) }
	ids := map[string]int64{}
	for i, subject := range []string{"Reset alpha", "Reset beta", "Order beta", "Order gamma"} {
		l := &core.Log{Message: core.Message{From: core.Address{Email: "s@example.com"},
			To: []core.Address{{Email: "r@example.com"}}, Subject: subject}}
		if err := logs.EnqueueLog(ctx, l); err != nil {
			t.Fatal(err)
		}
		logs.SetCreatedAt(l.ID, day(i+1))
		ids[subject] = l.ID
	}
	claimed, err := logs.ClaimLogs(ctx, "w", 10, time.Minute)
	if err != nil || len(claimed) != 4 {
		t.Fatalf("claim = %d, %v", len(claimed), err)
	}
	var outs []core.LogOutcome
	for _, l := range claimed {
		status := core.StatusHeld
		if l.ID == ids["Order gamma"] {
			status = core.StatusDelivered
		}
		outs = append(outs, core.LogOutcome{LogID: l.ID, Status: status})
	}
	if _, err := logs.RecordOutcomes(ctx, "w", outs); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, route, query, body string
		status                   int
		field                    string
		answer                   string
	}{
		{"malformed body", "release", "", `{"search":`, 400, "", ""},
		{"another status", "release", "", `{"status":"delivered"}`, 422, "status", ""},
		{"not a date", "discard", "date_from=yesterday", "", 422, "date_from", ""},
		{"search too long", "discard", "", `{"search":"` + strings.Repeat("x", 201) + `"}`, 422, "search", ""},
		{"discard by search in the body", "discard", "", `{"search":"beta","status":"held"}`, 200, "", `"discarded":2`},
		{"again: nothing left to discard", "discard", "", `{"search":"beta"}`, 200, "", `"discarded":0`},
		{"release by date in the query string", "release", "date_to=2026-03-01", "", 200, "", `"released":1`},
		{"release everything left", "release", "", "", 200, "", `"released":0`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := ns + "/logs/held/" + tt.route
			if tt.query != "" {
				path += "?" + tt.query
			}
			r := do(t, ts, "POST", path, "admin", strings.NewReader(tt.body))
			if r.Status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.Status, tt.status, r.Body)
			}
			if tt.field != "" {
				if code, _, fields := r.errorCode(t); code != "validation_error" || fields[tt.field] == "" {
					t.Fatalf("error %s, fields %v; want %s", code, fields, tt.field)
				}
			}
			if tt.answer != "" && !strings.Contains(string(r.Body), tt.answer) {
				t.Fatalf("answer %s, want %s", r.Body, tt.answer)
			}
		})
	}
	if want := []int64{ids["Reset beta"], ids["Order beta"]}; !slices.Equal(sortedIDs(held.discarded), sortedIDs(want)) {
		t.Errorf("discarded %v, want %v", held.discarded, want)
	}
	if want := []int64{ids["Reset alpha"]}; !slices.Equal(held.released, want) {
		t.Errorf("released %v, want %v", held.released, want)
	}
	if woken != 1 {
		t.Errorf("the workers were woken %d times, want once (after the release that moved a message)", woken)
	}
	s.Logs = &app.Logs{Store: logs}
	ts2 := httptest.NewServer(s.Handler())
	t.Cleanup(ts2.Close)
	if r := do(t, ts2, "POST", ns+"/logs/held/release", "admin", strings.NewReader("")); r.Status != 404 {
		t.Errorf("without the flood guard: %d %s, want 404", r.Status, r.Body)
	}
}

func sortedIDs(ids []int64) []int64 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}
