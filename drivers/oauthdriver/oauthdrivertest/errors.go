package oauthdrivertest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// ErrorCase is one way a provider's fake F fails an OAuth driver's send.
type ErrorCase[F any] struct {
	Name string
	// Fail makes the fake fail the next request (FailNext, StallNext...).
	Fail func(fake F)
	// Stall: Fail stalls the fake, and the send gives up after 300ms with
	// a deadline error.
	Stall         bool
	WantTemporary bool
}

// SendErrors runs each case against a fresh fake from start. After Fail,
// send sends one message through a transport of the fake whose OAuth
// service is a Tokens handing out tokens; the error must be a classified
// core.DeliveryError, temporary as the case wants (a deadline error after
// a stall), without the first token in its text, no token may have been
// refreshed and, as recorded reads the fake, no message recorded.
func SendErrors[F any](t *testing.T, start func(t *testing.T) F, cases []ErrorCase[F],
	send func(ctx context.Context, t *testing.T, fake F, src *Tokens) error, recorded func(fake F) int, tokens ...string) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			fake := start(t)
			tc.Fail(fake)
			ctx := context.Background()
			if tc.Stall {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 300*time.Millisecond)
				defer cancel()
			}
			src := NewTokens(tokens...)
			err := send(ctx, t, fake, src)
			var de *core.DeliveryError
			if err == nil || !errors.As(err, &de) {
				t.Fatalf("err = %v, want a classified error", err)
			}
			if core.IsTemporary(err) != tc.WantTemporary {
				t.Errorf("IsTemporary = %v, want %v (%v)", core.IsTemporary(err), tc.WantTemporary, err)
			}
			if tc.Stall && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("stall error %v is not a deadline error", err)
			}
			if len(tokens) > 0 && strings.Contains(err.Error(), tokens[0]) {
				t.Errorf("error shows the token: %v", err)
			}
			if src.Refreshes() != 0 || recorded(fake) != 0 {
				t.Errorf("refreshes %d, messages %d after a failure", src.Refreshes(), recorded(fake))
			}
		})
	}
}
