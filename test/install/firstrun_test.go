// Package install drives a first run and the way out through the built
// binary, as a site owner would: onboarding on a fresh WordPress site with
// no From set, a running service whose tables are dropped, and the doctor.
package install

import (
	"bytes"
	"context"
	"fmt"
	"net/mail"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

func TestOnboardingOnAFreshSiteSendsFromWordPressSender(t *testing.T) {
	site := wpsite.Install(t, wpsite.Options{Prefix: "wpd_", EnvironmentType: "local", SiteURL: "http://www.Example.test"})
	pass := site.CreateApplicationPassword(t, site.AdminLogin, "onboarding")
	sink := smtpsink.Start(t)
	// The site is "local" (application passwords over plain HTTP), which
	// the staging guard would capture: this one is production.
	svc := servicetest.Start(t, t.TempDir(), "MAILSVC_WP_CONFIG="+site.WPConfigPath, "MAILSVC_ENVIRONMENT=production")
	auth := servicetest.Basic(site.AdminLogin, pass)

	// No from_email in the settings nor in the connection.
	body := fmt.Sprintf(`{"driver":"smtp","settings":{"host":%q,"port":%d,"encryption":"none","auth":false}}`, sink.Host(), sink.Port())
	r := servicetest.Call(t, "POST", svc.Base+"/dashboard/onboarding/apply", body, auth)
	var res struct {
		Test struct {
			Success bool
			To      string
		}
	}
	if r.JSON(t, &res); r.Status != 200 || !res.Test.Success {
		t.Fatalf("apply: %d %s", r.Status, r.Body)
	}
	msgs, err := sink.WaitFor(1, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	m, err := mail.ReadMessage(bytes.NewReader(msgs[0].Data))
	if err != nil {
		t.Fatal(err)
	}
	if from := m.Header.Get("From"); !strings.Contains(from, "wordpress@example.test") || msgs[0].From != "wordpress@example.test" {
		t.Errorf("From %q, envelope %q; want wordpress@example.test", from, msgs[0].From)
	}
	if res.Test.To != site.AdminEmail || len(msgs[0].To) != 1 || msgs[0].To[0] != site.AdminEmail {
		t.Errorf("sent to %q / %v, want the admin %s", res.Test.To, msgs[0].To, site.AdminEmail)
	}
}

func TestServiceStopsWhenItsTablesAreDropped(t *testing.T) {
	dir := t.TempDir()
	svc := servicetest.Start(t, dir)
	if want := "The screens are at http://" + svc.Addr + "/admin/"; !strings.Contains(svc.Stdout.String(), want) {
		t.Errorf("serve does not print the screens' address %q:\n%s", want, svc.Stdout)
	}
	db, err := store.OpenExisting(context.Background(), "sqlite:"+filepath.Join(dir, "data", "mailsvc.db"), "wp_", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if dropped, err := db.Installation().DropServiceTables(context.Background()); err != nil || len(dropped) == 0 {
		t.Fatalf("drop: %v, %v", dropped, err)
	}
	if err := svc.Wait(t, 60*time.Second); err != nil {
		t.Fatalf("exit: %v\n%s", err, svc.Stderr)
	}
	logs := svc.Stderr.String()
	if n := strings.Count(logs, "mailsvc tables are gone (uninstalled?); stopping"); n != 1 {
		t.Errorf("%d lines say the tables are gone, want 1:\n%s", n, logs)
	}
	if strings.Contains(logs, "no such table") {
		t.Errorf("errors logged about the missing tables:\n%s", logs)
	}
	// An expected stop: INFO lines, no ERROR and no SQL trace.
	for _, want := range []string{`level=INFO msg="mailsvc tables are gone (uninstalled?); stopping"`, "level=INFO msg=stopped"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the service's log lacks %s:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, "level=ERROR") || strings.Contains(logs, "trace.sql") {
		t.Errorf("the expected stop is logged as an error:\n%s", logs)
	}
}
