package bridge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// TestBridgeEmbeds calls the bridge's wp_mail() in a real WordPress site
// with WordPress 6.9's sixth argument, $embeds, and checks what it queues
// and what the filters and wp_mail_succeeded see, case by case, against
// core's wp_mail() (wp-includes/pluggable.php, 6.9): a list's keys and a
// string's lines are the Content-IDs, wp_mail_embed_args renames or
// changes each, a wp_mail filter adds or removes them, PHPMailer's rules
// leave some out, and a five-argument call on WordPress before 6.9 sees
// no `embeds` anywhere.
func TestBridgeEmbeds(t *testing.T) {
	site, db := bridgedSite(t, "wpe_")
	ctx := context.Background()
	logo := bytes.Repeat([]byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0xff}, 50)
	photo := append([]byte{0xff, 0xd8, 0xff, 0xe0, 0, '\r', '\n', '.'}, bytes.Repeat([]byte{7, 0, 0xfe}, 300)...)
	logoPath, photoPath := filepath.Join(site.Dir, "logo.png"), filepath.Join(site.Dir, "photo.jpg")
	for p, b := range map[string][]byte{logoPath: logo, photoPath: photo} {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	lp, pp := wpsite.PHPString(logoPath), wpsite.PHPString(photoPath)

	// Filters keyed on the subject; each records what it saw.
	php := `$seen = array();
add_filter( 'wp_mail', function ( $atts ) use ( &$seen ) {
	$seen[ $atts['subject'] ]['atts_keys'] = array_keys( $atts );
	if ( 'added by filter' === $atts['subject'] ) {
		$atts['embeds']['banner'] = ` + pp + `;
	}
	if ( 'removed by filter' === $atts['subject'] ) {
		$atts['embeds'] = array();
	}
	return $atts;
} );
add_filter( 'wp_mail_embed_args', function ( $args ) use ( &$seen ) {
	$seen['embed_args'][] = $args;
	if ( 'logo' === $args['cid'] ) {
		$args['cid']  = 'brand-logo';
		$args['name'] = 'brand.png';
	}
	if ( 'as-file' === $args['cid'] ) {
		$args['disposition'] = 'attachment';
	}
	if ( 'odd' === $args['cid'] ) {
		$args['disposition'] = 'other';
	}
	if ( 'bad-encoding' === $args['cid'] ) {
		$args['encoding'] = 'uuencode';
	}
	if ( 'dup2' === $args['cid'] ) {
		$args['cid'] = 'dup';
	}
	if ( 'typed' === $args['cid'] ) {
		$args['type'] = 'image/x-custom';
	}
	return $args;
} );
add_action( 'wp_mail_succeeded', function ( $data ) use ( &$seen ) {
	$seen[ $data['subject'] ]['mail_data_keys'] = array_keys( $data );
	$seen[ $data['subject'] ]['embeds'] = isset( $data['embeds'] ) ? $data['embeds'] : null;
} );
$html = array( 'Content-Type: text/html; charset=UTF-8' );
$r = array();
$r[] = wp_mail( 'to@example.com', 'added by filter', '<img src="cid:brand-logo"><img src="cid:banner">', $html, array(), array( 'logo' => ` + lp + ` ) );
$r[] = wp_mail( 'to@example.com', 'a list', 'x', $html, array(), array( ` + lp + `, ` + pp + ` ) );
$r[] = wp_mail( 'to@example.com', 'a string', 'x', $html, '', ` + lp + ` . "\r\n" . ` + pp + ` );
$r[] = wp_mail( 'to@example.com', 'removed by filter', 'x', $html, array(), array( 'logo' => ` + lp + ` ) );
$r[] = wp_mail( 'to@example.com', 'rules', 'x', $html, array( ` + pp + ` ), array( 'as-file' => ` + lp + `, 'odd' => ` + lp + `, 'bad-encoding' => ` + lp + `, 'missing' => '/nonexistent/x.png', 'typed' => ` + pp + `, 'dup' => ` + lp + ` ) + array( 'dup2' => ` + pp + ` ) );
$r[] = wp_mail( 'to@example.com', 'five arguments', 'x' );
$core69 = version_compare( $GLOBALS['wp_version'], '6.9-alpha', '>=' );
$GLOBALS['wp_version'] = '6.9';
$r[] = wp_mail( 'to@example.com', 'five arguments on 6.9', 'x' );
echo wp_json_encode( array( 'results' => $r, 'seen' => $seen, 'core69' => $core69 ) );
`
	raw := site.PHP(t, php)
	var out struct {
		Results []bool `json:"results"`
		Seen    map[string]json.RawMessage
		Core69  bool // the site runs WordPress 6.9 or later
	}
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		t.Fatalf("PHP output %q: %v", raw, err)
	}
	for i, r := range out.Results {
		if !r {
			t.Errorf("wp_mail() call %d returned false", i)
		}
	}
	type seen struct {
		AttsKeys     []string        `json:"atts_keys"`
		MailDataKeys []string        `json:"mail_data_keys"`
		Embeds       json.RawMessage `json:"embeds"`
	}
	seenOf := func(subject string) seen {
		var s seen
		if err := json.Unmarshal(out.Seen[subject], &s); err != nil {
			t.Fatalf("seen[%q] = %s: %v", subject, out.Seen[subject], err)
		}
		return s
	}
	logs, _, err := db.Logs().FindLogs(ctx, core.LogFilter{})
	if err != nil {
		t.Fatal(err)
	}
	bySubject := map[string]*core.Log{}
	for _, l := range logs {
		bySubject[l.Message.Subject] = l
	}
	type part struct {
		name, ctype, cid string
		inline           bool
		data             []byte
	}
	check := func(t *testing.T, subject string, want []part) {
		t.Helper()
		l := bySubject[subject]
		if l == nil {
			t.Fatalf("%q not queued", subject)
		}
		full, err := db.Logs().FindLogByID(ctx, l.ID)
		if err != nil {
			t.Fatal(err)
		}
		got := full.Message.Attachments
		if len(got) != len(want) {
			t.Fatalf("%d parts %+v, want %d", len(got), got, len(want))
		}
		for i, w := range want {
			g := got[i]
			if g.Filename != w.name || g.ContentType != w.ctype || g.ContentID != w.cid || g.Inline != w.inline || !bytes.Equal(g.Data, w.data) {
				t.Errorf("part %d = %s %s cid=%q inline=%v %d bytes, want %s %s cid=%q inline=%v %d bytes",
					i, g.Filename, g.ContentType, g.ContentID, g.Inline, len(g.Data), w.name, w.ctype, w.cid, w.inline, len(w.data))
			}
		}
	}

	t.Run("renamed by wp_mail_embed_args and added by a wp_mail filter", func(t *testing.T) {
		check(t, "added by filter", []part{
			{"brand.png", "image/png", "brand-logo", true, logo},
			{"photo.jpg", "image/jpeg", "banner", true, photo},
		})
		s := seenOf("added by filter")
		if strings.Join(s.AttsKeys, ",") != "to,subject,message,headers,attachments,embeds" {
			t.Errorf("the wp_mail filter saw %v", s.AttsKeys)
		}
		if strings.Join(s.MailDataKeys, ",") != "to,subject,message,headers,attachments,embeds" {
			t.Errorf("wp_mail_succeeded's mail_data has %v", s.MailDataKeys)
		}
		var embeds map[string]string
		if err := json.Unmarshal(s.Embeds, &embeds); err != nil || embeds["logo"] != logoPath || embeds["banner"] != photoPath || len(embeds) != 2 {
			t.Errorf("mail_data embeds = %s, want logo and banner (the filter's) by path", s.Embeds)
		}
	})
	t.Run("a list's keys are the Content-IDs", func(t *testing.T) {
		check(t, "a list", []part{
			{"logo.png", "image/png", "0", true, logo},
			{"photo.jpg", "image/jpeg", "1", true, photo},
		})
		var embeds []string
		if err := json.Unmarshal(seenOf("a list").Embeds, &embeds); err != nil || len(embeds) != 2 {
			t.Errorf("mail_data embeds = %s", seenOf("a list").Embeds)
		}
	})
	t.Run("a string is one path a line", func(t *testing.T) {
		check(t, "a string", []part{
			{"logo.png", "image/png", "0", true, logo},
			{"photo.jpg", "image/jpeg", "1", true, photo},
		})
		var embeds []string
		if err := json.Unmarshal(seenOf("a string").Embeds, &embeds); err != nil || len(embeds) != 2 || embeds[0] != logoPath || embeds[1] != photoPath {
			t.Errorf("mail_data embeds = %s, want the two paths as a list", seenOf("a string").Embeds)
		}
	})
	t.Run("removed by a wp_mail filter", func(t *testing.T) {
		check(t, "removed by filter", nil)
	})
	t.Run("PHPMailer's rules", func(t *testing.T) {
		// The attachment first; "as-file" becomes an attachment without a
		// Content-ID; "odd" (a disposition PHPMailer never writes),
		// "bad-encoding" and "missing" are left out; "typed" keeps the
		// filter's type; "dup2", renamed to "dup", a Content-ID already
		// used, is left out as PHPMailer leaves it out.
		check(t, "rules", []part{
			{"photo.jpg", "image/jpeg", "", false, photo},
			{"logo.png", "image/png", "", false, logo},
			{"photo.jpg", "image/x-custom", "typed", true, photo},
			{"logo.png", "image/png", "dup", true, logo},
		})
	})
	t.Run("wp_mail_embed_args gets core's defaults", func(t *testing.T) {
		var args []map[string]string
		if err := json.Unmarshal(out.Seen["embed_args"], &args); err != nil || len(args) == 0 {
			t.Fatalf("embed args %s: %v", out.Seen["embed_args"], err)
		}
		want := map[string]string{"path": logoPath, "cid": "logo", "name": "logo.png", "encoding": "base64", "type": "", "disposition": "inline"}
		if len(args[0]) != len(want) {
			t.Errorf("first embed args = %v, want %v", args[0], want)
		}
		for k, v := range want {
			if args[0][k] != v {
				t.Errorf("first embed args[%s] = %q, want %q", k, args[0][k], v)
			}
		}
	})
	t.Run("a five-argument call before 6.9 sees no embeds", func(t *testing.T) {
		want := "to,subject,message,headers,attachments"
		if out.Core69 {
			want += ",embeds" // this site runs 6.9 or later
		}
		s := seenOf("five arguments")
		if strings.Join(s.AttsKeys, ",") != want || strings.Join(s.MailDataKeys, ",") != want {
			t.Errorf("the wp_mail filter saw %v, wp_mail_succeeded %v; want %s", s.AttsKeys, s.MailDataKeys, want)
		}
		check(t, "five arguments", nil)
	})
	t.Run("a five-argument call on 6.9 carries embeds as core does", func(t *testing.T) {
		s := seenOf("five arguments on 6.9")
		if strings.Join(s.AttsKeys, ",") != "to,subject,message,headers,attachments,embeds" || strings.Join(s.MailDataKeys, ",") != "to,subject,message,headers,attachments,embeds" {
			t.Errorf("the wp_mail filter saw %v, wp_mail_succeeded %v; want embeds last", s.AttsKeys, s.MailDataKeys)
		}
		if string(s.Embeds) != "[]" {
			t.Errorf("mail_data embeds = %s, want []", s.Embeds)
		}
	})
}

// TestBridgeEmbedStreamWrapper checks that an embed naming a stream
// wrapper (here set by wp_mail_embed_args) fails the message as an
// attachment does, with wp_mail_failed carrying the embeds.
func TestBridgeEmbedStreamWrapper(t *testing.T) {
	site, db := bridgedSite(t, "wpf_")
	local := filepath.Join(site.Dir, "logo.png")
	if err := os.WriteFile(local, []byte("png"), 0o600); err != nil {
		t.Fatal(err)
	}
	raw := site.PHP(t, `add_filter( 'wp_mail_embed_args', function ( $args ) { $args['path'] = 'phar://'. $args['path'] . '/x.png'; return $args; } );
add_action( 'wp_mail_failed', function ( $e ) use ( &$failed ) { $failed = array( 'message' => $e->get_error_message(), 'embeds' => $e->get_error_data()['embeds'] ); } );
$r = wp_mail( 'to@example.com', 'wrapped', '<img src="cid:logo">', 'Content-Type: text/html', array(), array( 'logo' => `+wpsite.PHPString(local)+` ) );
echo wp_json_encode( array( 'result' => $r, 'failed' => $failed ) );`)
	var out struct {
		Result bool
		Failed struct {
			Message string
			Embeds  map[string]string
		}
	}
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		t.Fatalf("PHP output %q: %v", raw, err)
	}
	if out.Result || !strings.HasPrefix(out.Failed.Message, "Could not access file: phar://"+local+"/x.png ") || out.Failed.Embeds["logo"] != local {
		t.Errorf("wp_mail() = %v, wp_mail_failed %+v; want false and the phar:// path named, embeds in its data", out.Result, out.Failed)
	}
	logs, _, err := db.Logs().FindLogs(context.Background(), core.LogFilter{})
	if err != nil || len(logs) != 0 {
		t.Errorf("queued %d logs (%v), want none", len(logs), err)
	}
}
