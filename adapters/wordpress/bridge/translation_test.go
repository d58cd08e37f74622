package bridge_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoticesTranslated: with the site's locale set and a translation of
// the text domain "mailsvc" in the bridge's languages/ folder, the
// bridge's notice is shown in that language, its count in the plural form
// the translation gives and its link inside the translated sentence; the
// same site without the translation shows the English text.
func TestNoticesTranslated(t *testing.T) {
	msgfmt, err := exec.LookPath("msgfmt")
	if err != nil {
		t.Skip("msgfmt (gettext) is not installed")
	}
	site, _ := bridgedSite(t, "wptr_")
	mu := filepath.Join(site.ContentDir, "mu-plugins")
	// A must-use plugin loaded before the bridge sets the locale.
	if err := os.WriteFile(filepath.Join(mu, "aaa-locale.php"), []byte("<?php\nadd_filter( 'pre_determine_locale', function () { return 'xx_XX'; } );\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	notice := func() string {
		t.Helper()
		out := site.PHP(t, `wp_mail( array( 'a@customer.example', 'b@customer.example' ), 'Order', 'Thanks' );
wp_mail( 'c@customer.example', 'Order', 'Thanks' );
global $wpdb;
$wpdb->query( "UPDATE {$wpdb->prefix}mailsvc_logs SET status = 'captured'" );
require_once ABSPATH . 'wp-admin/includes/class-wp-screen.php';
require_once ABSPATH . 'wp-admin/includes/screen.php';
wp_set_current_user( 1 );
set_current_screen( 'dashboard' );
ob_start();
do_action( 'admin_notices' );
echo wp_json_encode( array( 'locale' => determine_locale(), 'html' => ob_get_clean() ) );
$wpdb->query( "DELETE FROM {$wpdb->prefix}mailsvc_logs" );`)
		var got struct{ Locale, HTML string }
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("PHP output %q: %v", out, err)
		}
		if got.Locale != "xx_XX" {
			t.Fatalf("locale %q, want xx_XX", got.Locale)
		}
		return got.HTML
	}

	if html := notice(); !strings.Contains(html, "2 messages are held, not sent.") || !strings.Contains(html, ">Open Mail</a> to release them") {
		t.Fatalf("without a translation, the notice is not the English one:\n%s", html)
	}

	// A translation with three plural forms, so that a count the English
	// text would glue ("messages are") cannot pass for the translated one.
	po := `msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\n"
"Plural-Forms: nplurals=3; plural=(n==1 ? 0 : n==2 ? 1 : 2);\n"

msgid "%s message is held, not sent."
msgid_plural "%s messages are held, not sent."
msgstr[0] "Eine Nachricht (%s) wird gehalten."
msgstr[1] "Zwei Nachrichten (%s) werden gehalten."
msgstr[2] "%s Nachrichten werden gehalten."

msgid "Open Mail"
msgstr "Mail öffnen"

msgid "%s to release them, or to record this site as the live one."
msgstr "Unter %s geben Sie sie frei."
`
	languages := filepath.Join(mu, "mailsvc-bridge", "languages")
	poFile := filepath.Join(t.TempDir(), "mailsvc-xx_XX.po")
	if err := os.WriteFile(poFile, []byte(po), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(msgfmt, "-o", filepath.Join(languages, "mailsvc-xx_XX.mo"), poFile).CombinedOutput(); err != nil {
		t.Fatalf("msgfmt: %v\n%s", err, out)
	}
	html := notice()
	for _, want := range []string{"Zwei Nachrichten (2) werden gehalten.", `">Mail öffnen</a> geben Sie sie frei.`, "Unter <a href="} {
		if !strings.Contains(html, want) {
			t.Errorf("the translated notice lacks %q:\n%s", want, html)
		}
	}
	if strings.Contains(html, "held, not sent") || strings.Contains(html, "Open Mail") {
		t.Errorf("the notice keeps English words:\n%s", html)
	}
}
