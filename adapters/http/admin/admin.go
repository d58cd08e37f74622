// Package admin serves the admin screens: plain ES modules, a stylesheet
// and one HTML page, embedded in the binary and served at /admin/ by the
// service itself. The screens talk to the REST API under
// /wp-json/mailsvc/v1 with the signed-in user's credentials (an
// application password kept for the tab, or WordPress's cookie and nonce
// inside wp-admin); they hold no data of their own. An add-on module's
// screens (the Pro add-on's) are not in this package: the module
// registers them, and its tabs in the navigation, with RegisterScreens;
// the handler lists those tabs in the generated module js/nav.js, which
// app.js reads.
package admin

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

//go:embed static
var files embed.FS

// Prefix is the path the screens are served under.
const Prefix = "/admin/"

// BaseHeader is the request header with which the WordPress bridge asks
// for the index page as it serves it: its value is the absolute URL the
// bridge serves the screens' files under (with plain permalinks a query
// string, /index.php?rest_route=/mailsvc-bridge/v1/screens/, where the
// page's relative URLs and the modules' relative imports cannot reach
// them). The page then names its assets under that URL and carries an
// import map that sends each module's relative imports there.
//
// The header is believed only when the bridge signed it (SignBase): with
// BaseTimestampHeader and BaseSignatureHeader under Options.BaseKey. A
// header that is not signed so (any other client's, or every one when
// there is no key: standalone) is ignored and the page is the plain one.
const BaseHeader = "X-Mailsvc-Screens-Base"

// BaseTimestampHeader (Unix seconds) and BaseSignatureHeader (SignBase)
// sign BaseHeader.
const (
	BaseTimestampHeader = "X-Mailsvc-Screens-Base-Timestamp"
	BaseSignatureHeader = "X-Mailsvc-Screens-Base-Signature"
)

// BaseWindow is how far a signed base's timestamp may be from the
// service's clock.
const BaseWindow = 60 * time.Second

// SignBase signs a screens base URL sent at Unix time ts: the lowercase
// hex HMAC-SHA256 of the decimal timestamp, a line feed and the base,
// keyed with key (the bridge computes it as hash_hmac('sha256', $ts .
// "\n" . $base, $key)).
func SignBase(key, base string, ts int64) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(strconv.FormatInt(ts, 10) + "\n" + base))
	return hex.EncodeToString(m.Sum(nil))
}

// contentSecurityPolicy keeps the screens to their own origin: scripts and
// styles from the service only, no plugins, and frames only from srcdoc
// (the sandboxed message body). Handler adds who may frame the screens.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; frame-src 'self' about:; object-src 'none'; base-uri 'none'; form-action 'self'"

// NavPath is where the handler serves the generated module that lists
// the registered modules' tabs (NavModule), under Prefix; app.js imports
// it as ./nav.js. A module's own js/nav.js would never be served.
const NavPath = "js/nav.js"

// Options are how serve sets up the screens' handler (NewHandler).
type Options struct {
	// Framers are the URLs of the pages that embed the screens
	// (WordPress's wp-admin Mail page): only the service's own origin
	// and theirs may frame the screens (CSP frame-ancestors). A framer
	// that is not an absolute http(s) URL adds nothing.
	Framers []string
	// HiddenTabs are slugs of registered tabs (RegisterScreens) that
	// js/nav.js leaves out: those of a module switched off, whose
	// screens would find no route to call.
	HiddenTabs []string
	// BaseKey returns the key that signs BaseHeader (beside WordPress,
	// the one the bridge derives from the site's salts). Nil, or an
	// error, and BaseHeader is ignored.
	BaseKey func(ctx context.Context) (string, error)
	// Now is the clock BaseWindow is measured on; nil means time.Now.
	Now func() time.Time
}

// signedBase returns the request's BaseHeader when it is signed under
// opts.BaseKey within BaseWindow, else "".
func (opts Options) signedBase(r *http.Request) string {
	base := r.Header.Get(BaseHeader)
	if base == "" || opts.BaseKey == nil {
		return ""
	}
	rawTS := r.Header.Get(BaseTimestampHeader)
	ts, err := strconv.ParseInt(rawTS, 10, 64)
	if err != nil || len(rawTS) > 12 || strconv.FormatInt(ts, 10) != rawTS {
		return ""
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	if d := now().Sub(time.Unix(ts, 0)); d > BaseWindow || d < -BaseWindow {
		return ""
	}
	key, err := opts.BaseKey(r.Context())
	if err != nil || key == "" {
		return ""
	}
	want := SignBase(key, base, ts)
	if !hmac.Equal([]byte(want), []byte(strings.ToLower(r.Header.Get(BaseSignatureHeader)))) {
		return ""
	}
	return base
}

// Handler serves the screens as NewHandler does, with framers and every
// registered tab shown.
func Handler(framers ...string) http.Handler {
	return NewHandler(Options{Framers: framers})
}

// NewHandler serves the screens under Prefix: the files as they are (the
// built-in ones and those of the modules registered by RegisterScreens),
// index.html for the bare prefix, and at NavPath the registered modules'
// tabs save opts.HiddenTabs, read once here. Anything else under the
// prefix is a 404.
//
// No X-Frame-Options is sent: its SAMEORIGIN would refuse a wp-admin on
// another origin, and browsers that know frame-ancestors ignore it
// anyway.
func NewHandler(opts Options) http.Handler {
	policy := contentSecurityPolicy + "; frame-ancestors " + frameAncestors(opts.Framers)
	fileServer := http.StripPrefix(Prefix, http.FileServer(http.FS(Files())))
	nav, navErr := NavModule(Navigation(opts.HiddenTabs...))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if r.URL.Path == strings.TrimSuffix(Prefix, "/") {
			http.Redirect(w, r, Prefix, http.StatusMovedPermanently)
			return
		}
		if r.URL.Path != Prefix && strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r) // no directory listings
			return
		}
		h := w.Header()
		if r.URL.Path == Prefix {
			// The page depends on the bridge's signed base.
			h.Set("Vary", strings.Join([]string{BaseHeader, BaseTimestampHeader, BaseSignatureHeader}, ", "))
		}
		if base := opts.signedBase(r); r.URL.Path == Prefix && base != "" {
			page, hash, err := IndexUnder(base)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			h.Set("Content-Security-Policy", strings.Replace(policy, "script-src 'self'", "script-src 'self' '"+hash+"'", 1))
			h.Set("Content-Type", "text/html; charset=utf-8")
			h.Set("X-Content-Type-Options", "nosniff")
			h.Set("Referrer-Policy", "same-origin")
			h.Set("Cache-Control", "no-cache")
			_, _ = w.Write(page)
			return
		}
		h.Set("Content-Security-Policy", policy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		// The files change only with the binary; revalidate on each load so
		// an upgrade is seen at once.
		h.Set("Cache-Control", "no-cache")
		if r.URL.Path == Prefix+NavPath {
			if navErr != nil {
				http.Error(w, navErr.Error(), http.StatusInternalServerError)
				return
			}
			h.Set("Content-Type", "text/javascript; charset=utf-8")
			http.ServeContent(w, r, NavPath, time.Time{}, bytes.NewReader(nav))
			return
		}
		fileServer.ServeHTTP(w, r)
	})
}

// frameAncestors returns the frame-ancestors source list: 'self' and the
// origin of each framer, once each.
func frameAncestors(framers []string) string {
	sources := []string{"'self'"}
	for _, f := range framers {
		if o, ok := origin(f); ok && !slices.Contains(sources, o) {
			sources = append(sources, o)
		}
	}
	return strings.Join(sources, " ")
}

// origin returns scheme://host[:port] of an absolute http or https URL,
// in lower case. A URL with anything a CSP source could not hold in its
// host (spaces, quotes, semicolons, commas) has no origin.
func origin(raw string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return "", false
	}
	host := strings.ToLower(u.Host)
	if strings.ContainsFunc(host, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune(".-:[]", r))
	}) {
		return "", false
	}
	return strings.ToLower(u.Scheme) + "://" + host, true
}

// IndexUnder returns the index page for screens served under base (an
// absolute http(s) URL ending in "/", possibly inside a query string,
// with nothing that would need escaping):
// every asset URL of the page is base + its relative path, and an import
// map sends each module import (every file in js/, and the generated
// NavPath), which the browser resolves relative to the importing module's
// URL, to base + "js/" + the module. It also
// returns the CSP source ('sha256-…') that allows the inline import map.
func IndexUnder(base string) (page []byte, scriptHash string, err error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Fragment != "" || u.String() != base || !strings.HasSuffix(base, "/") {
		return nil, "", fmt.Errorf("admin: %s must be an absolute http(s) URL ending in / with no character to escape, not %q", BaseHeader, base)
	}
	index, err := files.ReadFile("static/index.html")
	if err != nil {
		return nil, "", fmt.Errorf("admin: embedded index: %w", err)
	}
	modules, err := fs.Glob(Files(), "js/*.js")
	if err != nil {
		return nil, "", fmt.Errorf("admin: embedded modules: %w", err)
	}
	// Every module is in js/ and imports its siblings as ./name.js.
	from, err := url.Parse(base + "js/app.js")
	if err != nil {
		return nil, "", fmt.Errorf("admin: module URL: %w", err)
	}
	if !slices.Contains(modules, NavPath) {
		modules = append(modules, NavPath)
	}
	imports := map[string]string{}
	for _, m := range modules {
		name := path.Base(m)
		if seen := from.ResolveReference(&url.URL{Path: "./" + name}).String(); seen != base+"js/"+name {
			imports[seen] = base + "js/" + name
		}
	}
	importMap, err := json.Marshal(map[string]any{"imports": imports}) // escapes <, > and &
	if err != nil {
		return nil, "", fmt.Errorf("admin: import map: %w", err)
	}
	sum := sha256.Sum256(importMap)
	attr := html.EscapeString(base)
	page = []byte(strings.NewReplacer(
		`href="`, `href="`+attr,
		`src="`, `src="`+attr,
	).Replace(string(index)))
	page = bytes.Replace(page, []byte("<head>\n"), []byte(`<head>`+"\n"+`<script type="importmap">`+string(importMap)+"</script>\n"), 1)
	return page, "sha256-" + base64.StdEncoding.EncodeToString(sum[:]), nil
}
