package wordpress_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"gorm.io/driver/mysql"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/mailsvc/mailsvc/adapters/wordpress"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

type metaRow struct{ Key, Value string }

func metaRows(t *testing.T, db *gorm.DB, prefix string, userID int64) []metaRow {
	t.Helper()
	rows, err := db.Raw("SELECT meta_key, meta_value FROM "+prefix+"usermeta WHERE user_id = ? ORDER BY umeta_id", userID).Rows()
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []metaRow
	for rows.Next() {
		var m metaRow
		if err := rows.Scan(&m.Key, &m.Value); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}

// TestAgainstRealWordPress installs Debian's WordPress on MariaDB and checks
// both directions: credentials WordPress issues are accepted here, and
// rows this package writes are read by WordPress as its own.
func TestAgainstRealWordPress(t *testing.T) {
	site := wpsite.Install(t, wpsite.Options{})
	db, err := gorm.Open(mysql.Open(site.DSN), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatalf("open site database: %v", err)
	}
	ctx := context.Background()
	src, err := wordpress.NewGormSource(db, site.Prefix)
	if err != nil {
		t.Fatal(err)
	}
	auth := wordpress.NewAuthenticator(src, wordpress.Site{Salts: site.Salts})

	t.Run("default roles are byte-identical to the installer's", func(t *testing.T) {
		v, found, err := src.Option(ctx, site.Prefix+"user_roles")
		if err != nil || !found {
			t.Fatalf("roles option: %v %v", found, err)
		}
		if v != wordpress.DefaultUserRoles() {
			t.Fatalf("installer wrote\n%s\nembedded\n%s", v, wordpress.DefaultUserRoles())
		}
	})

	t.Run("EnsureSchema leaves an installed site alone", func(t *testing.T) {
		before, _, _ := src.Option(ctx, "siteurl")
		if err := wordpress.EnsureSchema(ctx, db, site.Prefix, wordpress.WithSiteURL("http://other.example")); err != nil {
			t.Fatalf("EnsureSchema: %v", err)
		}
		after, _, _ := src.Option(ctx, "siteurl")
		if before != after || after != site.SiteURL {
			t.Fatalf("siteurl %q -> %q", before, after)
		}
	})

	t.Run("cookie and nonce issued by WordPress", func(t *testing.T) {
		cookie := site.LoginCookie(t, site.AdminLogin)
		nonce := site.RESTNonce(t, site.AdminLogin, cookie)
		r := httptest.NewRequest(http.MethodGet, "/wp-json/", nil)
		r.Header.Set("Cookie", cookie.Name+"="+cookie.Value)
		r.Header.Set("X-WP-Nonce", nonce)
		u, err := auth.Authenticate(r, false)
		if err != nil || u == nil {
			t.Fatalf("Authenticate = %v, %v", u, err)
		}
		if u.Login != site.AdminLogin || !u.Can("manage_options") || !slices.Equal(u.Roles, []string{"administrator"}) {
			t.Fatalf("user = %+v", u)
		}
		if got := auth.CreateNonce(u, auth.SessionToken(r), "wp_rest"); got != nonce {
			t.Fatalf("CreateNonce = %q, WordPress made %q", got, nonce)
		}
	})

	t.Run("application password issued by WordPress", func(t *testing.T) {
		pw := site.CreateApplicationPassword(t, site.AdminLogin, "made by WordPress")
		r := httptest.NewRequest(http.MethodGet, "/wp-json/", nil)
		r.RemoteAddr = "203.0.113.7:5555"
		r.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(site.AdminLogin+":"+wordpress.ChunkPassword(pw))))
		u, err := auth.Authenticate(r, true)
		if err != nil || u == nil || u.Via != "application_password" {
			t.Fatalf("Authenticate = %+v, %v", u, err)
		}
		// WordPress reads back the usage this package recorded.
		out := site.PHP(t, fmt.Sprintf(`$u = get_user_by( 'login', %s );
echo json_encode( WP_Application_Passwords::get_user_application_passwords( $u->ID ) );`, wpsite.PHPString(site.AdminLogin)))
		var items []map[string]any
		if err := json.Unmarshal([]byte(out), &items); err != nil {
			t.Fatalf("decode %q: %v", out, err)
		}
		if len(items) != 1 || items[0]["last_ip"] != "203.0.113.7" || items[0]["last_used"] == nil || items[0]["name"] != "made by WordPress" {
			t.Fatalf("WordPress sees %v", items)
		}
	})

	t.Run("hashes are the release's own, and verify here", func(t *testing.T) {
		// WordPress 6.1 stores phpass ($P$B) for user and application
		// passwords alike; 6.8 and later store "$wp" + bcrypt of a
		// pre-hash for user passwords and BLAKE2b ($generic$) for
		// application passwords.
		wantUser, wantApp := "$P$B", "$P$B"
		if wpsite.AtLeast(t, "6.8") {
			wantUser, wantApp = "$wp$2y$", "$generic$"
		}
		pw := site.CreateApplicationPassword(t, site.AdminLogin, "hash format")
		out := site.PHP(t, `$app = '';
foreach ( WP_Application_Passwords::get_user_application_passwords( 1 ) as $item ) {
	if ( 'hash format' === $item['name'] ) {
		$app = $item['password'];
	}
}
echo json_encode( array( 'user' => get_userdata( 1 )->user_pass, 'app' => $app ) );`)
		var got struct{ User, App string }
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("decode %q: %v", out, err)
		}
		if !strings.HasPrefix(got.User, wantUser) || !wordpress.CheckPassword(site.AdminPassword, got.User) {
			t.Errorf("WordPress %s user password hash %q: want prefix %q, verified here", wpsite.Version(t), got.User, wantUser)
		}
		if !strings.HasPrefix(got.App, wantApp) || !wordpress.CheckApplicationPasswordHash(pw, got.App) {
			t.Errorf("WordPress %s application password hash %q: want prefix %q, verified here", wpsite.Version(t), got.App, wantApp)
		}
	})

	t.Run("users created here are WordPress users", func(t *testing.T) {
		wpID := site.CreateUser(t, "wpeditor", "wpeditor@example.com", "editor", "Secret-123")
		goID, err := wordpress.CreateUser(ctx, db, site.Prefix, "goeditor", "goeditor@example.com", "editor")
		if err != nil {
			t.Fatalf("CreateUser: %v", err)
		}
		wpMeta, goMeta := metaRows(t, db, site.Prefix, wpID), metaRows(t, db, site.Prefix, goID)
		for i := range wpMeta {
			if wpMeta[i].Key == "nickname" {
				wpMeta[i].Value = "goeditor"
			}
		}
		// CreateUser writes the meta of WordPress 6.1, the oldest
		// supported release. 7.1 also writes infinite_scrolling and makes
		// "modern" the default color scheme; it reads 6.1's users as they
		// are ("fresh" is still one of its schemes, a missing
		// infinite_scrolling counts as on).
		if wpsite.AtLeast(t, "7.1") {
			wpMeta = slices.DeleteFunc(wpMeta, func(m metaRow) bool { return m.Key == "infinite_scrolling" })
			for i := range wpMeta {
				if wpMeta[i].Key == "admin_color" && wpMeta[i].Value == "modern" {
					wpMeta[i].Value = "fresh"
				}
			}
		}
		if !slices.Equal(wpMeta, goMeta) {
			t.Fatalf("user meta differs:\nWordPress %v\nhere      %v", wpMeta, goMeta)
		}
		var wpRow, goRow struct {
			UserURL, ActivationKey, DisplayName, Nicename string
			Status                                        int
		}
		q := "SELECT user_url, user_activation_key, display_name, user_nicename, user_status FROM " + site.Prefix + "users WHERE ID = ?"
		if err := db.Raw(q, wpID).Row().Scan(&wpRow.UserURL, &wpRow.ActivationKey, &wpRow.DisplayName, &wpRow.Nicename, &wpRow.Status); err != nil {
			t.Fatal(err)
		}
		if err := db.Raw(q, goID).Row().Scan(&goRow.UserURL, &goRow.ActivationKey, &goRow.DisplayName, &goRow.Nicename, &goRow.Status); err != nil {
			t.Fatal(err)
		}
		wpRow.DisplayName, wpRow.Nicename = "goeditor", "goeditor"
		if wpRow != goRow {
			t.Fatalf("users row differs: WordPress %+v, here %+v", wpRow, goRow)
		}

		pw, err := wordpress.CreateApplicationPassword(ctx, db, site.Prefix, goID, "made here")
		if err != nil {
			t.Fatalf("CreateApplicationPassword: %v", err)
		}
		out := site.PHP(t, `$u = get_user_by( 'login', 'goeditor' );
$items = WP_Application_Passwords::get_user_application_passwords( $u->ID );
echo json_encode( array(
	'roles'     => $u->roles,
	'level'     => get_user_meta( $u->ID, $GLOBALS['wpdb']->prefix . 'user_level', true ),
	'can_edit'  => user_can( $u, 'edit_others_posts' ),
	'can_admin' => user_can( $u, 'manage_options' ),
	'in_use'    => WP_Application_Passwords::is_in_use(),
	'items'     => $items,
) );`)
		var res struct {
			Roles    []string         `json:"roles"`
			Level    string           `json:"level"`
			CanEdit  bool             `json:"can_edit"`
			CanAdmin bool             `json:"can_admin"`
			InUse    bool             `json:"in_use"`
			Items    []map[string]any `json:"items"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("decode %q: %v", out, err)
		}
		if !slices.Equal(res.Roles, []string{"editor"}) || res.Level != "7" || !res.CanEdit || res.CanAdmin || !res.InUse {
			t.Fatalf("WordPress sees %+v", res)
		}
		if len(res.Items) != 1 || res.Items[0]["name"] != "made here" || !strings.HasPrefix(fmt.Sprint(res.Items[0]["password"]), "$P$B") ||
			len(fmt.Sprint(res.Items[0]["uuid"])) != 36 || res.Items[0]["last_used"] != nil {
			t.Fatalf("WordPress sees items %v", res.Items)
		}
		r := httptest.NewRequest(http.MethodGet, "/wp-json/", nil)
		r.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("goeditor:"+pw)))
		u, err := auth.Authenticate(r, true)
		if err != nil || u == nil || u.ID != goID || u.Can("manage_options") || !u.Can("edit_others_posts") {
			t.Fatalf("Authenticate = %+v, %v", u, err)
		}
	})
}
