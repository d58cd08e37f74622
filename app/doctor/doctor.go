// Package doctor checks an installation the way a site owner would ask
// about it — is the database there, does the site reach the service, are
// the screens served, is the clock right — and says for each check what
// was found, a verdict (ok, warning, error) and the fix in words. The
// same checks serve `mailsvc doctor` and GET /tools/doctor.
//
// Each check is a Check; those that touch the outside (the database, the
// bridge file, HTTP) reach it through the small ports below, implemented
// by the adapters.
package doctor

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Verdict is a check's outcome.
type Verdict string

// The verdicts, from best to worst.
const (
	OK      Verdict = "ok"
	Warning Verdict = "warning"
	Error   Verdict = "error"
)

// Finding is what one check found: its verdict, what it saw (Message) and,
// unless the verdict is OK, what to do about it (Fix).
type Finding struct {
	Verdict Verdict
	Message string
	Fix     string
}

// Check is one check. Critical checks are those whose failure stops mail
// or the screens (the database, the bridge, the service, REST through the
// site, the screens); a non-critical check reports a warning at worst.
type Check struct {
	// Name is the check's stable id ("database", "rest_through_site").
	Name string
	// Title says what is checked, in words.
	Title    string
	Critical bool
	// Run performs the check; it must honour ctx's deadline.
	Run func(ctx context.Context) Finding
	// Needs names a check this one cannot pass without (the screens need
	// the service): when both fail, this one reports that it was not
	// checked rather than the same cause again.
	Needs string
}

// Result is a check's finding with the check's identity.
type Result struct {
	Name     string  `json:"name"`
	Title    string  `json:"title"`
	Critical bool    `json:"critical"`
	Verdict  Verdict `json:"verdict"`
	Message  string  `json:"message"`
	Fix      string  `json:"fix,omitempty"`
}

// Report is the outcome of every check, in the order they were given.
// Healthy is false when a critical check failed (the CLI then exits
// non-zero).
type Report struct {
	Healthy bool     `json:"healthy"`
	Checks  []Result `json:"checks"`
}

// DefaultTimeout bounds one check.
const DefaultTimeout = 10 * time.Second

// Doctor runs a fixed list of checks.
type Doctor struct {
	Checks []Check
	// Timeout bounds each check; 0 means DefaultTimeout.
	Timeout time.Duration
}

// Diagnose runs every check at once, each under its own timeout, and
// returns their results in order. A non-critical check's error is
// reported as a warning.
func (d *Doctor) Diagnose(ctx context.Context) Report {
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	out := Report{Healthy: true, Checks: make([]Result, len(d.Checks))}
	var wg sync.WaitGroup
	for i, c := range d.Checks {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			f := c.Run(cctx)
			if f.Verdict == "" {
				f.Verdict = OK
			}
			if f.Verdict == Error && !c.Critical {
				f.Verdict = Warning
			}
			out.Checks[i] = Result{Name: c.Name, Title: c.Title, Critical: c.Critical, Verdict: f.Verdict, Message: f.Message, Fix: f.Fix}
		})
	}
	wg.Wait()
	byName := map[string]Result{}
	for _, r := range out.Checks {
		byName[r.Name] = r
	}
	for i, c := range d.Checks {
		need, ok := byName[c.Needs]
		if r := out.Checks[i]; ok && need.Verdict == Error && r.Verdict == Error {
			out.Checks[i].Verdict, out.Checks[i].Fix = Warning, ""
			out.Checks[i].Message = fmt.Sprintf("Not checked: “%s” failed (above).", need.Title)
		}
	}
	for _, r := range out.Checks {
		if r.Critical && r.Verdict == Error {
			out.Healthy = false
		}
	}
	return out
}

// okf is an OK finding with a formatted message.
func okf(format string, args ...any) Finding {
	return Finding{Verdict: OK, Message: fmt.Sprintf(format, args...)}
}

// NotChecked is c, not run, for a check that needs what an earlier check
// found missing (cause, e.g. the database does not answer): its result is
// a warning that it was not checked and why, so that a report names one
// cause once instead of failing every check that needs it.
func NotChecked(c Check, cause string) Check {
	c.Run = func(context.Context) Finding {
		return Finding{Verdict: Warning, Message: "Not checked: " + cause + "."}
	}
	return c
}
