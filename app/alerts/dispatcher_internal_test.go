package alerts

import (
	"errors"
	"testing"
	"time"
)

type retryAfterErr time.Duration

func (e retryAfterErr) Error() string             { return "429" }
func (e retryAfterErr) RetryAfter() time.Duration { return time.Duration(e) }

func TestRetryWait(t *testing.T) {
	tests := []struct {
		name    string
		backoff time.Duration
		err     error
		want    time.Duration
	}{
		{"plain error: the backoff", time.Second, errors.New("boom"), time.Second},
		{"Retry-After longer than the backoff wins", time.Second, retryAfterErr(7 * time.Second), 7 * time.Second},
		{"Retry-After shorter than the backoff", 30 * time.Second, retryAfterErr(2 * time.Second), 30 * time.Second},
		{"Retry-After capped", time.Second, retryAfterErr(time.Hour), maxRetryAfter},
		{"wrapped", time.Second, errors.Join(errors.New("x"), retryAfterErr(3*time.Second)), 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := retryWait(tt.backoff, tt.err); got != tt.want {
				t.Fatalf("retryWait = %s, want %s", got, tt.want)
			}
		})
	}
}
