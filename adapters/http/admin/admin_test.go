package admin

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

func TestHandler(t *testing.T) {
	h := Handler()
	cases := []struct {
		method, path string
		status       int
		want         string // in the body
		ctype        string // prefix of Content-Type
	}{
		{"GET", "/admin/", 200, `<script type="module" src="js/app.js">`, "text/html"},
		{"GET", "/admin/js/api.js", 200, "export async function request", "text/javascript"},
		{"GET", "/admin/app.css", 200, "--blue", "text/css"},
		{"GET", "/admin", 301, "", ""},
		{"GET", "/admin/js/", 404, "", ""},
		{"GET", "/admin/nothing.js", 404, "", ""},
		// Without the Pro module registered, no Pro screen is served.
		{"GET", "/admin/js/pro.js", 404, "", ""},
		{"GET", "/admin/js/pro-analytics.js", 404, "", ""},
		// Nor any tab of a module.
		{"GET", "/admin/js/nav.js", 200, "export default [];", "text/javascript"},
		{"POST", "/admin/", 405, "", ""},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
			if rec.Code != c.status {
				t.Fatalf("status %d, want %d", rec.Code, c.status)
			}
			if !strings.Contains(rec.Body.String(), c.want) {
				t.Errorf("body lacks %q", c.want)
			}
			if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, c.ctype) {
				t.Errorf("Content-Type %q, want %q", ct, c.ctype)
			}
			if c.status == 200 && !strings.Contains(rec.Header().Get("Content-Security-Policy"), "script-src 'self'") {
				t.Errorf("no Content-Security-Policy keeping scripts to the service: %v", rec.Header())
			}
		})
	}
}

// TestTransferBudget keeps the screens small: everything a browser can
// fetch from /admin/ together stays under 300 KB (cmd/mailsvc/pro checks
// the same with the Pro screens registered).
func TestTransferBudget(t *testing.T) {
	const budget = 300 << 10
	total := 0
	served := Files()
	err := fs.WalkDir(served, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(served, path)
		total += len(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if total == 0 || total > budget {
		t.Errorf("the screens weigh %d bytes, want 1 to %d", total, budget)
	}
}

// TestNoInlineScript keeps index.html within its own Content-Security-Policy.
func TestNoInlineScript(t *testing.T) {
	b, err := fs.ReadFile(files, "static/index.html")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "<script>") {
		t.Error("index.html has an inline script, which the Content-Security-Policy forbids")
	}
}

// TestFrameAncestors checks who may frame the screens: the service itself
// and the origin of each framer (wp-admin's Mail page), on every answer
// that carries the page, and never X-Frame-Options.
func TestFrameAncestors(t *testing.T) {
	cases := []struct {
		name    string
		framers []string
		want    string
	}{
		{"standalone", nil, "frame-ancestors 'self'"},
		{"wp-admin on the site", []string{"https://blog.example/wp-admin/admin.php?page=mailsvc"}, "frame-ancestors 'self' https://blog.example"},
		{"a port and upper case", []string{"HTTP://Blog.Example:8080/wp-admin/"}, "frame-ancestors 'self' http://blog.example:8080"},
		{"IPv6", []string{"http://[::1]:8080/wp-admin/"}, "frame-ancestors 'self' http://[::1]:8080"},
		{"two framers, one origin", []string{"https://blog.example/wp-admin/", "https://blog.example/other"}, "frame-ancestors 'self' https://blog.example"},
		{"empty", []string{""}, "frame-ancestors 'self'"},
		{"relative", []string{"/wp-admin/"}, "frame-ancestors 'self'"},
		{"not http", []string{"javascript:alert(1)", "ftp://blog.example/"}, "frame-ancestors 'self'"},
		{"a source list smuggled in", []string{"https://blog.example;script-src *"}, "frame-ancestors 'self'"},
		{"a space in the host", []string{"https://blog.example%20*/"}, "frame-ancestors 'self'"},
		{"user info", []string{"https://u:p@blog.example/"}, "frame-ancestors 'self'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := Handler(c.framers...)
			for _, path := range []string{"/admin/", "/admin/app.css", "/admin/js/app.js"} {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
				if rec.Code != 200 {
					t.Fatalf("GET %s: %d", path, rec.Code)
				}
				csp := rec.Header().Get("Content-Security-Policy")
				if !strings.HasSuffix(csp, "; "+c.want) || strings.Count(csp, "frame-ancestors") != 1 {
					t.Errorf("GET %s: Content-Security-Policy %q, want it to end with %q", path, csp, c.want)
				}
				if xfo := rec.Header().Get("X-Frame-Options"); xfo != "" {
					t.Errorf("GET %s: X-Frame-Options %q", path, xfo)
				}
			}
		})
	}
}

// TestIndexUnderBridge asks for the index as the WordPress bridge does:
// with plain permalinks every asset URL is under the bridge's query-string
// base, and the import map sends each module's relative imports (which the
// browser resolves to the site's root) there; the CSP allows that inline
// map by its hash and nothing else inline. With pretty permalinks relative
// resolution already lands under the base: the map is empty. A base that
// is not an absolute http(s) URL ending in / is refused.
func TestIndexUnderBridge(t *testing.T) {
	cases := []struct {
		name, base string
		status     int
		want       []string
		mapped     bool
	}{
		{"plain permalinks", "http://site.test/index.php?rest_route=/mailsvc-bridge/v1/screens/", 200, []string{
			`src="http://site.test/index.php?rest_route=/mailsvc-bridge/v1/screens/js/app.js"`,
			`href="http://site.test/index.php?rest_route=/mailsvc-bridge/v1/screens/app.css"`,
			`"http://site.test/api.js":"http://site.test/index.php?rest_route=/mailsvc-bridge/v1/screens/js/api.js"`,
			`"http://site.test/dashboard.js":"http://site.test/index.php?rest_route=/mailsvc-bridge/v1/screens/js/dashboard.js"`,
			`"http://site.test/nav.js":"http://site.test/index.php?rest_route=/mailsvc-bridge/v1/screens/js/nav.js"`,
		}, true},
		{"pretty permalinks", "https://site.test/blog/wp-json/mailsvc-bridge/v1/screens/", 200, []string{
			`src="https://site.test/blog/wp-json/mailsvc-bridge/v1/screens/js/app.js"`,
			`<script type="importmap">{"imports":{}}</script>`,
		}, false},
		{"relative base", "/wp-json/mailsvc-bridge/v1/screens/", 400, nil, false},
		{"no trailing slash", "http://site.test/?rest_route=/x", 400, nil, false},
		{"script in the base", `http://site.test/"><script>alert(1)</script>/`, 400, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", "/admin/", nil)
			signBase(req, testBaseKey, c.base, time.Now().Unix())
			rec := httptest.NewRecorder()
			NewHandler(Options{BaseKey: baseKey(testBaseKey)}).ServeHTTP(rec, req)
			if rec.Code != c.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, c.status, rec.Body)
			}
			if c.status != 200 {
				return
			}
			body := rec.Body.String()
			for _, w := range c.want {
				if !strings.Contains(body, w) {
					t.Errorf("page lacks %s:\n%s", w, body)
				}
			}
			if strings.Contains(body, `src="js/`) || strings.Contains(body, `href="app.css"`) {
				t.Errorf("a relative asset URL is left:\n%s", body)
			}
			_, hash, _ := IndexUnder(c.base)
			if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self' '"+hash+"';") {
				t.Errorf("CSP %q does not allow the import map %s", csp, hash)
			}
			if got := strings.Contains(body, `.js":"`); got != c.mapped {
				t.Errorf("import map entries: %v, want %v", got, c.mapped)
			}
		})
	}
}

// testBaseKey is the key the tests sign the screens base with.
const testBaseKey = "0123456789abcdef-screens-base-key"

// baseKey is Options.BaseKey returning key.
func baseKey(key string) func(context.Context) (string, error) {
	return func(context.Context) (string, error) { return key, nil }
}

// signBase sets the screens base headers as the bridge does, signed with
// key at Unix time ts.
func signBase(req *http.Request, key, base string, ts int64) {
	req.Header.Set(BaseHeader, base)
	req.Header.Set(BaseTimestampHeader, strconv.FormatInt(ts, 10))
	req.Header.Set(BaseSignatureHeader, SignBase(key, base, ts))
}

// TestIndexBaseOnlySigned: the screens base header changes the page only
// when the bridge signed it with the key, within the window, for that
// very base; any other client's header (unsigned, forged, stale, signed
// for another base, or every one standalone, with no key) is ignored and
// the plain page is served. The index varies on the headers.
func TestIndexBaseOnlySigned(t *testing.T) {
	const base = "http://evil.test/index.php?rest_route=/x/"
	now := time.Now().Unix()
	cases := []struct {
		name   string
		opts   Options
		set    func(*http.Request)
		signed bool
	}{
		{"signed by the bridge", Options{BaseKey: baseKey(testBaseKey)}, func(r *http.Request) { signBase(r, testBaseKey, base, now) }, true},
		{"no signature", Options{BaseKey: baseKey(testBaseKey)}, func(r *http.Request) { r.Header.Set(BaseHeader, base) }, false},
		{"another key", Options{BaseKey: baseKey(testBaseKey)}, func(r *http.Request) { signBase(r, "guessed", base, now) }, false},
		{"signed for another base", Options{BaseKey: baseKey(testBaseKey)}, func(r *http.Request) {
			signBase(r, testBaseKey, "http://site.test/wp-json/mailsvc-bridge/v1/screens/", now)
			r.Header.Set(BaseHeader, base)
		}, false},
		{"stale", Options{BaseKey: baseKey(testBaseKey)}, func(r *http.Request) { signBase(r, testBaseKey, base, now-int64(BaseWindow/time.Second)-5) }, false},
		{"from the future", Options{BaseKey: baseKey(testBaseKey)}, func(r *http.Request) { signBase(r, testBaseKey, base, now+int64(BaseWindow/time.Second)+5) }, false},
		{"standalone: no key", Options{}, func(r *http.Request) { signBase(r, testBaseKey, base, now) }, false},
		{"the key cannot be read", Options{BaseKey: func(context.Context) (string, error) { return "", errors.New("no salt") }}, func(r *http.Request) { signBase(r, "", base, now) }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", "/admin/", nil)
			c.set(req)
			rec := httptest.NewRecorder()
			NewHandler(c.opts).ServeHTTP(rec, req)
			if rec.Code != 200 {
				t.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
			if got := strings.Contains(rec.Body.String(), "evil.test"); got != c.signed {
				t.Errorf("page under the header's base: %v, want %v", got, c.signed)
			}
			if vary := rec.Header().Get("Vary"); !strings.Contains(vary, BaseHeader) {
				t.Errorf("Vary %q does not name %s", vary, BaseHeader)
			}
		})
	}
}

// TestRegisteredScreens serves a module's screens beside the built-in
// ones, maps them in the bridge's import map, and never lets a module
// replace a built-in file.
func TestRegisteredScreens(t *testing.T) {
	if _, err := fs.Stat(Files(), "js/extra.js"); err == nil {
		t.Fatal("js/extra.js is served before any module registered it")
	}
	restoreModules(t)
	RegisterScreens(fstest.MapFS{
		"js/extra.js": {Data: []byte("export function render() {} // extra")},
		"js/app.js":   {Data: []byte("// not the built-in app")},
		"js/nav.js":   {Data: []byte("// not the generated list")},
	}, NavEntry{Slug: "extra", Title: "Extra & more", Module: "extra.js"})
	h := Handler()
	for path, want := range map[string]string{
		"/admin/js/extra.js": "// extra",
		"/admin/js/app.js":   "import * as api from './api.js'",
		"/admin/js/nav.js":   `export default [{"slug":"extra","title":"Extra \u0026 more","module":"extra.js"}];`,
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("GET %s: %d %.60q, want 200 with %q", path, rec.Code, rec.Body.String(), want)
		}
	}
	page, _, err := IndexUnder("http://site.test/index.php?rest_route=/mailsvc-bridge/v1/screens/")
	if err != nil {
		t.Fatal(err)
	}
	if want := `"http://site.test/extra.js":"http://site.test/index.php?rest_route=/mailsvc-bridge/v1/screens/js/extra.js"`; !strings.Contains(string(page), want) {
		t.Errorf("the import map lacks the module's screen %s", want)
	}
}

// restoreModules puts back, when t ends, the modules registered before it.
func restoreModules(t *testing.T) {
	t.Helper()
	moduleMu.Lock()
	screens, nav := moduleScreens, moduleNav
	moduleMu.Unlock()
	t.Cleanup(func() {
		moduleMu.Lock()
		defer moduleMu.Unlock()
		moduleScreens, moduleNav = screens, nav
	})
}

// TestRegisteredTabs lists the registered modules' tabs in js/nav.js in
// registration order, after none without a module, leaves out the hidden
// ones (a module switched off), and refuses a malformed tab.
func TestRegisteredTabs(t *testing.T) {
	nav := func(h http.Handler) string {
		t.Helper()
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/admin/js/nav.js", nil))
		if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/javascript") {
			t.Fatalf("GET /admin/js/nav.js: %d %v", rec.Code, rec.Header())
		}
		body := rec.Body.String()
		i := strings.Index(body, "export default ")
		if i < 0 {
			t.Fatalf("nav.js has no default export:\n%s", body)
		}
		return strings.TrimSuffix(strings.TrimSpace(body[i+len("export default "):]), ";")
	}
	restoreModules(t)
	if got := nav(Handler()); got != "[]" {
		t.Fatalf("without a module, the tabs are %s, want []", got)
	}
	one := fstest.MapFS{"js/one.js": {Data: []byte("export function render() {}")}}
	two := fstest.MapFS{"js/two.js": {Data: []byte("export function render() {}")}, "js/two-a.js": {Data: []byte("")}}
	RegisterScreens(one, NavEntry{Slug: "one", Title: "One", Module: "one.js"})
	RegisterScreens(two, NavEntry{Slug: "two", Title: "Two", Module: "two.js"}, NavEntry{Slug: "two-a", Title: "Two A", Module: "two-a.js"})
	RegisterScreens(fstest.MapFS{"js/lib.js": {Data: []byte("")}}) // screens without a tab
	for _, c := range []struct {
		name   string
		hidden []string
		want   string
	}{
		{"all", nil, `[{"slug":"one","title":"One","module":"one.js"},{"slug":"two","title":"Two","module":"two.js"},{"slug":"two-a","title":"Two A","module":"two-a.js"}]`},
		{"one switched off", []string{"one"}, `[{"slug":"two","title":"Two","module":"two.js"},{"slug":"two-a","title":"Two A","module":"two-a.js"}]`},
		{"all hidden", []string{"one", "two", "two-a"}, `[]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := nav(NewHandler(Options{HiddenTabs: c.hidden})); got != c.want {
				t.Errorf("tabs %s, want %s", got, c.want)
			}
		})
	}
	for _, c := range []struct {
		name string
		tab  NavEntry
	}{
		{"no slug", NavEntry{Title: "One", Module: "one.js"}},
		{"slug with a slash", NavEntry{Slug: "a/b", Title: "One", Module: "one.js"}},
		{"no title", NavEntry{Slug: "one", Module: "one.js"}},
		{"module outside js/", NavEntry{Slug: "one", Title: "One", Module: "../one.js"}},
		{"module not a script", NavEntry{Slug: "one", Title: "One", Module: "one.css"}},
		{"module not in the screens", NavEntry{Slug: "one", Title: "One", Module: "missing.js"}},
	} {
		t.Run("refused: "+c.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("RegisterScreens accepted %+v", c.tab)
				}
			}()
			RegisterScreens(one, c.tab)
		})
	}
}
