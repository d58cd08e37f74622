package takeover

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/test/fakes/rawmime"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// TestEmbedsOnWordPress sends an HTML mail with WordPress 6.9's $embeds
// from a real WordPress site through the bridge, the queue and the SMTP
// driver to a sink: one image passed to wp_mail() and renamed by a
// wp_mail_embed_args filter, one added by a wp_mail filter. Both arrive as
// inline parts of a multipart/related around the HTML, byte for byte,
// with the Content-IDs the HTML refers to; wp_mail_succeeded's mail_data
// carries the embeds; the log lists them as inline images with their
// previews; a resend delivers them again.
func TestEmbedsOnWordPress(t *testing.T) {
	site := installBridgeSite(t, wpsite.Options{Prefix: "wpm_"})
	logoPath, photoPath := filepath.Join(site.Dir, "logo.png"), filepath.Join(site.Dir, "photo.jpg")
	logo, photo := randomFile(t, logoPath, 3000), randomFile(t, photoPath, 70000)
	plugin := `<?php
add_filter( 'wp_mail_embed_args', function ( $args ) {
	if ( 'logo' === $args['cid'] ) {
		$args['cid']  = 'brand-logo';
		$args['name'] = 'brand.png';
	}
	return $args;
} );
add_filter( 'wp_mail', function ( $atts ) {
	if ( 'Your order, with pictures' === $atts['subject'] ) {
		$atts['embeds']['banner'] = ` + wpsite.PHPString(photoPath) + `;
	}
	return $atts;
} );
`
	if err := os.WriteFile(filepath.Join(site.ContentDir, "mu-plugins", "embeds.php"), []byte(plugin), 0o644); err != nil {
		t.Fatal(err)
	}
	sink := smtpsink.Start(t)
	dir := t.TempDir()
	svc, pass := serveSite(t, site, dir, "embeds test")
	user := site.AdminLogin
	api := func(method, path, body string, want int, v any) {
		t.Helper()
		callWant(t, method, svc.Base+path, body, user, pass, want, v)
	}
	// The log keeps the files' bytes, so that the log can be resent.
	deliverToSink(t, svc.Base, user, pass, sink, `"log_attachments":true`)

	const subject = "Your order, with pictures"
	html := `<p><img src="cid:brand-logo" alt="Logo"></p><p><img src="cid:banner" alt="Banner"></p>`
	raw := site.PHP(t, `add_action( 'wp_mail_succeeded', function ( $data ) use ( &$embeds ) { $embeds = $data['embeds']; } );
$r = wp_mail( 'buyer@example.com', `+wpsite.PHPString(subject)+`, `+wpsite.PHPString(html)+`, array( 'Content-Type: text/html; charset=UTF-8' ), array(), array( 'logo' => `+wpsite.PHPString(logoPath)+` ) );
echo wp_json_encode( array( 'result' => $r, 'embeds' => $embeds ) );`)
	var out struct {
		Result bool
		Embeds map[string]string
	}
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		t.Fatalf("PHP output %q: %v", raw, err)
	}
	if !out.Result || len(out.Embeds) != 2 || out.Embeds["logo"] != logoPath || out.Embeds["banner"] != photoPath {
		t.Fatalf("wp_mail() = %v, wp_mail_succeeded's embeds %v; want true and logo and banner by path", out.Result, out.Embeds)
	}

	check := func(t *testing.T, data []byte) {
		t.Helper()
		m, err := rawmime.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"multipart/related", "text/html", "image/png", "image/jpeg"}; !slices.Equal(m.ContentTypes, want) {
			t.Errorf("parts %v, want %v", m.ContentTypes, want)
		}
		if m.HTML != html {
			t.Errorf("html = %q, want %q", m.HTML, html)
		}
		if len(m.Attachments) != 2 {
			t.Fatalf("%d attachments, want the two inline images:\n%s", len(m.Attachments), data)
		}
		for i, want := range []struct {
			name, cid, ctype string
			data             []byte
		}{{"brand.png", "brand-logo", "image/png", logo}, {"photo.jpg", "banner", "image/jpeg", photo}} {
			a := m.Attachments[i]
			if a.Filename != want.name || a.ContentID != want.cid || a.ContentType != want.ctype || !a.Inline || !bytes.Equal(a.Data, want.data) {
				t.Errorf("part %d = %s cid=%q %s inline=%v %d bytes, want %s cid=%q %s inline, the file's %d bytes",
					i, a.Filename, a.ContentID, a.ContentType, a.Inline, len(a.Data), want.name, want.cid, want.ctype, len(want.data))
			}
		}
		// Field names are case-insensitive (go-mail writes Content-Id).
		if lower := bytes.ToLower(data); !bytes.Contains(lower, []byte("content-id: <brand-logo>\r\n")) || !bytes.Contains(lower, []byte("content-id: <banner>\r\n")) {
			t.Errorf("the Content-ID fields are not <brand-logo> and <banner>:\n%s", data)
		}
	}
	got, err := sink.WaitFor(1, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	check(t, got[0].Data)

	// The log: delivered, the two files listed as inline images.
	type attachment struct {
		Filename    string `json:"filename"`
		ContentType string `json:"content_type"`
		Size        int    `json:"size"`
		Inline      bool   `json:"inline"`
		ContentID   string `json:"content_id"`
		Preview     string `json:"preview"`
	}
	var detail struct {
		ID          int64        `json:"id"`
		Status      string       `json:"status"`
		Attachments []attachment `json:"attachments"`
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var list []struct {
			ID int64 `json:"id"`
		}
		api("GET", "/logs?search="+url.QueryEscape(subject), "", 200, &list)
		if len(list) == 1 {
			api("GET", fmt.Sprintf("/logs/%d", list[0].ID), "", 200, &detail)
			if detail.Status == "delivered" {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no delivered log: %+v", detail)
		}
	}
	// The log kept the bytes (log_attachments): the detail gives each
	// image as a data: URI, which the logs screen's preview shows.
	wantAtt := []attachment{
		{"brand.png", "image/png", len(logo), true, "brand-logo", "data:image/png;base64," + base64.StdEncoding.EncodeToString(logo)},
		{"photo.jpg", "image/jpeg", len(photo), true, "banner", "data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(photo)},
	}
	if !slices.Equal(detail.Attachments, wantAtt) {
		t.Errorf("the log lists %.300v, want %.300v", detail.Attachments, wantAtt)
	}

	// A resend delivers both images again.
	api("POST", fmt.Sprintf("/logs/%d/resend", detail.ID), "", 200, nil)
	got, err = sink.WaitFor(2, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	check(t, got[1].Data)
}
