package faults_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/faults"
)

// answer is what one request got: a status and body, or a client error.
type answer struct {
	status int
	body   string
	ctype  string
	err    error
}

func get(ctx context.Context, t *testing.T, url string) answer {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return answer{err: err}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, body: string(b), ctype: resp.Header.Get("Content-Type")}
}

func start(t *testing.T) (*faults.Queue, *httptest.Server) {
	t.Helper()
	q := faults.New()
	srv := httptest.NewServer(q.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "handled "+r.URL.Path)
	})))
	t.Cleanup(func() {
		q.Close()
		srv.Close()
	})
	return q, srv
}

func TestFailuresInOrder(t *testing.T) {
	tests := []struct {
		name   string
		inject func(q *faults.Queue)
		want   []answer // one per request, in order
	}{
		{"no faults", func(*faults.Queue) {},
			[]answer{{status: 200, body: "handled /x"}}},
		{"fail next two", func(q *faults.Queue) { q.FailNext(2, 503, `{"e":1}`) },
			[]answer{{status: 503, body: `{"e":1}`, ctype: "application/json"}, {status: 503, body: `{"e":1}`, ctype: "application/json"}, {status: 200, body: "handled /x"}}},
		{"queued in order", func(q *faults.Queue) {
			q.FailNext(1, 429, "slow down")
			q.FailNext(1, 500, "oops")
		}, []answer{{status: 429, body: "slow down", ctype: "application/json"}, {status: 500, body: "oops", ctype: "application/json"}, {status: 200, body: "handled /x"}}},
		{"custom response sees the request", func(q *faults.Queue) {
			q.FailNextWith(1, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/xml")
				w.WriteHeader(400)
				_, _ = io.WriteString(w, "<path>"+r.URL.Path+"</path>")
			})
		}, []answer{{status: 400, body: "<path>/x</path>", ctype: "text/xml"}, {status: 200, body: "handled /x"}}},
		{"zero is nothing", func(q *faults.Queue) { q.FailNext(0, 500, "") },
			[]answer{{status: 200, body: "handled /x"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, srv := start(t)
			tc.inject(q)
			for i, want := range tc.want {
				got := get(context.Background(), t, srv.URL+"/x")
				if got.err != nil || got.status != want.status || got.body != want.body {
					t.Fatalf("request %d: got %d %q (%v), want %d %q", i, got.status, got.body, got.err, want.status, want.body)
				}
				if want.ctype != "" && got.ctype != want.ctype {
					t.Errorf("request %d: Content-Type %q, want %q", i, got.ctype, want.ctype)
				}
			}
			if q.Requests() != len(tc.want) {
				t.Errorf("Requests = %d, want %d", q.Requests(), len(tc.want))
			}
		})
	}
}

func TestStallEndsWithTheClient(t *testing.T) {
	q, srv := start(t)
	q.StallNext(1)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if got := get(ctx, t, srv.URL+"/x"); !errors.Is(got.err, context.DeadlineExceeded) {
		t.Fatalf("stalled request: %d %q %v, want a deadline error", got.status, got.body, got.err)
	}
	if got := get(context.Background(), t, srv.URL+"/x"); got.err != nil || got.body != "handled /x" {
		t.Fatalf("request after the stall: %d %q %v, want it handled", got.status, got.body, got.err)
	}
	if q.Requests() != 2 {
		t.Errorf("Requests = %d, want 2", q.Requests())
	}
}

func TestCloseReleasesStalls(t *testing.T) {
	q, srv := start(t)
	q.StallNext(1)
	done := make(chan answer, 1)
	go func() { done <- get(context.Background(), t, srv.URL+"/x") }()
	for q.Requests() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	q.Close()
	q.Close() // twice is harmless
	got := <-done
	// The released handler returns without writing: the client sees an
	// empty 200 answer, never the wrapped handler's.
	if got.err != nil || got.status != http.StatusOK || got.body != "" {
		t.Fatalf("released request got %d %q (%v), want an empty 200", got.status, got.body, got.err)
	}
}

func TestServer(t *testing.T) {
	srv := faults.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "handled "+r.URL.Path)
	}))
	tests := []struct {
		name       string
		inject     func()
		wantStatus int
		wantBody   string
	}{
		{"handler", func() {}, 200, "handled /a"},
		{"injected failure", func() { srv.FailNext(1, 502, "bad gateway") }, 502, "bad gateway"},
		{"handler again", func() {}, 200, "handled /a"},
	}
	for _, tc := range tests {
		tc.inject()
		got := get(context.Background(), t, srv.URL+"/a")
		if got.err != nil || got.status != tc.wantStatus || got.body != tc.wantBody {
			t.Errorf("%s: got %d %q (%v), want %d %q", tc.name, got.status, got.body, got.err, tc.wantStatus, tc.wantBody)
		}
	}
	if srv.Requests() != len(tests) {
		t.Errorf("Requests = %d, want %d", srv.Requests(), len(tests))
	}
	srv.StallNext(1)
	done := make(chan answer, 1)
	go func() { done <- get(context.Background(), t, srv.URL+"/a") }()
	for srv.Requests() == len(tests) {
		time.Sleep(5 * time.Millisecond)
	}
	srv.Close()
	if got := <-done; got.err == nil && got.body == "handled /a" {
		t.Errorf("the stalled request reached the handler")
	}
	if got := get(context.Background(), t, srv.URL+"/a"); got.err == nil {
		t.Errorf("request after Close got %d %q, want a connection error", got.status, got.body)
	}
}

// TestDrops: TakeAndDropNext lets the handler keep the request and closes
// the connection with no answer; DropNextUnkept closes it unhandled.
func TestDrops(t *testing.T) {
	tests := []struct {
		name       string
		inject     func(q *faults.Queue)
		wantKept   int
		wantAnswer bool
	}{
		{"take and drop", func(q *faults.Queue) { q.TakeAndDropNext(1) }, 1, false},
		{"drop unkept", func(q *faults.Queue) { q.DropNextUnkept(1) }, 0, false},
		{"no fault", func(*faults.Queue) {}, 1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := faults.New()
			kept := 0
			srv := httptest.NewServer(q.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				kept++
				_, _ = io.WriteString(w, "kept")
			})))
			defer srv.Close()
			defer q.Close()
			tc.inject(q)
			a := get(context.Background(), t, srv.URL+"/x")
			if (a.err == nil) != tc.wantAnswer || kept != tc.wantKept {
				t.Errorf("answer %+v, kept %d; want an answer %v, kept %d", a, kept, tc.wantAnswer, tc.wantKept)
			}
		})
	}
}
