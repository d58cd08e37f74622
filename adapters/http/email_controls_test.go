package http_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/store/storetest"
	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/internal/testdb"
)

// newEmailControlServer serves the email control routes over a real
// SQLite store.
func newEmailControlServer(t *testing.T) (*httptest.Server, *store.DB) {
	t.Helper()
	db := storetest.Open(t, testdb.SQLite(t), "wp_")
	s, _ := newAPI()
	s.EmailControls = &app.EmailControls{Store: db.Settings(), Counts: db.EmailControls()}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts, db
}

// TestEmailControlRoutesBadInput: authentication, malformed bodies and
// unknown kinds, and that a refused update stores nothing.
func TestEmailControlRoutesBadInput(t *testing.T) {
	ts, db := newEmailControlServer(t)
	const path = "/settings/email-controls"
	tests := []struct {
		name, method, token, body string
		status                    int
		code, field               string
	}{
		{"read without credentials", "GET", "", "", 401, "rest_not_logged_in", ""},
		{"update without credentials", "PUT", "", `{"new_user_admin":false}`, 401, "rest_not_logged_in", ""},
		{"read without the capability", "GET", "editor", "", 403, "rest_forbidden", ""},
		{"update without the capability", "PUT", "editor", `{"new_user_admin":false}`, 403, "rest_forbidden", ""},
		{"malformed JSON", "PUT", "admin", `{"new_user_admin":`, 400, "bad_request", ""},
		{"not an object", "PUT", "admin", `["new_user_admin"]`, 400, "bad_request", ""},
		{"unknown kind", "PUT", "admin", `{"new_user_admin":false,"newsletter":false}`, 422, "validation_error", "newsletter"},
		{"not a boolean", "PUT", "admin", `{"comment_moderation":"off"}`, 422, "validation_error", "comment_moderation"},
		{"wrong method", "POST", "admin", `{}`, 404, "rest_no_route", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, ts, tt.method, ns+path, tt.token, strings.NewReader(tt.body))
			code, status, fields := r.errorCode(t)
			if r.Status != tt.status || code != tt.code || status != tt.status || (tt.field != "" && fields[tt.field] == "") {
				t.Fatalf("%d %s: %s; want %d %s naming %q", r.Status, code, r.Body, tt.status, tt.code, tt.field)
			}
		})
	}
	if stored, err := db.Settings().LoadSettings(context.Background(), core.ScopeEmailControls); err != nil || len(stored) != 0 {
		t.Fatalf("refused updates stored %v (%v)", stored, err)
	}
}

// TestEmailControlRoutes: every kind is answered, on by default, with its
// count; a switch set over PUT is answered back and kept.
func TestEmailControlRoutes(t *testing.T) {
	ts, db := newEmailControlServer(t)
	ctx := context.Background()
	for _, day := range []string{"2026-03-01", "2026-03-02"} {
		if err := db.EmailControls().AddEmailControlCount(ctx, "comment_notification", day, 2); err != nil {
			t.Fatal(err)
		}
	}
	type state struct {
		Controls []struct {
			Kind, Group, Label string
			Enabled            bool
			Count              int64
		}
		Suppressed int64
	}
	read := func(r reply) map[string]bool {
		t.Helper()
		if r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		var st state
		r.json(t, &st)
		if len(st.Controls) != len(core.EmailControlKinds) || st.Suppressed != 4 {
			t.Fatalf("%d controls, %d suppressed: %s", len(st.Controls), st.Suppressed, r.Body)
		}
		on := map[string]bool{}
		for i, c := range st.Controls {
			if c.Kind != core.EmailControlKinds[i].Kind || c.Label == "" || c.Group == "" {
				t.Fatalf("control %d = %+v", i, c)
			}
			if want := map[bool]int64{true: 4}[c.Kind == "comment_notification"]; c.Count != want {
				t.Fatalf("%s count %d, want %d", c.Kind, c.Count, want)
			}
			on[c.Kind] = c.Enabled
		}
		return on
	}
	for kind, on := range read(do(t, ts, "GET", ns+"/settings/email-controls", "admin", nil)) {
		if !on {
			t.Fatalf("%s is off before any update", kind)
		}
	}
	on := read(do(t, ts, "PUT", ns+"/settings/email-controls", "admin", strings.NewReader(`{"new_user_admin":false,"auto_update_plugins":false}`)))
	if on["new_user_admin"] || on["auto_update_plugins"] || !on["new_user_user"] {
		t.Fatalf("after PUT: %v", on)
	}
	on = read(do(t, ts, "PUT", ns+"/settings/email-controls", "admin", strings.NewReader(`{"new_user_admin":true}`)))
	if !on["new_user_admin"] || on["auto_update_plugins"] {
		t.Fatalf("after the second PUT: %v", on)
	}
	if again := read(do(t, ts, "GET", ns+"/settings/email-controls", "admin", nil)); again["auto_update_plugins"] {
		t.Fatal("the switch was not kept")
	}
}
