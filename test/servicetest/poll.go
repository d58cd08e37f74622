package servicetest

import (
	"testing"
	"time"
)

// Poll calls cond every interval until it holds, failing the test after
// timeout with what it was waiting for.
func Poll(tb testing.TB, what string, timeout, interval time.Duration, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(interval)
	}
}
