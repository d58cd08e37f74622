package admin

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
)

// marksScript runs in every document before the page's own scripts and
// notes, in performance.now() milliseconds since the navigation started,
// when the sign-in form is first usable (its user field has the focus)
// and when the dashboard first shows its data (the chart drawn and the
// screen no longer busy).
const marksScript = `window.__marks = {};
new MutationObserver(() => {
	const m = window.__marks;
	if (m.signin === undefined && document.activeElement && document.activeElement.id === "signin-user") m.signin = performance.now();
	if (m.dashboard === undefined && document.querySelector(".screen-dashboard svg.chart") && !document.querySelector("#screen[aria-busy]")) m.dashboard = performance.now();
}).observe(document, { subtree: true, childList: true, attributes: true });`

// transferJS sums what the page fetched, from the Resource Timing entries
// (the document, the screens' files and the API calls): bytes on the wire
// (transferSize, headers included) and bodies as sent (encodedBodySize).
const transferJS = `(() => {
	const out = { files: 0, filesBody: 0, fileCount: 0, api: 0, apiCount: 0 };
	for (const e of [...performance.getEntriesByType("navigation"), ...performance.getEntriesByType("resource")]) {
		if (new URL(e.name).pathname.startsWith("/wp-json/")) { out.api += e.transferSize; out.apiCount++; }
		else { out.files += e.transferSize; out.filesBody += e.encodedBodySize; out.fileCount++; }
	}
	return out; })()`

// transfer is what transferJS answers.
type transfer struct {
	Files     float64 `json:"files"`
	FilesBody float64 `json:"filesBody"`
	FileCount float64 `json:"fileCount"`
	API       float64 `json:"api"`
	APICount  float64 `json:"apiCount"`
}

// BenchmarkFirstScreen opens /admin/ of the built binary in chromium on
// loopback, with the browser's cache off, as a first visit does. Each
// iteration is a fresh tab: the sign-in form, signing in, then a reload
// with the credentials kept for the tab (the dashboard as a returning tab
// or wp-admin's Mail page shows it first). It reports, as figures and
// never as a pass/fail:
//
//   - ms-signin: navigation start to the sign-in form usable;
//   - ms-dashboard-after-signin: the submit to the dashboard's data drawn;
//   - ms-dashboard-load: navigation start to the dashboard's data drawn,
//     signed in already;
//   - KB-files, KB-files-body, files: the document and the screens'
//     files a dashboard load fetches, on the wire and as bodies;
//   - KB-api, api-calls: the API answers of that load.
//
// The goal is the dashboard interactive in under 1 s and under 300 KB.
func BenchmarkFirstScreen(b *testing.B) {
	br := newBrowser(b)
	sink := smtpsink.Start(b)
	svc := servicetest.Start(b, b.TempDir())
	pw := svc.AdminPassword()
	conn := fmt.Sprintf(`{"name":"relay","driver":"smtp","settings":{"host":%q,"port":%d,"encryption":"none","auth":false,"from_email":"site@example.com"}}`, sink.Host(), sink.Port())
	if r := servicetest.Call(b, "POST", svc.Base+"/connections", conn, servicetest.Basic("admin", pw)); r.Status != 201 {
		b.Fatalf("create a connection: %d %s", r.Status, r.Body)
	}
	admin := "http://" + svc.Addr + "/admin/"

	var signin, afterSignin, load time.Duration
	var sum transfer
	n := 0
	for b.Loop() {
		tab, closeTab := chromedp.NewContext(br.ctx)
		ctx, cancel := context.WithTimeout(tab, stepTimeout)
		var marks map[string]float64
		var submitAt float64
		var tr transfer
		err := chromedp.Run(ctx,
			network.Enable(), network.SetCacheDisabled(true),
			chromedp.ActionFunc(func(ctx context.Context) error {
				_, err := page.AddScriptToEvaluateOnNewDocument(marksScript).Do(ctx)
				return err
			}),
			chromedp.Navigate(admin),
			chromedp.Poll(`window.__marks.signin !== undefined && window.__marks`, &marks, pollFast),
			fill("#signin-user", "admin"), fill("#signin-pass", pw),
			chromedp.Evaluate(`performance.now()`, &submitAt),
			submit("#signin-pass"),
			chromedp.Poll(`window.__marks.dashboard !== undefined && window.__marks`, &marks, pollFast))
		if err == nil {
			signin += ms(marks["signin"])
			afterSignin += ms(marks["dashboard"] - submitAt)
			err = chromedp.Run(ctx,
				chromedp.Reload(),
				chromedp.Poll(`window.__marks.dashboard !== undefined && window.__marks`, &marks, pollFast),
				chromedp.Evaluate(transferJS, &tr))
		}
		cancel()
		closeTab()
		if err != nil {
			b.Fatalf("first screen: %v", err)
		}
		load += ms(marks["dashboard"])
		sum.Files += tr.Files
		sum.FilesBody += tr.FilesBody
		sum.FileCount += tr.FileCount
		sum.API += tr.API
		sum.APICount += tr.APICount
		n++
	}
	avg := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(n) }
	b.ReportMetric(avg(signin), "ms-signin")
	b.ReportMetric(avg(afterSignin), "ms-dashboard-after-signin")
	b.ReportMetric(avg(load), "ms-dashboard-load")
	b.ReportMetric(sum.Files/1024/float64(n), "KB-files")
	b.ReportMetric(sum.FilesBody/1024/float64(n), "KB-files-body")
	b.ReportMetric(sum.FileCount/float64(n), "files")
	b.ReportMetric(sum.API/1024/float64(n), "KB-api")
	b.ReportMetric(sum.APICount/float64(n), "api-calls")
	if sum.FileCount == 0 {
		b.Fatal("the dashboard load fetched no files (no Resource Timing entries)")
	}
}

// ms converts performance.now() milliseconds to a duration.
func ms(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// BenchmarkForwardedSettings measures what the bridge's forwarding costs:
// on one WordPress site served by PHP's built-in server, with pretty
// permalinks and an application password, it times WordPress's own GET
// /wp/v2/users/me and the forwarded GET /mailsvc/v1/settings (WordPress,
// then the service over loopback), alternately, 100 of each per
// iteration, and the service's own answer to the same call without
// WordPress. It reports the medians and their difference as figures,
// never as a pass/fail:
//
//   - ms-p50-users-me: WordPress's own route;
//   - ms-p50-forwarded-settings: the forwarded route;
//   - ms-p50-forwarding-cost: the second minus the first;
//   - ms-p50-service-direct: GET /settings from the service itself.
//
// The goal (docs/operations.md) is a forwarding cost of at most 5 ms.
func BenchmarkForwardedSettings(b *testing.B) {
	s := startBridgeSite(b)
	s.setPermalinks(b, true)
	call := func(route string) time.Duration {
		u := s.restURL(true, route, "")
		if route == "direct" {
			u = "http://" + s.svc.Addr + "/wp-json/mailsvc/v1/settings"
		}
		req, err := http.NewRequest("GET", u, nil)
		if err != nil {
			b.Fatal(err)
		}
		s.admin(req)
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		took := time.Since(start)
		if resp.StatusCode != 200 {
			b.Fatalf("GET %s: %d", route, resp.StatusCode)
		}
		return took
	}
	call("wp/v2/users/me") // warm PHP's opcode cache and the service
	call("mailsvc/v1/settings")
	var own, forwarded, direct []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := 0; j < 100; j++ {
			own = append(own, call("wp/v2/users/me"))
			forwarded = append(forwarded, call("mailsvc/v1/settings"))
			direct = append(direct, call("direct"))
		}
	}
	b.StopTimer()
	p50 := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	o, f := p50(own), p50(forwarded)
	b.ReportMetric(o, "ms-p50-users-me")
	b.ReportMetric(f, "ms-p50-forwarded-settings")
	b.ReportMetric(f-o, "ms-p50-forwarding-cost")
	b.ReportMetric(p50(direct), "ms-p50-service-direct")
}
