package http_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	api "github.com/mailsvc/mailsvc/adapters/http"
	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/core"
)

// TestOneTimeLinksOutOfSiteAdminsReach: on a network with log_body full,
// the super admin's password-reset mail sent from site 2's login page is
// a log of site 2. Site 2's administrator reads it with the reset key
// redacted (and counted), and cannot resend it, alone or among others,
// to its recipients or to themselves; the super admin reads and resends
// it whole. Another log of the site is untouched for its administrator.
func TestOneTimeLinksOutOfSiteAdminsReach(t *testing.T) {
	ctx := context.Background()
	conns := apptest.NewConnectionStore()
	settings := &app.Settings{Store: apptest.NewSettingsStore(), Connections: conns}
	if _, err := settings.Update(ctx, map[string]any{"log_body": "full"}); err != nil {
		t.Fatal(err)
	}
	logs := apptest.NewLogStore()
	s := &api.Server{
		Auth:        networkAuth{},
		Connections: &app.Connections{Store: conns, Cipher: apptest.Cipher{Key: "k"}, Hooks: &core.Hooks{}},
		Settings:    settings,
		Logs:        &app.Logs{Store: logs, Settings: settings},
		Hooks:       &core.Hooks{},
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	s.Sites, s.Network = stubSites{}, stubNetwork{}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)

	const key = "Zq7Rk2pLmN8vXw4Yt6Ua"
	reset := "Someone has requested a password reset for the following account:\n\nUsername: admin\n\n" +
		"To reset your password, visit the following address:\n\n" +
		"http://example.test/site2/wp-login.php?action=rp&key=" + key + "&login=admin&wp_lang=en_US\n"
	delivered := func(text string) int64 {
		l := &core.Log{SiteID: 2, Source: "wordpress", Message: core.Message{
			From: core.Address{Email: "wordpress@example.test"}, To: []core.Address{{Email: "admin@example.test"}},
			Subject: "[Site 2] Password Reset", Text: text}}
		if err := logs.EnqueueLog(ctx, l); err != nil {
			t.Fatal(err)
		}
		if _, err := logs.ClaimLogs(ctx, "w", 1, time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := logs.RecordOutcomes(ctx, "w", []core.LogOutcome{{LogID: l.ID, Status: core.StatusDelivered, Body: &core.KeptBody{Mode: core.LogBodyFull}}}); err != nil {
			t.Fatal(err)
		}
		return l.ID
	}
	resetID := delivered(reset)
	plainID := delivered("Your order has shipped.")
	id := strconv.FormatInt(resetID, 10)
	call := func(method, path, token, body string) reply {
		return do(t, ts, method, path, token, strings.NewReader(body))
	}

	var got struct {
		Message       core.Message `json:"message"`
		RedactedCount int          `json:"redacted_count"`
	}
	r := call("GET", "/site2"+ns+"/logs/"+id, "ann", "")
	r.json(t, &got)
	if r.Status != 200 || strings.Contains(string(r.Body), key) || !strings.Contains(got.Message.Text, "key=[redacted]&login=admin") || got.RedactedCount != 1 {
		t.Errorf("site 2's administrator reads the reset mail: %d %s; want the key redacted and counted", r.Status, r.Body)
	}
	for _, c := range []struct{ path, body string }{
		{"/logs/" + id + "/resend", `{}`},
		{"/logs/" + id + "/resend", `{"to":["ann@example.net"]}`},
	} {
		r := call("POST", "/site2"+ns+c.path, "ann", c.body)
		if code, status, _ := r.errorCode(t); r.Status != 403 || status != 403 || code == "" || !strings.Contains(string(r.Body), "one-time link") {
			t.Errorf("site 2's administrator resends %s %s: %d %s; want 403 naming the one-time link", c.path, c.body, r.Status, r.Body)
		}
	}
	r = call("POST", "/site2"+ns+"/logs/resend", "ann", `{"ids":[`+id+`],"to":["ann@example.net"]}`)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"resent":0`) {
		t.Errorf("site 2's administrator resends the reset mail in bulk to themselves: %d %s; want it skipped", r.Status, r.Body)
	}
	r = call("POST", "/site2"+ns+"/logs/resend", "ann", `{"ids":[`+id+`]}`)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"resent":0`) {
		t.Errorf("site 2's administrator resends the reset mail in bulk: %d %s; want it skipped", r.Status, r.Body)
	}

	r = call("GET", "/site2"+ns+"/logs/"+strconv.FormatInt(plainID, 10), "ann", "")
	if r.Status != 200 || !strings.Contains(string(r.Body), "Your order has shipped.") {
		t.Errorf("site 2's administrator reads another log: %d %s", r.Status, r.Body)
	}

	r = call("GET", ns+"/logs/"+id, "super", "")
	if r.Status != 200 || !strings.Contains(string(r.Body), key) {
		t.Errorf("the super admin reads the reset mail: %d %s; want it whole", r.Status, r.Body)
	}
	r = call("POST", ns+"/logs/"+id+"/resend", "super", `{}`)
	if r.Status != 200 {
		t.Errorf("the super admin resends the reset mail: %d %s", r.Status, r.Body)
	}
}
