package bridge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/wordpress/bridge"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/rawmime"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// TestBridgeEmbedsMatchCore makes the same wp_mail() calls with $embeds,
// under the same wp_mail and wp_mail_embed_args filters, first with
// WordPress's own wp_mail() and then with the bridge's, on a site whose
// WordPress has embeds (6.9 or later; skipped before): the parts the
// bridge queues are those PHPMailer writes for core (name, type,
// inline or not, Content-ID, bytes), and the wp_mail filter's $atts and
// wp_mail_failed's / wp_mail_succeeded's $mail_data carry the same keys
// and the same embeds.
func TestBridgeEmbedsMatchCore(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	site := wpsite.Install(t, wpsite.Options{Prefix: "wpk_"})
	if n := strings.TrimSpace(site.PHP(t, `echo ( new ReflectionFunction( 'wp_mail' ) )->getNumberOfParameters();`)); n != "6" {
		t.Skipf("WordPress's wp_mail() here has %s parameters: no $embeds before 6.9", n)
	}
	ctx := context.Background()
	db, err := store.Open(ctx, "mysql:"+site.DSN, site.Prefix, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })

	files := map[string][]byte{
		"logo.png":  append([]byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0xff}, bytes.Repeat([]byte{3, '\n', 0}, 200)...),
		"photo.jpg": append([]byte{0xff, 0xd8, 0xff, 0xe0, 0, '\r', '\n', '.'}, bytes.Repeat([]byte{7, 0, 0xfe}, 300)...),
		"doc.pdf":   []byte("%PDF-1.4\x00\xff"),
	}
	path := map[string]string{}
	for name, b := range files {
		path[name] = filepath.Join(site.Dir, name)
		if err := os.WriteFile(path[name], b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p := func(name string) string { return wpsite.PHPString(path[name]) }
	html := `array( 'Content-Type: text/html; charset=UTF-8' )`
	calls := `$seen = array();
add_filter( 'wp_mail', function ( $atts ) use ( &$seen ) {
	$seen[ $atts['subject'] ]['atts_keys'] = array_keys( $atts );
	if ( 'added by filter' === $atts['subject'] ) {
		$atts['embeds']['banner'] = ` + p("photo.jpg") + `;
	}
	if ( 'removed by filter' === $atts['subject'] ) {
		unset( $atts['embeds']['logo'] );
	}
	if ( 'string by filter' === $atts['subject'] ) {
		$atts['embeds'] = ` + p("logo.png") + ` . "\n" . ` + p("photo.jpg") + `;
	}
	return $atts;
} );
add_filter( 'wp_mail_embed_args', function ( $args ) {
	switch ( $args['cid'] ) {
		case 'logo': $args['cid'] = 'brand-logo'; $args['name'] = 'brand.png'; break;
		case 'as-file': $args['disposition'] = 'attachment'; break;
		case 'odd': $args['disposition'] = 'other'; break;
		case 'bad-encoding': $args['encoding'] = 'uuencode'; break;
		case 'typed': $args['type'] = 'image/x-custom'; break;
		case 'dup2': $args['cid'] = 'dup'; break;
		case 'unnamed': $args['name'] = ''; break;
		case 'qp': $args['encoding'] = 'quoted-printable'; break;
	}
	return $args;
} );
$record = function ( $data ) use ( &$seen ) {
	unset( $data['phpmailer_exception_code'] );
	$seen[ $data['subject'] ]['mail_data_keys'] = array_keys( $data );
	$seen[ $data['subject'] ]['embeds'] = isset( $data['embeds'] ) ? $data['embeds'] : null;
};
add_action( 'wp_mail_succeeded', $record );
add_action( 'wp_mail_failed', function ( $e ) use ( $record ) { $record( $e->get_error_data() ); } );
$r = array();
$r[] = wp_mail( 'to@example.com', 'added by filter', '<img src="cid:brand-logo"><img src="cid:banner">', ` + html + `, array(), array( 'logo' => ` + p("logo.png") + ` ) );
$r[] = wp_mail( 'to@example.com', 'a list', 'x', ` + html + `, array(), array( ` + p("logo.png") + `, ` + p("photo.jpg") + ` ) );
$r[] = wp_mail( 'to@example.com', 'a string', 'x', ` + html + `, '', ` + p("logo.png") + ` . "\r\n" . ` + p("photo.jpg") + ` );
$r[] = wp_mail( 'to@example.com', 'removed by filter', 'x', ` + html + `, array(), array( 'logo' => ` + p("logo.png") + `, 'other' => ` + p("photo.jpg") + ` ) );
$r[] = wp_mail( 'to@example.com', 'string by filter', 'x', ` + html + `, array(), array() );
$r[] = wp_mail( 'to@example.com', 'rules', 'x', ` + html + `, array( ` + p("doc.pdf") + ` ), array( 'as-file' => ` + p("logo.png") + `, 'odd' => ` + p("logo.png") + `, 'bad-encoding' => ` + p("logo.png") + `, 'missing' => '/nonexistent/x.png', 'typed' => ` + p("photo.jpg") + `, 'dup' => ` + p("logo.png") + `, 'dup2' => ` + p("photo.jpg") + `, 'unnamed' => ` + p("photo.jpg") + `, 'qp' => ` + p("doc.pdf") + ` ) );
$r[] = wp_mail( 'to@example.com', 'plain text', 'x', '', array(), array( 'logo' => ` + p("logo.png") + ` ) );
$r[] = wp_mail( 'to@example.com', 'five arguments', 'x' );
`
	type seen struct {
		AttsKeys     []string        `json:"atts_keys"`
		MailDataKeys []string        `json:"mail_data_keys"`
		Embeds       json.RawMessage `json:"embeds"`
	}
	type part struct {
		Name, Type, CID string
		Inline          bool
		Data            []byte
	}
	sortParts := func(ps []part) {
		slices.SortStableFunc(ps, func(a, b part) int {
			if a.Inline != b.Inline {
				if a.Inline {
					return -1
				}
				return 1
			}
			return 0
		})
	}
	subjects := []string{"added by filter", "a list", "a string", "removed by filter", "string by filter", "rules", "plain text", "five arguments"}

	// Core: PHPMailer's message is taken whole in phpmailer_init (then the
	// send fails at a closed port, so wp_mail_failed reports mail_data).
	raw := site.PHP(t, `$mime = array();
add_action( 'phpmailer_init', function ( $phpmailer ) use ( &$mime ) {
	$phpmailer->preSend();
	$mime[ $phpmailer->Subject ] = base64_encode( $phpmailer->getSentMIMEMessage() );
	$phpmailer->isSMTP();
	$phpmailer->Host = '127.0.0.1';
	$phpmailer->Port = 1;
	$phpmailer->SMTPAutoTLS = false;
}, 1000 );
`+calls+`echo wp_json_encode( array( 'seen' => $seen, 'mime' => $mime ) );`)
	var coreOut struct {
		Seen map[string]seen
		Mime map[string][]byte
	}
	if err := json.Unmarshal([]byte(raw), &coreOut); err != nil {
		t.Fatalf("core run output %q: %v", raw, err)
	}
	coreParts := map[string][]part{}
	for _, s := range subjects {
		if s == "five arguments" {
			continue
		}
		m, err := rawmime.Parse(coreOut.Mime[s])
		if err != nil {
			t.Fatalf("core's %q: %v\n%s", s, err, coreOut.Mime[s])
		}
		for _, a := range m.Attachments {
			coreParts[s] = append(coreParts[s], part{a.Filename, a.ContentType, a.ContentID, a.Inline, a.Data})
		}
		sortParts(coreParts[s])
	}

	// The bridge: the same calls, queued.
	if _, err := bridge.Install(site.ContentDir); err != nil {
		t.Fatal(err)
	}
	raw = site.PHP(t, calls+`echo wp_json_encode( array( 'seen' => $seen, 'results' => $r ) );`)
	var bridgeOut struct {
		Seen    map[string]seen
		Results []bool
	}
	if err := json.Unmarshal([]byte(raw), &bridgeOut); err != nil {
		t.Fatalf("bridge run output %q: %v", raw, err)
	}
	logs, _, err := db.Logs().FindLogs(ctx, core.LogFilter{})
	if err != nil {
		t.Fatal(err)
	}
	bySubject := map[string]int64{}
	for _, l := range logs {
		bySubject[l.Message.Subject] = l.ID
	}
	for _, s := range subjects {
		t.Run(s, func(t *testing.T) {
			c, b := coreOut.Seen[s], bridgeOut.Seen[s]
			if !slices.Equal(c.AttsKeys, b.AttsKeys) || !slices.Equal(c.MailDataKeys, b.MailDataKeys) {
				t.Errorf("keys: core $atts %v, $mail_data %v; bridge %v, %v", c.AttsKeys, c.MailDataKeys, b.AttsKeys, b.MailDataKeys)
			}
			if string(c.Embeds) != string(b.Embeds) {
				t.Errorf("mail_data embeds: core %s, bridge %s", c.Embeds, b.Embeds)
			}
			if s == "five arguments" {
				return
			}
			id, ok := bySubject[s]
			if !ok {
				t.Fatal("not queued")
			}
			l, err := db.Logs().FindLogByID(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			var got []part
			for _, a := range l.Message.Attachments {
				got = append(got, part{a.Filename, a.ContentType, a.ContentID, a.Inline, a.Data})
			}
			sortParts(got)
			want := coreParts[s]
			// What core wrote, as counted by hand: the test compares
			// something.
			if n := map[string]int{"added by filter": 2, "a list": 2, "a string": 2, "removed by filter": 1, "string by filter": 2, "rules": 6, "plain text": 1}[s]; len(want) != n {
				t.Errorf("core's PHPMailer wrote %d parts, want %d", len(want), n)
			}
			if !slices.EqualFunc(got, want, func(a, b part) bool {
				return a.Name == b.Name && a.Type == b.Type && a.CID == b.CID && a.Inline == b.Inline && bytes.Equal(a.Data, b.Data)
			}) {
				show := func(ps []part) string {
					var out []string
					for _, x := range ps {
						out = append(out, strings.Join([]string{x.Name, x.Type, "cid=" + x.CID, map[bool]string{true: "inline", false: "attachment"}[x.Inline], strconv.Itoa(len(x.Data)) + " bytes"}, " "))
					}
					return strings.Join(out, "\n")
				}
				t.Errorf("bridge queued:\n%s\ncore's PHPMailer wrote:\n%s", show(got), show(want))
			}
		})
	}
}
