package intake

import (
	"github.com/mailsvc/mailsvc/test/servicetest"

	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/test/wpsite"
)

type plugin struct {
	File    string `json:"file"`
	Slug    string `json:"slug"`
	Name    string `json:"name"`
	Version string `json:"version"`
}

// TestToolsPluginsOnWordPress activates two plugins on a real WordPress
// site with WordPress's own activate_plugin() and checks that GET
// /tools/plugins reports what WordPress reports: the active_plugins
// order, and the names and versions of get_plugin_data().
func TestToolsPluginsOnWordPress(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	site := wpsite.Install(t, wpsite.Options{Prefix: "wpp_", EnvironmentType: "local"})
	plugins := map[string]string{
		"mailsvc-probe/mailsvc-probe.php": "<?php\n/**\n * Plugin Name:       Mailsvc Probé: Ünïcode & Co\n * Description:       Test plugin.\n * Version:           1.2.3\n * Requires PHP:      7.4\n */\n",
		"zz-single.php":                   "<?php\n/* Plugin Name: ZZ Single File\nVersion: 0.9-beta */\n",
		"inactive/inactive.php":           "<?php\n/* Plugin Name: Never Activated\nVersion: 5 */\n",
	}
	for file, body := range plugins {
		p := filepath.Join(site.ContentDir, "plugins", filepath.FromSlash(file))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := site.PHP(t, `require_once ABSPATH . 'wp-admin/includes/plugin.php';
foreach ( array( 'zz-single.php', 'mailsvc-probe/mailsvc-probe.php' ) as $f ) {
	$r = activate_plugin( $f );
	if ( is_wp_error( $r ) ) {
		wpsite_fail( $r->get_error_message() );
	}
}
$list = array();
foreach ( get_option( 'active_plugins' ) as $f ) {
	$d = get_plugin_data( WP_PLUGIN_DIR . '/' . $f, false, false );
	$list[] = array( 'file' => $f, 'slug' => dirname( $f ) === '.' ? basename( $f, '.php' ) : dirname( $f ), 'name' => $d['Name'], 'version' => $d['Version'] );
}
echo json_encode( $list );`)
	var want []plugin
	if err := json.Unmarshal([]byte(out), &want); err != nil {
		t.Fatalf("WordPress printed %q: %v", out, err)
	}
	if len(want) != 2 || want[0].Name == "" || want[1].Version == "" {
		t.Fatalf("WordPress reports %+v", want)
	}

	pw := site.CreateApplicationPassword(t, "admin", "mailsvc plugins test")
	svc := servicetest.Start(t, t.TempDir(), "MAILSVC_WP_CONFIG="+site.WPConfigPath)
	var got []plugin
	callJSON(t, "GET", svc.Base+"/tools/plugins", "", basic("admin", pw), 200, &got)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GET /tools/plugins\n got %+v\nwant %+v (as WordPress reports)", got, want)
	}
	if r := call(t, "GET", svc.Base+"/tools/plugins", "", nil); r.Status != 401 {
		t.Errorf("anonymous GET /tools/plugins: %d %s", r.Status, r.Body)
	}

	// Deactivating one in WordPress shows at once.
	site.PHP(t, `require_once ABSPATH . 'wp-admin/includes/plugin.php'; deactivate_plugins( 'zz-single.php' );`)
	callJSON(t, "GET", svc.Base+"/tools/plugins", "", basic("admin", pw), 200, &got)
	if len(got) != 1 || got[0] != want[0] {
		t.Errorf("after deactivation: %+v, want only %+v", got, want[0])
	}
}

func TestToolsPluginsStandalone(t *testing.T) {
	svc := servicetest.Start(t, t.TempDir())
	r := call(t, "GET", svc.Base+"/tools/plugins", "", basic("admin", adminPassword(t, svc)))
	if r.Status != 200 || strings.TrimSpace(string(r.Body)) != "[]" {
		t.Fatalf("standalone GET /tools/plugins: %d %s", r.Status, r.Body)
	}
}
