package admin

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mailsvc/mailsvc/internal/testenv"
)

// stepTimeout bounds one browser step (a wait for an element included).
const stepTimeout = 30 * time.Second

// browser is one headless chromium tab.
type browser struct {
	t   *testing.T
	ctx context.Context
}

// chromiumPath finds Debian's chromium, or skips (fails in CI).
func chromiumPath(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testenv.Missing(t, "chromium is not installed (Debian package chromium)")
	return ""
}

// newBrowser starts headless chromium for the test and closes it at the end.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.NoSandbox, // CI runs as root
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf))
	if err := chromedp.Run(ctx); err != nil {
		cancel()
		cancelAlloc()
		t.Fatalf("start chromium: %v", err)
	}
	t.Cleanup(func() { cancel(); cancelAlloc() })
	return &browser{t: t, ctx: ctx}
}

// run runs actions as one step, failing the test with what and the page's
// text when they fail (a wait that times out included).
func (b *browser) run(what string, actions ...chromedp.Action) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, stepTimeout)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v\npage text:\n%s", what, err, b.text())
	}
}

// text returns the visible text of the page (for failure messages).
func (b *browser) text() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	var s string
	_ = chromedp.Run(ctx, chromedp.Evaluate(`document.body ? document.body.innerText : ""`, &s))
	return s
}

// textOf returns the text of the first element matching sel.
func (b *browser) textOf(sel string) string {
	b.t.Helper()
	var s string
	b.run("read "+sel, chromedp.WaitVisible(sel, chromedp.ByQuery), chromedp.Text(sel, &s, chromedp.ByQuery))
	return s
}

// eval evaluates a JavaScript expression into out.
func (b *browser) eval(expr string, out any) {
	b.t.Helper()
	b.run("evaluate "+expr, chromedp.Evaluate(expr, out))
}

var (
	shotsOnce sync.Once
	shotsDir  string
)

// screenshotDir is MAILSVC_SCREENSHOTS, else a fresh folder under the
// system's temporary directory; the test log names it.
func screenshotDir(t *testing.T) string {
	shotsOnce.Do(func() {
		shotsDir = os.Getenv("MAILSVC_SCREENSHOTS")
		if shotsDir == "" {
			d, err := os.MkdirTemp(os.TempDir(), "mailsvc-screens-")
			if err != nil {
				t.Fatal(err)
			}
			shotsDir = d
		} else if err := os.MkdirAll(shotsDir, 0o755); err != nil {
			t.Fatal(err)
		}
	})
	return shotsDir
}

// screenshot writes the whole page as name.png into the screenshot folder.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	var png []byte
	b.run("screenshot "+name, chromedp.FullScreenshot(&png, 100))
	path := filepath.Join(screenshotDir(b.t), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", path)
	b.labelled(name)
}

// labelled fails when a control on the page has no label a screen
// reader can announce.
func (b *browser) labelled(screen string) {
	b.t.Helper()
	var bare []string
	b.eval(`[...document.querySelectorAll("input, select, textarea, button")].filter((e) =>
		!(e.labels && e.labels.length) && !e.getAttribute("aria-label") && !e.getAttribute("aria-labelledby") &&
		!(e.tagName === "BUTTON" && e.textContent.trim())).map((e) => e.outerHTML.slice(0, 120))`, &bare)
	if len(bare) > 0 {
		b.t.Errorf("%s: controls without a label: %v", screen, bare)
	}
}

// hasNoRawJSON fails when the page shows an API answer as raw JSON.
func (b *browser) hasNoRawJSON() {
	b.t.Helper()
	if txt := b.text(); strings.Contains(txt, `{"code"`) || strings.Contains(txt, `"data":`) {
		b.t.Errorf("the page shows raw JSON:\n%s", txt)
	}
}

// fieldError is the selector of the error slot of the settings field key.
func fieldError(key string) string {
	return fmt.Sprintf(`.field[data-key=%q] .field-error`, key)
}

// show opens a screen by its address fragment (a same-page navigation).
func show(fragment string) chromedp.Action {
	return chromedp.Evaluate(fmt.Sprintf("location.hash = %q", fragment), nil)
}

// submit submits the form of the element sel as a person does (the submit
// event fires, with the form's submit button as the submitter).
func submit(sel string) chromedp.Action {
	return chromedp.Evaluate(fmt.Sprintf(`(() => { const f = document.querySelector(%q).form;
		f.requestSubmit(f.querySelector('[type="submit"]')); })()`, sel), nil)
}

// has reports whether an element matches sel now.
func (b *browser) has(sel string) bool {
	b.t.Helper()
	var ok bool
	b.eval(fmt.Sprintf("!!document.querySelector(%q)", sel), &ok)
	return ok
}
