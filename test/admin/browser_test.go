package admin

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/mailsvc/mailsvc/internal/testenv"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
)

// stepTimeout bounds one browser step (a wait for an element included).
const stepTimeout = 30 * time.Second

// browser is one headless chromium tab.
type browser struct {
	t   testing.TB
	ctx context.Context
}

// chromiumPath finds Debian's chromium, or skips (fails in CI).
func chromiumPath(t testing.TB) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testenv.Missing(t, "chromium is not installed (Debian package chromium)")
	return ""
}

// newBrowser starts headless chromium for the test and closes it at the end.
func newBrowser(t testing.TB) *browser {
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

// textOf returns the text of the first element matching sel, once it is
// visible with some text (looked up at that moment, so a re-render in
// between does not matter).
func (b *browser) textOf(sel string) string {
	b.t.Helper()
	var s string
	b.run("read "+sel, chromedp.Poll(fmt.Sprintf(`(() => { const el = document.querySelector(%q);
		return !!el && el.getClientRects().length > 0 && el.innerText.trim() !== "" && el.innerText; })()`, sel), &s, pollFast))
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
func screenshotDir(t testing.TB) string {
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

// screenshot writes the whole page as name.png into the screenshot
// folder, and fails when a control on it has no label.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	var page []byte
	b.run("screenshot "+name, chromedp.FullScreenshot(&page, 100))
	path := filepath.Join(screenshotDir(b.t), name+".png")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", path)
	b.labelled(name)
}

// viewport is a width the screenshots are taken at.
type viewport struct {
	suffix        string
	width, height int64
	mobile        bool
}

// The widths of docs/screenshots: a phone's and a desktop's.
var (
	phoneWidth   = viewport{"phone", 390, 844, true}
	desktopWidth = viewport{"desktop", 1280, 900, false}
)

// shots takes the page as docs/screenshots shows it (make screenshots):
// name-desktop.png at 1280 px and name-phone.png at 390 px, the visible
// part only, so that the files stay small. The page is left at desktop
// width. prepare runs at each width before the picture (a scroll).
func (b *browser) shots(name string, prepare ...chromedp.Action) {
	b.t.Helper()
	b.shot(name, phoneWidth, prepare...)
	b.shot(name, desktopWidth, prepare...)
}

// shot takes the visible part of the page at w as name-suffix.png, after
// prepare.
func (b *browser) shot(name string, w viewport, prepare ...chromedp.Action) {
	b.t.Helper()
	b.resize(w)
	var shot []byte
	b.run("screenshot "+name+"-"+w.suffix, append(append(prepare, settled()), chromedp.CaptureScreenshot(&shot))...)
	// Chromium's PNG is written fast; the same image at the best
	// compression is about a third smaller.
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		b.t.Fatal(err)
	}
	var small bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&small, img); err != nil {
		b.t.Fatal(err)
	}
	path := filepath.Join(screenshotDir(b.t), name+"-"+w.suffix+".png")
	if err := os.WriteFile(path, small.Bytes(), 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// resize gives the page the width and height of w, as a phone when
// w.mobile.
func (b *browser) resize(w viewport) {
	b.t.Helper()
	b.run("resize to "+w.suffix, chromedp.EmulateViewport(w.width, w.height, func(s *emulation.SetDeviceMetricsOverrideParams, _ *emulation.SetTouchEmulationEnabledParams) {
		s.Mobile = w.mobile
	}))
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

// The actions below act on the page in one JavaScript evaluation that
// looks the element up at that moment, and only once the screen is
// settled (no #screen[aria-busy]: a screen is rendering). They retry until
// the element is there and enabled. A node found earlier and then replaced
// by a re-render ("No node with given id found") cannot be hit.

// settledJS is true when no screen is rendering.
const settledJS = `!document.querySelector("#screen[aria-busy]")`

// pollFast is the polling of the actions: every 20 ms.
var pollFast = chromedp.WithPollingInterval(20 * time.Millisecond)

// act runs body (JavaScript with el bound to the element sel) once el is
// there, enabled and the screen settled; body's value is ignored.
func act(sel, body string) chromedp.Action {
	return chromedp.Poll(fmt.Sprintf(`(() => {
		const el = document.querySelector(%q);
		if (!el || el.disabled || !(%s)) return false;
		%s;
		return true; })()`, sel, settledJS, body), nil, pollFast)
}

// wizardRelaySteps fill the onboarding wizard's SMTP step with the
// connection "Office relay" to sink (no TLS, login mailer), then extra
// (more fields), the sender Example Shop <hello@shop.example> and the
// test recipient, and submit it.
func wizardRelaySteps(sink *smtpsink.Sink, extra ...chromedp.Action) []chromedp.Action {
	steps := []chromedp.Action{
		fill("#ob-name", "Office relay"),
		fill(`#onboarding [name="host"]`, sink.Host()),
		fill(`#onboarding [name="encryption"]`, "none"),
		fill(`#onboarding [name="port"]`, fmt.Sprint(sink.Port())),
		fill(`#onboarding [name="username"]`, "mailer"),
		fill(`#onboarding [name="password"]`, "s3cret-pass"),
	}
	return append(append(steps, extra...),
		fill("#ob-from_email", "hello@shop.example"),
		fill("#ob-from_name", "Example Shop"),
		fill("#ob-to", "owner@example.com"),
		submit("#ob-to"))
}

// fill sets the value of the control sel as typing and leaving it does:
// focus, the value through the element's own setter, then input and
// change events.
func fill(sel, value string) chromedp.Action {
	return act(sel, fmt.Sprintf(`el.focus();
		const proto = el instanceof HTMLSelectElement ? HTMLSelectElement.prototype
			: el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
		Object.getOwnPropertyDescriptor(proto, "value").set.call(el, %q);
		el.dispatchEvent(new Event("input", { bubbles: true }));
		el.dispatchEvent(new Event("change", { bubbles: true }))`, value))
}

// click clicks the element sel (a checkbox toggles and fires change, a
// submit button submits its form with itself as the submitter).
func click(sel string) chromedp.Action { return act(sel, "el.click()") }

// clickButton clicks the enabled button whose text is text.
func clickButton(text string) chromedp.Action {
	return chromedp.Poll(fmt.Sprintf(`(() => {
		const el = [...document.querySelectorAll("button")].find((b) => b.textContent.trim() === %q && !b.disabled);
		if (!el || !(%s)) return false;
		el.click();
		return true; })()`, text, settledJS), nil, pollFast)
}

// submit submits the form of the element sel as a person does (the submit
// event fires, with the form's submit button as the submitter).
func submit(sel string) chromedp.Action {
	return act(sel, `el.form.requestSubmit(el.form.querySelector('[type="submit"]'))`)
}

// settled waits until no screen is rendering.
func settled() chromedp.Action {
	return chromedp.Poll(settledJS, nil, pollFast)
}

// has reports whether an element matches sel now.
func (b *browser) has(sel string) bool {
	b.t.Helper()
	var ok bool
	b.eval(fmt.Sprintf("!!document.querySelector(%q)", sel), &ok)
	return ok
}

// center answers the middle of the element sel in the viewport, scrolled
// into view first.
func (b *browser) center(sel string) (x, y float64) {
	b.t.Helper()
	var p []float64
	b.run("find "+sel, chromedp.Poll(fmt.Sprintf(`(() => { const el = document.querySelector(%q);
		if (!el || !(%s)) return false;
		el.scrollIntoView({ block: "center" });
		const r = el.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`, sel, settledJS), &p, pollFast))
	return p[0], p[1]
}

// drag drags the element from with the mouse and drops it on the upper
// part of the element to, as a person does. The mouse press and moves are
// real input events, so the page's dragstart fires as it would; headless
// chromium has no window system to carry the drag on, so it hands the
// drag over (Input.dragIntercepted) and the test delivers dragenter,
// dragover and drop at the target with the drag's own data.
func (b *browser) drag(from, to string) {
	b.t.Helper()
	x0, y0 := b.center(from)
	x1, y1 := b.center(to)
	y1 -= 4 // above the middle of the target: drop before it
	intercepted := make(chan *input.DragData, 1)
	ctx, stop := context.WithCancel(b.ctx)
	defer stop()
	chromedp.ListenTarget(ctx, func(ev any) {
		if e, ok := ev.(*input.EventDragIntercepted); ok {
			select {
			case intercepted <- e.Data:
			default:
			}
		}
	})
	b.run("press on "+from, input.SetInterceptDrags(true),
		input.DispatchMouseEvent(input.MouseMoved, x0, y0),
		input.DispatchMouseEvent(input.MousePressed, x0, y0).WithButton(input.Left).WithButtons(1).WithClickCount(1))
	const steps = 5
	for i := 1; i <= steps; i++ {
		f := float64(i) / steps
		b.run("move the mouse", input.DispatchMouseEvent(input.MouseMoved, x0+(x1-x0)*f, y0+(y1-y0)*f).WithButton(input.Left).WithButtons(1))
	}
	var data *input.DragData
	select {
	case data = <-intercepted:
	case <-time.After(5 * time.Second):
		b.t.Fatalf("dragging %s started no drag", from)
	}
	b.run("drop on "+to,
		input.DispatchDragEvent(input.DragEnter, x1, y1, data),
		input.DispatchDragEvent(input.DragOver, x1, y1, data),
		input.DispatchDragEvent(input.Drop, x1, y1, data),
		input.DispatchMouseEvent(input.MouseReleased, x1, y1).WithButton(input.Left).WithClickCount(1),
		input.SetInterceptDrags(false))
}
