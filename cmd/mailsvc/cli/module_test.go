package cli

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"

	api "github.com/mailsvc/mailsvc/adapters/http"
	"github.com/mailsvc/mailsvc/app/scheduler"
)

// jobModule is a module whose Serve adds one scheduled job: each run
// reports its start on started and, once its context ends, on stopped.
type jobModule struct {
	name    string
	started chan struct{}
	stopped chan struct{}
}

func (jobModule) Commands() []*cobra.Command { return nil }

func (m jobModule) Serve(_ context.Context, env *ServeEnv) (api.Module, error) {
	env.Jobs = append(env.Jobs, scheduler.Job{Name: m.name, Every: scheduler.Fixed(time.Hour), Run: func(ctx context.Context) error {
		m.started <- struct{}{}
		<-ctx.Done()
		m.stopped <- struct{}{}
		return ctx.Err()
	}})
	return nil, nil
}

// withModules registers ms for the test only.
func withModules(t *testing.T, ms ...Module) {
	t.Helper()
	saved := modules
	modules = append([]Module(nil), modules...)
	t.Cleanup(func() { modules = saved })
	for _, m := range ms {
		RegisterModule(m)
	}
}

// TestModuleJobRuns serves with a module that adds a scheduled job: the
// scheduler runs it as it runs the built-in ones, and its run's context
// ends when serve shuts down, which waits for the run to return.
func TestModuleJobRuns(t *testing.T) {
	standaloneEnv(t)
	t.Setenv("MAILSVC_SCHEDULER_MINUTE", "1")
	m := jobModule{name: "test_module_job", started: make(chan struct{}, 1), stopped: make(chan struct{}, 1)}
	withModules(t, m)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := Command()
	out := &watchWriter{marker: "mailsvc is serving", seen: make(chan struct{})}
	cmd.SetArgs([]string{"serve", "--addr", "127.0.0.1:0"})
	cmd.SetOut(out)
	cmd.SetErr(out)
	served := make(chan error, 1)
	go func() { served <- cmd.ExecuteContext(ctx) }()

	deadline := time.After(60 * time.Second)
	for _, wait := range []struct {
		what string
		done <-chan struct{}
	}{{"the module's job to run", m.started}, {"serve to listen", out.seen}} {
		select {
		case <-wait.done:
		case err := <-served:
			t.Fatalf("serve ended while waiting for %s: %v\n%s", wait.what, err, out)
		case <-deadline:
			t.Fatalf("waited a minute for %s\n%s", wait.what, out)
		}
	}
	cancel()
	select {
	case <-m.stopped:
	case <-deadline:
		t.Fatal("the module's job did not see its context end at shutdown")
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("serve: %v\n%s", err, out)
		}
	case <-deadline:
		t.Fatal("serve did not return after its context ended")
	}
}

// watchWriter keeps what is written to it and closes seen once it holds
// marker.
type watchWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	seen   chan struct{}
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	had := strings.Contains(w.buf.String(), w.marker)
	n, err := w.buf.Write(p)
	if !had && strings.Contains(w.buf.String(), w.marker) {
		close(w.seen)
	}
	return n, err
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestModuleJobsChecked checks the module jobs serve refuses: one
// missing a part, and one named as a built-in or an earlier job.
func TestModuleJobsChecked(t *testing.T) {
	run := func(context.Context) error { return nil }
	every := scheduler.Fixed(time.Minute)
	builtin := []scheduler.Job{{Name: scheduler.JobLogPurge, Every: every, Run: run}}
	for _, tt := range []struct {
		name  string
		added []scheduler.Job
		want  string // "" for no error
	}{
		{"none", nil, ""},
		{"one", []scheduler.Job{{Name: "pro_sweep", Every: every, Run: run}}, ""},
		{"no name", []scheduler.Job{{Every: every, Run: run}}, "needs a Name, Every and Run"},
		{"no interval", []scheduler.Job{{Name: "pro_sweep", Run: run}}, "needs a Name, Every and Run"},
		{"no run", []scheduler.Job{{Name: "pro_sweep", Every: every}}, "needs a Name, Every and Run"},
		{"a built-in's name", []scheduler.Job{{Name: scheduler.JobLogPurge, Every: every, Run: run}}, `named "log_purge", as another job is`},
		{"twice", []scheduler.Job{{Name: "pro_sweep", Every: every, Run: run}, {Name: "pro_sweep", Every: every, Run: run}}, `named "pro_sweep"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := withModuleJobs(builtin, tt.added)
			if errorAsWanted(t, err, tt.want) {
				return
			}
			if len(got) != len(builtin)+len(tt.added) || got[0].Name != scheduler.JobLogPurge {
				t.Fatalf("jobs %v, want the built-in one then the %d added", names(got), len(tt.added))
			}
			for i, j := range tt.added {
				if got[len(builtin)+i].Name != j.Name {
					t.Errorf("job %d is %q, want %q", len(builtin)+i, got[len(builtin)+i].Name, j.Name)
				}
			}
		})
	}
}

// names lists the jobs' names.
func names(jobs []scheduler.Job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.Name
	}
	return out
}
