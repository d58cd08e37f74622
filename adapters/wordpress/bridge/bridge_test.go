package bridge_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/wordpress/bridge"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

func TestInstallAndRemove(t *testing.T) {
	content := t.TempDir()
	muPlugins := filepath.Join(content, "mu-plugins")
	// A file an earlier version shipped, which this one does not.
	stale := filepath.Join(muPlugins, bridge.DirName, "retired", "old.php")
	for i := range 2 { // a second install replaces the first
		path, err := bridge.Install(content)
		if err != nil {
			t.Fatalf("install %d: %v", i, err)
		}
		if path != filepath.Join(content, "mu-plugins", "mailsvc-bridge.php") {
			t.Fatalf("installed at %s", path)
		}
		for name, want := range bridge.Files() {
			got, err := os.ReadFile(filepath.Join(muPlugins, filepath.FromSlash(name)))
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("installed %s differs from the embedded source (%v)", name, err)
			}
		}
		if current, err := bridge.Current(content); !current || err != nil {
			t.Fatalf("Current after install = %v, %v", current, err)
		}
		if _, err := os.Stat(filepath.Dir(stale)); !os.IsNotExist(err) {
			t.Fatalf("install %d left an earlier version's folder: %v", i, err)
		}
		writeFiles(t, muPlugins, map[string]string{"mailsvc-bridge/retired/old.php": "<?php\n", "mailsvc-bridge/queue.php": "<?php\n// an older copy\n"})
		if current, err := bridge.Current(content); current || err != nil {
			t.Fatalf("Current with a changed file = %v, %v", current, err)
		}
	}
	if _, err := bridge.Install(content); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(muPlugins)
	if len(entries) != 3 || entries[0].Name() != bridge.CreatedMarker || entries[1].Name() != bridge.DirName || entries[2].Name() != bridge.FileName {
		t.Fatalf("mu-plugins holds %v, want the loader, its folder and the marker of a folder the install created", entries)
	}
	if len(bridge.Files()) < 10 || bridge.Files()[bridge.FileName] == nil {
		t.Fatalf("the bridge ships %d files", len(bridge.Files()))
	}
	for _, want := range []bool{true, false} {
		removed, err := bridge.Remove(content)
		if err != nil || removed != want {
			t.Fatalf("remove = %v, %v; want %v", removed, err, want)
		}
		for _, gone := range []string{bridge.Path(content), bridge.DirPath(content)} {
			if _, err := os.Stat(gone); !os.IsNotExist(err) {
				t.Fatalf("after remove, %s: %v", gone, err)
			}
		}
	}
	// A folder left without its loader is removed too.
	writeFiles(t, muPlugins, map[string]string{"mailsvc-bridge/queue.php": "<?php\n"})
	if removed, err := bridge.Remove(content); !removed || err != nil {
		t.Fatalf("remove of a folder alone = %v, %v", removed, err)
	}
	if _, err := bridge.Install(filepath.Join(content, "missing")); err == nil {
		t.Fatal("install into a missing content directory succeeded")
	}
	if !bytes.Contains(bridge.Files()["mailsvc-bridge/takeover.php"], []byte("function wp_mail( $to, $subject, $message, $headers = '', $attachments = array(), $embeds = array() )")) {
		t.Fatal("the bridge does not define wp_mail() with WordPress 6.9's signature")
	}
}

// TestMuPluginsFolderRemovedOnlyWhenOurs checks that uninstall removes a
// mu-plugins/ folder the install created once it is empty, and never one
// that was there before or holds another plugin.
func TestMuPluginsFolderRemovedOnlyWhenOurs(t *testing.T) {
	muPlugins := func(content string) string { return filepath.Join(content, "mu-plugins") }
	install := func(t *testing.T, content string) {
		t.Helper()
		if _, err := bridge.Install(content); err != nil {
			t.Fatal(err)
		}
		if _, err := bridge.Remove(content); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("created by the install", func(t *testing.T) {
		content := t.TempDir()
		install(t, content)
		if removed, err := bridge.RemoveCreatedDir(content); !removed || err != nil {
			t.Errorf("RemoveCreatedDir = %v, %v", removed, err)
		}
		if _, err := os.Stat(muPlugins(content)); !os.IsNotExist(err) {
			t.Errorf("mu-plugins is still there: %v", err)
		}
		if removed, err := bridge.RemoveCreatedDir(content); removed || err != nil {
			t.Errorf("RemoveCreatedDir without the folder = %v, %v", removed, err)
		}
	})
	t.Run("there before", func(t *testing.T) {
		content := t.TempDir()
		if err := os.Mkdir(muPlugins(content), 0o755); err != nil {
			t.Fatal(err)
		}
		install(t, content)
		if removed, err := bridge.RemoveCreatedDir(content); removed || err != nil {
			t.Errorf("RemoveCreatedDir = %v, %v", removed, err)
		}
		if entries, err := os.ReadDir(muPlugins(content)); err != nil || len(entries) != 0 {
			t.Errorf("the site's own mu-plugins: %v, %v", entries, err)
		}
	})
	t.Run("created, then another plugin added", func(t *testing.T) {
		content := t.TempDir()
		install(t, content)
		if err := os.WriteFile(filepath.Join(muPlugins(content), "other.php"), []byte("<?php\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if removed, err := bridge.RemoveCreatedDir(content); removed || err != nil {
			t.Errorf("RemoveCreatedDir = %v, %v", removed, err)
		}
		if _, err := os.Stat(filepath.Join(muPlugins(content), "other.php")); err != nil {
			t.Errorf("the other plugin: %v", err)
		}
	})
}

// randomBytes returns n random bytes that include every byte value a
// text-only path would damage (NUL, CR, LF, high bytes).
func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return append([]byte{0, '\r', '\n', 0xff, 0x80}, b...)
}

// bridgedSite installs a real WordPress site with the table prefix
// prefix and the bridge in its mu-plugins, and opens the Go store on its
// database (closed when the test ends). Not in -short mode.
func bridgedSite(t *testing.T, prefix string) (*wpsite.Site, *store.DB) {
	t.Helper()
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	site := wpsite.Install(t, wpsite.Options{Prefix: prefix})
	db, err := store.Open(context.Background(), "mysql:"+site.DSN, site.Prefix, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := bridge.Install(site.ContentDir); err != nil {
		t.Fatal(err)
	}
	return site, db
}

// TestBridgeRowsDecodeWithStore calls the bridge's wp_mail() in a real
// WordPress site and reads every queued row back through the Go store:
// the PHP encoding and the store's decoding must agree field by field.
func TestBridgeRowsDecodeWithStore(t *testing.T) {
	site, db := bridgedSite(t, "wpb_")
	ctx := context.Background()
	// A must-use plugin that sends mail, to be named as the source.
	acme := `<?php
function acme_notify( $to ) {
	return wp_mail( $to, 'from a plugin', 'plugin body' );
}
`
	if err := os.WriteFile(filepath.Join(site.ContentDir, "mu-plugins", "acme-notify.php"), []byte(acme), 0o644); err != nil {
		t.Fatal(err)
	}
	pdf, png := randomBytes(t, 3000), randomBytes(t, 1000)
	pdfPath, pngPath := filepath.Join(site.Dir, "report.pdf"), filepath.Join(site.Dir, "tmp-upload-x1")
	for p, b := range map[string][]byte{pdfPath: pdf, pngPath: png} {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	defaultFrom := core.Address{Name: "WordPress", Email: "wordpress@127.0.0.1"}

	cases := []struct {
		name   string
		call   string // PHP expression
		want   *core.Message
		result string // JSON of wp_mail()'s return value
		source string
		failed bool // wp_mail_failed fired
	}{
		{
			name: "plain", call: `wp_mail( 'one@example.com', 'plain', "hello\nworld" )`,
			want:   &core.Message{From: defaultFrom, To: []core.Address{{Email: "one@example.com"}}, Subject: "plain", Text: "hello\nworld"},
			result: "true", source: "wordpress",
		},
		{
			name: "html with from name, string headers",
			call: `wp_mail( 'Ann Example <ann@example.com>, bob@example.com', 'html', '<p>Hi</p>', "From: \"Site Team\" <team@example.com>\r\nContent-Type: text/html; charset=UTF-8\r\nX-Campaign: spring" )`,
			want: &core.Message{From: core.Address{Name: "Site Team", Email: "team@example.com"},
				To:      []core.Address{{Name: "Ann Example", Email: "ann@example.com"}, {Email: "bob@example.com"}},
				Subject: "html", HTML: "<p>Hi</p>", Headers: []core.Header{{Name: "X-Campaign", Value: "spring"}}},
			result: "true", source: "wordpress",
		},
		{
			name: "cc bcc reply-to, array headers and array to",
			call: `wp_mail( array( 'To One <to1@example.com>', 'to2@example.com' ), 'addresses', 'body', array( 'Cc: cc1@example.com, Cee Two <cc2@example.com>', 'Bcc: hidden@example.com', 'Reply-To: Replies <reply@example.com>', 'From: bare@example.com', 'X-Mailer: ignored', 'not a header' ) )`,
			want: &core.Message{From: core.Address{Name: "WordPress", Email: "bare@example.com"},
				To:      []core.Address{{Name: "To One", Email: "to1@example.com"}, {Email: "to2@example.com"}},
				Cc:      []core.Address{{Email: "cc1@example.com"}, {Name: "Cee Two", Email: "cc2@example.com"}},
				Bcc:     []core.Address{{Email: "hidden@example.com"}},
				ReplyTo: []core.Address{{Name: "Replies", Email: "reply@example.com"}},
				Subject: "addresses", Text: "body"},
			result: "true", source: "wordpress",
		},
		{
			name: "attachments, named key, newline string list and a missing file",
			call: `wp_mail( 'att@example.com', 'attachments', 'see files', '', array( ` + wpsite.PHPString(pdfPath) + `, 'photo.png' => ` + wpsite.PHPString(pngPath) + `, '/nonexistent/file.bin' ) )`,
			want: &core.Message{From: defaultFrom, To: []core.Address{{Email: "att@example.com"}}, Subject: "attachments", Text: "see files",
				Attachments: []core.Attachment{
					{Filename: "report.pdf", ContentType: "application/pdf", Data: pdf},
					{Filename: "photo.png", ContentType: "image/png", Data: png},
				}},
			result: "true", source: "wordpress",
		},
		{
			name: "attachments as a newline-separated string",
			call: `wp_mail( 'att2@example.com', 'attachment string', 'one file', '', ` + wpsite.PHPString(pdfPath+"\r\n") + ` )`,
			want: &core.Message{From: defaultFrom, To: []core.Address{{Email: "att2@example.com"}}, Subject: "attachment string", Text: "one file",
				Attachments: []core.Attachment{{Filename: "report.pdf", ContentType: "application/pdf", Data: pdf}}},
			result: "true", source: "wordpress",
		},
		{
			name: "wp_mail, wp_mail_from, wp_mail_from_name and wp_mail_content_type filters",
			call: `( function () {
				$f1 = function ( $atts ) { $atts['subject'] = 'filtered ' . $atts['subject']; $atts['to'] = 'filtered@example.com'; return $atts; };
				$f2 = function () { return 'filter-from@example.com'; };
				$f3 = function () { return 'Filtered Name'; };
				$f4 = function () { return 'text/html'; };
				add_filter( 'wp_mail', $f1 ); add_filter( 'wp_mail_from', $f2 ); add_filter( 'wp_mail_from_name', $f3 ); add_filter( 'wp_mail_content_type', $f4 );
				$r = wp_mail( 'orig@example.com', 'subject', '<b>x</b>' );
				remove_filter( 'wp_mail', $f1 ); remove_filter( 'wp_mail_from', $f2 ); remove_filter( 'wp_mail_from_name', $f3 ); remove_filter( 'wp_mail_content_type', $f4 );
				return $r;
			} )()`,
			want: &core.Message{From: core.Address{Name: "Filtered Name", Email: "filter-from@example.com"},
				To: []core.Address{{Email: "filtered@example.com"}}, Subject: "filtered subject", HTML: "<b>x</b>"},
			result: "true", source: "wordpress",
		},
		{
			name: "multipart alternative with a boundary",
			call: `wp_mail( 'multi@example.com', 'multipart', "--XYZ\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nplain caf=C3=A9\r\n--XYZ\r\nContent-Type: text/html; charset=UTF-8\r\nContent-Transfer-Encoding: base64\r\n\r\n` +
				`PHA+aHRtbDwvcD4=\r\n--XYZ--\r\n", array( 'Content-Type: multipart/alternative; boundary="XYZ"' ) )`,
			want:   &core.Message{From: defaultFrom, To: []core.Address{{Email: "multi@example.com"}}, Subject: "multipart", Text: "plain café", HTML: "<p>html</p>"},
			result: "true", source: "wordpress",
		},
		{
			name:   "latin-1 charset converted to UTF-8",
			call:   `wp_mail( 'latin@example.com', "caf\xe9", "na\xefve", 'Content-Type: text/plain; charset=ISO-8859-1' )`,
			want:   &core.Message{From: defaultFrom, To: []core.Address{{Email: "latin@example.com"}}, Subject: "café", Text: "naïve"},
			result: "true", source: "wordpress",
		},
		{
			name: "source is the calling plugin", call: `acme_notify( 'plugin@example.com' )`,
			want:   &core.Message{From: defaultFrom, To: []core.Address{{Email: "plugin@example.com"}}, Subject: "from a plugin", Text: "plugin body"},
			result: "true", source: "acme-notify",
		},
		{
			name: "pre_wp_mail short-circuits",
			call: `( function () {
				$f = function () { return 'short'; };
				add_filter( 'pre_wp_mail', $f );
				$r = wp_mail( 'never@example.com', 'never queued', 'x' );
				remove_filter( 'pre_wp_mail', $f );
				return $r;
			} )()`,
			result: `"short"`,
		},
		{
			name: "no valid recipient fails", call: `wp_mail( 'not an address, also@bad', 'never queued either', 'x' )`,
			result: "false", failed: true,
		},
		{
			name: "invalid from fails", call: `wp_mail( 'x@example.com', 'never queued either', 'x', 'From: nobody' )`,
			result: "false", failed: true,
		},
	}

	var php strings.Builder
	php.WriteString("$out = array();\n$failed = null;\nadd_action( 'wp_mail_failed', function ( $e ) use ( &$failed ) { $failed = $e->get_error_code() . ': ' . $e->get_error_message(); } );\n")
	for i, c := range cases {
		php.WriteString("$failed = null;\n")
		php.WriteString("$r = " + c.call + ";\n")
		php.WriteString("$out[] = array( 'result' => $r, 'failed' => $failed );\n")
		_ = i
	}
	php.WriteString("echo wp_json_encode( array( 'takeover' => defined( 'MAIL_SVC_WP_MAIL_TAKEOVER' ), 'calls' => $out ) );\n")
	raw := site.PHP(t, php.String())
	var got struct {
		Takeover bool `json:"takeover"`
		Calls    []struct {
			Result json.RawMessage `json:"result"`
			Failed *string         `json:"failed"`
		} `json:"calls"`
	}
	if err := json.Unmarshal([]byte(raw), &got); err != nil || len(got.Calls) != len(cases) {
		t.Fatalf("PHP output %q: %v", raw, err)
	}
	if !got.Takeover {
		t.Error("MAIL_SVC_WP_MAIL_TAKEOVER is not defined with the bridge installed")
	}

	logs, total, err := db.Logs().FindLogs(ctx, core.LogFilter{})
	if err != nil {
		t.Fatal(err)
	}
	bySubject := map[string]*core.Log{}
	for _, l := range logs {
		bySubject[l.Message.Subject] = l
	}
	queued := 0
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			call := got.Calls[i]
			if string(call.Result) != c.result {
				t.Errorf("wp_mail() returned %s, want %s", call.Result, c.result)
			}
			if (call.Failed != nil) != c.failed {
				t.Errorf("wp_mail_failed fired = %v (%v), want %v", call.Failed != nil, call.Failed, c.failed)
			}
			if c.failed && !strings.HasPrefix(*call.Failed, "wp_mail_failed: ") {
				t.Errorf("wp_mail_failed got %q, want a WP_Error with code wp_mail_failed", *call.Failed)
			}
			if c.want == nil {
				return
			}
			queued++
			l := bySubject[c.want.Subject]
			if l == nil {
				t.Fatalf("no queued log with subject %q", c.want.Subject)
			}
			if l.Status != core.StatusQueued || l.Source != c.source || l.Attempts != 0 || l.ConnectionID != nil {
				t.Errorf("log status %q source %q attempts %d connection %v; want queued, %q, 0, nil", l.Status, l.Source, l.Attempts, l.ConnectionID, c.source)
			}
			if l.NextAttemptAt.IsZero() || l.NextAttemptAt.After(l.CreatedAt) {
				t.Errorf("next_attempt_at %v is not due at creation %v", l.NextAttemptAt, l.CreatedAt)
			}
			if !reflect.DeepEqual(l.Message, *c.want) {
				t.Errorf("decoded message\n got %+v\nwant %+v", l.Message, *c.want)
			}
		})
	}
	if total != queued {
		t.Errorf("%d rows queued, want %d (short-circuited and failed calls must queue nothing)", total, queued)
	}
}

// TestBridgeIndexesRecipients: wp_mail() writes the recipients search rows
// right after the queued log, so a search by To, Cc or Bcc address finds it
// at once; without the recipients table wp_mail() still succeeds, and the
// service indexes that log when it claims it.
func TestBridgeIndexesRecipients(t *testing.T) {
	site, db := bridgedSite(t, "wpr_")
	ctx := context.Background()
	recipients := "`" + db.TableName("log_recipients") + "`"
	find := func(t *testing.T, address string) []string {
		t.Helper()
		logs, _, err := db.Logs().FindLogs(ctx, core.LogFilter{Search: address})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, l := range logs {
			out = append(out, l.Message.Subject)
		}
		return out
	}
	out := site.PHP(t, `echo wp_json_encode( wp_mail( 'To One <TO1@example.com>, to1@example.com', 'indexed', 'body', array( 'Cc: Cee <cc@example.com>', 'Bcc: hidden@example.com' ) ) );`)
	if out != "true" {
		t.Fatalf("wp_mail() = %s", out)
	}
	for _, address := range []string{"to1@example.com", "CC@example.com", "hidden@EXAMPLE.com"} {
		if got := find(t, address); !slices.Equal(got, []string{"indexed"}) {
			t.Errorf("search %s = %v before any claim, want [indexed]", address, got)
		}
	}
	var rows int
	if err := db.Gorm().Raw("SELECT COUNT(*) FROM " + recipients).Scan(&rows).Error; err != nil || rows != 4 {
		t.Fatalf("%d recipients rows (%v), want 4 (the repeated To address once, and the sender)", rows, err)
	}

	// Without the table (an older schema, a failing insert) the message is
	// still queued and wp_mail() still succeeds.
	if err := db.Gorm().Exec("RENAME TABLE " + recipients + " TO `wpr_recipients_away`").Error; err != nil {
		t.Fatal(err)
	}
	out = site.PHP(t, `echo wp_json_encode( wp_mail( 'late@example.com', 'unindexed', 'body' ) );`)
	if err := db.Gorm().Exec("RENAME TABLE `wpr_recipients_away` TO " + recipients).Error; err != nil {
		t.Fatal(err)
	}
	if out != "true" {
		t.Fatalf("wp_mail() without the recipients table = %s", out)
	}
	if got := find(t, "late@example.com"); len(got) != 0 {
		t.Fatalf("found %v before indexing", got)
	}
	claimed, err := db.Logs().ClaimLogs(ctx, "worker", 10, time.Minute)
	if err != nil || len(claimed) != 2 {
		t.Fatalf("claimed %d (%v), want 2", len(claimed), err)
	}
	if got := find(t, "late@example.com"); !slices.Equal(got, []string{"unindexed"}) {
		t.Fatalf("search after the claim = %v, want [unindexed]", got)
	}
}

func TestVersionAndInstalled(t *testing.T) {
	if v := bridge.Version(bridge.Source); v == "" || bridge.Version([]byte("<?php\n// nothing\n")) != "" {
		t.Fatalf("bridge.Version(bridge.Source) = %q", v)
	}
	dir := t.TempDir()
	if _, found, err := bridge.Installed(dir); found || err != nil {
		t.Fatalf("before install: found %v, %v", found, err)
	}
	if _, err := bridge.Install(dir); err != nil {
		t.Fatal(err)
	}
	src, found, err := bridge.Installed(dir)
	if !found || err != nil || bridge.Version(src) != bridge.Version(bridge.Source) {
		t.Fatalf("after install: %v, %v, version %q", found, err, bridge.Version(src))
	}
}
