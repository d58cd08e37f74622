package bridge_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/wordpress/bridge"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// writeFiles writes files (path relative to root => content), creating
// their directories.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// symlink makes link point at target, failing the test when it cannot.
func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// sendsMail is the body of a PHP function that mails with a subject.
const sendsMail = "{ return wp_mail( 'src@example.com', $subject, 'body' ); }\n"

// TestBridgeSource installs plugins, must-use plugins and themes that call
// wp_mail() in every way the source must survive, and reads the source
// each queued row records.
func TestBridgeSource(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	site := wpsite.Install(t, wpsite.Options{Prefix: "wps_"})
	if _, err := bridge.Install(site.ContentDir); err != nil {
		t.Fatal(err)
	}
	content := site.ContentDir
	elsewhere := filepath.Join(site.Dir, "elsewhere") // real homes of linked code

	writeFiles(t, filepath.Join(content, "plugins"), map[string]string{
		// A plugin's main file.
		"acme-main/acme-main.php": "<?php\n/* Plugin Name: Acme Main */\nrequire __DIR__ . '/vendor/lib/deep/deep.php';\nfunction acme_main_send( $subject ) " + sendsMail,
		// A plugin whose mail code is in an include in a subdirectory.
		"acme-inc/acme-inc.php":              "<?php\n/* Plugin Name: Acme Inc */\nrequire __DIR__ . '/includes/mail/sender.php';\n",
		"acme-inc/includes/mail/sender.php":  "<?php\nfunction acme_inc_send( $subject ) " + sendsMail,
		"solo.php":                           "<?php\n/* Plugin Name: Solo */\nfunction solo_send( $subject ) " + sendsMail,
		"hooked/hooked.php":                  "<?php\n/* Plugin Name: Hooked */\nadd_action( 'hooked_event', function ( $subject ) { wp_mail( 'src@example.com', $subject, 'body' ); } );\nadd_filter( 'hooked_filter', function ( $subject ) { wp_mail( 'src@example.com', $subject, 'body' ); return $subject; } );\nclass Hooked_Mailer { public static function send( $subject ) " + sendsMail + "}\nadd_action( 'hooked_static', array( 'Hooked_Mailer', 'send' ) );\n",
		"core-caller/core-caller.php":        "<?php\n/* Plugin Name: Core Caller */\nfunction core_caller_notify( $user_id ) { wp_new_user_notification( $user_id, null, 'admin' ); }\n",
		"acme-main/vendor/lib/deep/deep.php": "<?php\nfunction acme_deep_send( $subject ) " + sendsMail,
	})
	// A plugin whose directory is a link to code kept elsewhere, under
	// another name.
	writeFiles(t, elsewhere, map[string]string{
		"linked-src-1.2/linked.php":       "<?php\n/* Plugin Name: Linked */\nrequire __DIR__ . '/inc/send.php';\n",
		"linked-src-1.2/inc/send.php":     "<?php\nfunction linked_send( $subject ) " + sendsMail,
		"child-real/style.css":            "/*\nTheme Name: Child\nTemplate: parentt\n*/\n",
		"child-real/functions.php":        "<?php\nfunction childt_send( $subject ) " + sendsMail,
		"child-real/inc/child-mailer.php": "<?php\nfunction childt_inc_send( $subject ) " + sendsMail,
		"themes-real/parentt/style.css":   "/*\nTheme Name: Parent\n*/\n",
		"themes-real/parentt/index.php":   "<?php\n",
		"themes-real/parentt/functions.php": "<?php\nrequire_once get_stylesheet_directory() . '/inc/child-mailer.php';\n" +
			"function parentt_send( $subject ) " + sendsMail,
	})
	symlink(t, filepath.Join(elsewhere, "linked-src-1.2"), filepath.Join(content, "plugins", "linked"))
	// The themes root is a link (as test/wpsite makes it), and so is the
	// active child theme inside it.
	if err := os.Remove(filepath.Join(content, "themes")); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	symlink(t, filepath.Join(elsewhere, "themes-real"), filepath.Join(content, "themes"))
	symlink(t, filepath.Join(elsewhere, "child-real"), filepath.Join(elsewhere, "themes-real", "childt"))

	writeFiles(t, filepath.Join(content, "mu-plugins"), map[string]string{
		// A single-file must-use plugin.
		"mu-single.php": "<?php\nfunction mu_single_send( $subject ) " + sendsMail,
		// A loader that includes a plugin kept in a subdirectory.
		"0-loader.php":        "<?php\nrequire WPMU_PLUGIN_DIR . '/mu-sub/mu-sub.php';\n",
		"mu-sub/mu-sub.php":   "<?php\nrequire __DIR__ . '/src/send.php';\n",
		"mu-sub/src/send.php": "<?php\nfunction mu_sub_send( $subject ) " + sendsMail,
	})
	site.PHP(t, `update_option( 'active_plugins', array( 'acme-main/acme-main.php', 'acme-inc/acme-inc.php', 'solo.php', 'hooked/hooked.php', 'core-caller/core-caller.php', 'linked/linked.php' ) );
update_option( 'template', 'parentt' );
update_option( 'stylesheet', 'childt' );
echo 'ok';`)

	cases := []struct {
		name string
		call string // PHP statement that mails
		want []string
	}{
		{"plugin main file", `acme_main_send( 'main' );`, []string{"acme-main"}},
		{"plugin include in a subdirectory", `acme_inc_send( 'inc' );`, []string{"acme-inc"}},
		{"plugin's deep vendor file", `acme_deep_send( 'deep' );`, []string{"acme-main"}},
		{"single-file plugin", `solo_send( 'solo' );`, []string{"solo"}},
		{"single-file must-use plugin", `mu_single_send( 'mu single' );`, []string{"mu-single"}},
		{"must-use loader including a plugin from a subdirectory", `mu_sub_send( 'mu sub' );`, []string{"mu-sub"}},
		{"plugin callback through do_action", `do_action( 'hooked_event', 'action' );`, []string{"hooked"}},
		{"plugin callback through apply_filters", `apply_filters( 'hooked_filter', 'filter' );`, []string{"hooked"}},
		{"plugin static method through do_action", `do_action( 'hooked_static', 'static' );`, []string{"hooked"}},
		{"symlinked plugin directory", `linked_send( 'linked' );`, []string{"linked"}},
		{"parent theme functions.php", `parentt_send( 'parent' );`, []string{"theme:parentt"}},
		{"child theme functions.php through a symlink", `childt_send( 'child' );`, []string{"theme:childt"}},
		{"child theme include", `childt_inc_send( 'child inc' );`, []string{"theme:childt"}},
		{"WordPress core: new user notification", `wp_new_user_notification( $uid, null, 'both' );`, []string{"wordpress", "wordpress"}},
		{"WordPress core: password reset", `retrieve_password( 'srcuser' );`, []string{"wordpress"}},
		{"WordPress core mailing for a plugin", `core_caller_notify( $uid );`, []string{"core-caller"}},
		{"direct call outside any plugin", `wp_mail( 'src@example.com', 'script', 'body' );`, []string{"wordpress"}},
	}
	var php strings.Builder
	php.WriteString(`global $wpdb;
$uid = wp_insert_user( array( 'user_login' => 'srcuser', 'user_email' => 'srcuser@example.com', 'user_pass' => 'Secret-12345' ) );
if ( is_wp_error( $uid ) ) { wpsite_fail( $uid->get_error_message() ); }
$table = $wpdb->base_prefix . 'mailsvc_logs';
$out = array();
`)
	for _, c := range cases {
		php.WriteString("$before = (int) $wpdb->get_var( \"SELECT COALESCE( MAX( id ), 0 ) FROM $table\" );\n")
		php.WriteString(c.call + "\n")
		php.WriteString("$out[] = $wpdb->get_col( $wpdb->prepare( \"SELECT source FROM $table WHERE id > %d ORDER BY id\", $before ) );\n")
	}
	php.WriteString("echo wp_json_encode( array( 'theme' => get_stylesheet(), 'template' => get_template(), 'sources' => $out ) );\n")
	// The queue table is created by the service; here it is made from the
	// store's migrations.
	openStore(t, site)
	raw := site.PHP(t, php.String())
	var got struct {
		Theme, Template string
		Sources         [][]string
	}
	if err := json.Unmarshal([]byte(raw), &got); err != nil || len(got.Sources) != len(cases) {
		t.Fatalf("PHP output %q: %v", raw, err)
	}
	if got.Theme != "childt" || got.Template != "parentt" {
		t.Fatalf("active theme %s (template %s), want childt of parentt", got.Theme, got.Template)
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !slices.Equal(got.Sources[i], c.want) {
				t.Errorf("sources %q, want %q", got.Sources[i], c.want)
			}
		})
	}
}
