package admin

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/mailsvc/mailsvc/test/servicetest"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// TestLogShowsInlineImages queues, through the bridge, an HTML mail that
// embeds an image (WordPress 6.9's $embeds, its cid renamed by
// wp_mail_embed_args) on a site whose log keeps attachments, and opens
// the log in wp-admin's Mail page: the attachments table says "Inline
// image (cid:brand-logo)" and the sandboxed HTML preview has the image's
// bytes, as a data: URI, in place of its cid: reference.
func TestLogShowsInlineImages(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	s := startBridgeSite(t)
	if r := servicetest.Call(t, "PUT", s.restURL(false, "mailsvc/v1/settings", ""), `{"log_attachments":true}`, s.admin); r.Status != 200 {
		t.Fatalf("PUT settings: %d %s", r.Status, r.Body)
	}
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	img.Set(0, 0, color.RGBA{200, 30, 30, 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	logo := filepath.Join(s.site.Dir, "logo.png")
	if err := os.WriteFile(logo, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	s.site.PHP(t, `add_filter( 'wp_mail_embed_args', function ( $a ) { $a['cid'] = 'brand-logo'; return $a; } );
if ( ! wp_mail( 'reader@example.org', 'With a logo', '<p><img src="cid:brand-logo" alt="Logo"></p>', 'Content-Type: text/html', array(), array( 'logo' => `+wpsite.PHPString(logo)+` ) ) ) {
	wpsite_fail( 'wp_mail failed' );
}`)
	r := servicetest.Call(t, "GET", s.restURL(false, "mailsvc/v1/logs", "search=With+a+logo"), "", s.admin)
	var list []struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(r.Body, &list); err != nil || len(list) != 1 {
		t.Fatalf("GET logs: %d %s", r.Status, r.Body)
	}

	b := newBrowser(t)
	browserLogin(t, b, s.site, s.site.AdminLogin)
	b.run("open wp-admin's Mail page",
		chromedp.Navigate(s.site.SiteURL+"/wp-admin/admin.php?page=mailsvc"),
		chromedp.WaitVisible("iframe#mailsvc-screens", chromedp.ByQuery))
	b.run("wait for the screens", chromedp.Poll(`(() => { const d = document.querySelector("iframe#mailsvc-screens").contentDocument; return !!d && !!d.querySelector("nav a[data-screen=logs]"); })()`, nil, pollFast))
	b.eval(fmt.Sprintf(`(() => { document.querySelector("iframe#mailsvc-screens").contentWindow.location.hash = "#/logs/%d"; return true; })()`, list[0].ID), nil)
	want := `src="data:image/png;base64,` + base64.StdEncoding.EncodeToString(buf.Bytes()) + `"`
	b.run("the log shows the inline image", chromedp.Poll(`(() => {
		const d = document.querySelector("iframe#mailsvc-screens").contentDocument;
		const f = d && d.querySelector("iframe.body-frame");
		return !!f && d.body.innerText.includes("Inline image (cid:brand-logo)") && f.getAttribute("srcdoc").includes(`+jsString(want)+`);
	})()`, nil, pollFast))
	b.screenshot("log-inline-image")
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
