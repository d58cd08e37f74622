// Package admin serves the admin screens: plain ES modules, a stylesheet
// and one HTML page, embedded in the binary and served at /admin/ by the
// service itself. The screens talk to the REST API under
// /wp-json/mailsvc/v1 with the signed-in user's credentials (an
// application password kept for the tab, or WordPress's cookie and nonce
// inside wp-admin); they hold no data of their own.
package admin

import (
	"embed"
	"io/fs"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

//go:embed static
var files embed.FS

// Prefix is the path the screens are served under.
const Prefix = "/admin/"

// contentSecurityPolicy keeps the screens to their own origin: scripts and
// styles from the service only, no plugins, and frames only from srcdoc
// (the sandboxed message body). Handler adds who may frame the screens.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; frame-src 'self' about:; object-src 'none'; base-uri 'none'; form-action 'self'"

// Handler serves the screens under Prefix: the files as they are, and
// index.html for the bare prefix. Anything else under the prefix is a 404.
//
// Only the service's own origin and the origins of framers may frame the
// screens (CSP frame-ancestors): framers are the URLs of the pages that
// embed them, WordPress's wp-admin Mail page. A framer that is not an
// absolute http(s) URL adds nothing. No X-Frame-Options is sent: its
// SAMEORIGIN would refuse a wp-admin on another origin, and browsers that
// know frame-ancestors ignore it anyway.
func Handler(framers ...string) http.Handler {
	policy := contentSecurityPolicy + "; frame-ancestors " + frameAncestors(framers)
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic("admin: embedded files missing: " + err.Error())
	}
	fileServer := http.StripPrefix(Prefix, http.FileServer(http.FS(sub)))
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
		h.Set("Content-Security-Policy", policy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		// The files change only with the binary; revalidate on each load so
		// an upgrade is seen at once.
		h.Set("Cache-Control", "no-cache")
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
