package apptest

import (
	"testing"
	"time"
)

// WaitTimeout is how long WaitFor waits: generous, so that a slow machine
// does not fail a test whose condition does come true.
const WaitTimeout = 10 * time.Second

// WaitFor polls cond every millisecond until it holds, and fails the test
// if it still does not after WaitTimeout; what names the condition in the
// failure.
func WaitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
