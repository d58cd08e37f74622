package dashboard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/dashboard"
	"github.com/mailsvc/mailsvc/core"
)

// TestApplyOnboardingConnectionUse checks the wizard on a network: it
// makes its connection the network's default, so it takes the network's
// connections only; a site's own is refused with the text of a missing
// connection, untouched and untested.
func TestApplyOnboardingConnectionUse(t *testing.T) {
	ctx := context.Background()
	w := newWizard("owner@example.com")
	var ids []int64
	for _, name := range []string{"network", "site 3"} {
		c := &core.Connection{Name: name, Driver: "wizardsmtp", IsActive: true, Settings: core.Settings{"host": "mx.example.com", "from_email": "net@example.com"}}
		if err := w.conns.CreateConnection(ctx, c); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	w.svc.Use = apptest.NewNetwork(t, 3, map[int64]int64{ids[1]: 3})
	w.settings.Use = w.svc.Use
	for _, id := range []int64{ids[1], 999} {
		_, err := w.svc.ApplyOnboarding(ctx, dashboard.ApplyInput{ConnectionID: &id, Name: ptr("taken"), TestEmail: ptr("x@example.com")})
		if core.ErrorCode(err) != core.EINVALID || core.ErrorFields(err)["connection_id"] != fmt.Sprintf("Connection %d does not exist.", id) {
			t.Errorf("connection %d: %v %v", id, err, core.ErrorFields(err))
		}
	}
	if len(w.sender.sent) != 0 {
		t.Fatalf("sent %v", w.sender.sent)
	}
	if c, _ := w.conns.FindConnectionByID(ctx, ids[1]); c.Name != "site 3" {
		t.Fatalf("site 3's connection renamed %q", c.Name)
	}
	res, err := w.svc.ApplyOnboarding(ctx, dashboard.ApplyInput{ConnectionID: &ids[0], TestEmail: ptr("x@example.com")})
	if err != nil || res.Connection.ID != ids[0] {
		t.Fatalf("the network's connection: %+v, %v", res, err)
	}
}
