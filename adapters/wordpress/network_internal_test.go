package wordpress

import (
	"context"
	"slices"
	"testing"

	"gorm.io/gorm"
)

// TestSiteByPathSubdomains finds sites of a subdomain network and of a
// subdirectory network under a path, as get_site_by_path() does.
func TestSiteByPathSubdomains(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		for _, q := range []string{
			`CREATE TABLE n_blogs (blog_id INTEGER, site_id INTEGER, domain VARCHAR(200), path VARCHAR(100),
				public INTEGER, archived INTEGER, spam INTEGER, deleted INTEGER)`,
			`INSERT INTO n_blogs VALUES (1, 1, 'example.org', '/', 1, 0, 0, 0), (2, 1, 'shop.example.org', '/', 1, 0, 0, 0),
				(3, 1, 'news.example.org', '/', 1, 0, 0, 1), (4, 2, 'other.example', '/', 1, 0, 0, 0)`,
			`CREATE TABLE d_blogs (blog_id INTEGER, site_id INTEGER, domain VARCHAR(200), path VARCHAR(100),
				public INTEGER, archived INTEGER, spam INTEGER, deleted INTEGER)`,
			`INSERT INTO d_blogs VALUES (1, 1, 'example.org', '/wp/', 1, 0, 0, 0), (2, 1, 'example.org', '/wp/team/', 1, 0, 0, 0)`,
		} {
			if err := db.Exec(q).Error; err != nil {
				t.Fatal(err)
			}
		}
		sub, err := NewNetwork(db, "n_", NetworkConfig{SubdomainInstall: true, Domain: "example.org"})
		if err != nil {
			t.Fatal(err)
		}
		dir, err := NewNetwork(db, "d_", NetworkConfig{Domain: "example.org", Path: "/wp/"})
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			n          *Network
			host, path string
			want       int64 // 0: none
		}{
			{sub, "shop.example.org", "/wp-json/mailsvc/v1/logs", 2},
			{sub, "SHOP.example.org:443", "/", 2},
			{sub, "www.shop.example.org", "/", 2},
			{sub, "example.org:80", "/x", 1},
			{sub, "news.example.org", "/", 0}, // deleted
			{sub, "other.example", "/", 0},    // another network
			{sub, "127.0.0.1:8025", "/", 0},   // subdomains need the host
			{dir, "example.org", "/wp/team/wp-json/", 2},
			{dir, "example.org", "/wp/wp-json/", 1},
			{dir, "127.0.0.1:8025", "/wp/team/", 2},
			{dir, "example.org", "/elsewhere/", 0},
		} {
			s, err := tc.n.SiteByPath(ctx, tc.host, tc.path)
			if err != nil {
				t.Fatal(err)
			}
			got := int64(0)
			if s != nil {
				got = s.ID
			}
			if got != tc.want {
				t.Errorf("SiteByPath(%q, %q) = site %d, want %d", tc.host, tc.path, got, tc.want)
			}
		}
		if id, path, err := dir.SiteForRequest(ctx, "example.org", "/elsewhere/"); err != nil || id != 1 || path != "/wp/" {
			t.Errorf("SiteForRequest of no site = %d %q %v; want the main site", id, path, err)
		}
		if got := pathCandidates("/a/b/c/", 2); !slices.Equal(got, []string{"/a/b/", "/a/", "/"}) {
			t.Errorf("pathCandidates = %v", got)
		}
	})
}
