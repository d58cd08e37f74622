package alerts_test

import (
	"context"
	"testing"

	"github.com/mailsvc/mailsvc/app/alerts"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/core"
)

// TestChannelConnectionUse checks, on a network, that a channel that
// sends through a connection (connection_id, as the email channel) names
// the network's connections only, alert channels being the network's: a
// site's own is refused with the text of a missing connection, on
// create, update and test, and nothing is sent.
func TestChannelConnectionUse(t *testing.T) {
	ctx := context.Background()
	f := newFixture()
	f.channels.Use = apptest.NewNetwork(t, 3, map[int64]int64{7: 3})
	r := newRecorder(t)
	theirs := alerts.ChannelInput{Name: ptr("ops"), Type: ptr("test-recorder"), Settings: map[string]any{"sink": r.name, "connection_id": float64(7)}}
	if _, err := f.channels.Create(ctx, theirs); core.ErrorFields(err)["connection_id"] != "Connection 7 does not exist." {
		t.Errorf("create through site 3's connection: %v %v", err, core.ErrorFields(err))
	}
	if res, err := f.channels.Test(ctx, alerts.TestInput{Channel: &theirs}); core.ErrorFields(err)["connection_id"] != "Connection 7 does not exist." {
		t.Errorf("test through site 3's connection: %+v, %v", res, err)
	}
	ch := f.add(t, r, nil, core.Settings{"connection_id": 1})
	if _, err := f.channels.Update(ctx, ch.ID, alerts.ChannelInput{Settings: map[string]any{"connection_id": float64(7)}}); core.ErrorFields(err)["connection_id"] != "Connection 7 does not exist." {
		t.Errorf("update to site 3's connection: %v", err)
	}
	if _, err := f.channels.Update(ctx, ch.ID, alerts.ChannelInput{Name: ptr("ops 2")}); err != nil {
		t.Errorf("update of the name: %v", err)
	}
	if a, _ := r.got(); len(a) != 0 {
		t.Fatalf("sent %+v", a)
	}
}
