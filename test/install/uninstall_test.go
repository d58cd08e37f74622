package install

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/wordpress/bridge"
	"github.com/mailsvc/mailsvc/test/servicetest"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// bridgeCron is a PHP line that says whether the bridge's WP-cron event is
// in the site's cron option.
const bridgeCron = `echo false === strpos( serialize( _get_cron_array() ), 'mailsvc_bridge_run_hooks' ) ? 'none' : 'scheduled';`

// TestUninstallLeavesNoCronEventNorItsFolder checks that mailsvc
// uninstall removes the bridge's WP-cron event from the site's cron
// option (WordPress would log invalid_schedule without the bridge) and a
// mu-plugins/ folder wp install created, whether or not the data is
// preserved.
func TestUninstallLeavesNoCronEventNorItsFolder(t *testing.T) {
	for _, preserve := range []bool{false, true} {
		name := map[bool]string{false: "tables dropped", true: "data preserved"}[preserve]
		t.Run(name, func(t *testing.T) {
			site := wpsite.Install(t, wpsite.Options{Prefix: "wpu_"})
			muPlugins := filepath.Join(site.ContentDir, "mu-plugins")
			// A site without mu-plugins/: wp install creates it.
			if err := os.Remove(muPlugins); err != nil {
				t.Fatalf("a fresh site's mu-plugins/ should be empty: %v", err)
			}
			dir := t.TempDir()
			env := servicetest.Environ(dir)
			if preserve {
				env = append(env, "MAIL_SVC_PRESERVE_DATA=true")
			}
			if r := servicetest.Run(dir, env, "", "wp", "install", "--wp-path", site.Dir); r.Code != 0 {
				t.Fatalf("wp install: %s%s", r.Stdout, r.Stderr)
			}
			// A page load runs the bridge, which schedules its event.
			if got := site.PHP(t, bridgeCron); got != "scheduled" {
				t.Fatalf("after a page load with the bridge the event is %q", got)
			}
			r := servicetest.Run(dir, env, "", "uninstall", "--wp-path", site.Dir)
			if r.Code == 0 || !strings.Contains(r.Stderr, "pass --yes") {
				t.Errorf("uninstall off a terminal without --yes: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
			}
			r = servicetest.Run(dir, env, "", "uninstall", "--yes", "--wp-path", site.Dir)
			if r.Code != 0 {
				t.Fatalf("uninstall: %s%s", r.Stdout, r.Stderr)
			}
			if !strings.Contains(r.Stdout, "Unscheduled the bridge's WP-cron event mailsvc_bridge_run_hooks (1 events in 1 options tables)") {
				t.Errorf("uninstall does not say it unscheduled the event:\n%s", r.Stdout)
			}
			if got := site.PHP(t, bridgeCron); got != "none" {
				t.Errorf("after uninstall the bridge's event is %q in the cron option", got)
			}
			if _, err := os.Stat(muPlugins); !os.IsNotExist(err) {
				t.Errorf("the mu-plugins/ folder wp install created is still there: %v\n%s", err, r.Stdout)
			}
		})
	}
}

// TestInstallAndUninstallTheBridgeFolder checks that mailsvc wp install
// writes the bridge's loader and its whole folder into a mu-plugins/ that
// holds another plugin, replacing an earlier version's files and removing
// those this build no longer ships, that WordPress then runs the bridge,
// and that uninstall leaves neither the loader nor the folder while the
// other plugin stays.
func TestInstallAndUninstallTheBridgeFolder(t *testing.T) {
	site := wpsite.Install(t, wpsite.Options{Prefix: "wpf_"})
	muPlugins := filepath.Join(site.ContentDir, "mu-plugins")
	other := filepath.Join(muPlugins, "other.php")
	// An earlier version's files: one the build replaces, one it no longer ships.
	old := map[string]string{
		"other.php":                     "<?php\n// Another must-use plugin.\n",
		"mailsvc-bridge/queue.php":      "<?php\n// an earlier version\n",
		"mailsvc-bridge/retired.php":    "<?php\n// no longer shipped\n",
		"mailsvc-bridge/old/nested.php": "<?php\n",
	}
	for name, content := range old {
		path := filepath.Join(muPlugins, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	env := servicetest.Environ(dir)
	if r := servicetest.Run(dir, env, "", "wp", "install", "--wp-path", site.Dir); r.Code != 0 {
		t.Fatalf("wp install: %s%s", r.Stdout, r.Stderr)
	}
	for name, want := range bridge.Files() {
		got, err := os.ReadFile(filepath.Join(muPlugins, filepath.FromSlash(name)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("after wp install, %s is not this build's (%v)", name, err)
		}
	}
	for _, gone := range []string{"mailsvc-bridge/retired.php", "mailsvc-bridge/old"} {
		if _, err := os.Stat(filepath.Join(muPlugins, gone)); !os.IsNotExist(err) {
			t.Errorf("wp install left the earlier version's %s: %v", gone, err)
		}
	}
	takenOver := `echo defined( 'MAIL_SVC_WP_MAIL_TAKEOVER' ) && function_exists( 'mailsvc_bridge_queue' ) ? 'bridge' : 'wordpress';`
	if got := site.PHP(t, takenOver); got != "bridge" {
		t.Fatalf("after wp install, wp_mail() is %q's", got)
	}
	if r := servicetest.Run(dir, env, "", "uninstall", "--yes", "--wp-path", site.Dir); r.Code != 0 {
		t.Fatalf("uninstall: %s%s", r.Stdout, r.Stderr)
	}
	for _, gone := range []string{bridge.Path(site.ContentDir), bridge.DirPath(site.ContentDir)} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Errorf("uninstall left %s: %v", gone, err)
		}
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("uninstall removed another plugin: %v", err)
	}
	if got := site.PHP(t, takenOver); got != "wordpress" {
		t.Errorf("after uninstall, wp_mail() is %q's", got)
	}
}
