package wordpress

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/mailsvc/mailsvc/core"
)

// Fixture values from WordPress core runs (research §12.2–12.5).
const (
	fxNow         = 1699990000 // tick ceil(now/43200) = 39352
	fxToken       = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ"
	fxVerifier    = "46a2199782c8827f0ac56f503be9d39efee97f40a736b92cc7d7c5f825cfd851"
	fxAdminPass   = "$P$BVaXtDXwf/ceSVp8VpLKx8bS2Y4O5F/" // "123456"
	fxCookieName  = "wordpress_logged_in_c984d06aafbecf6bc55569f964148ea3"
	fxCookieValue = "admin%7C1700000000%7CabcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ%7C7f35902a3917205aee7502d70772f2cf387e25fb05360daa3f7ebab01f768857"
	fxNonce       = "6906a6710d" // tick 39352, uid 1, fxToken
	fxNoncePrev   = "0b3157584b" // tick 39351
	fxNonceAnon   = "4fb4e50dc2" // tick 39352, uid 0, ""
	fxAppPassword = "abcdefghijklmnopqrstuvwx"
	fxAppHash     = "$generic$ZLGy4f-xaDioDcoHII2Yz6GofsboINn0UnN4kA6m"
)

// fxAppPasswords is the admin's _application_passwords: an old 6.1 item
// (phpass of "123456") then a 6.8 item with an extra key a plugin added.
const fxAppPasswords = `a:2:{i:0;a:7:{s:4:"uuid";s:5:"u-old";s:6:"app_id";s:0:"";s:4:"name";s:3:"old";s:8:"password";s:34:"` + fxAdminPass + `";s:7:"created";i:1600000000;s:9:"last_used";N;s:7:"last_ip";N;}i:1;a:8:{s:4:"uuid";s:5:"u-new";s:6:"app_id";s:0:"";s:4:"name";s:3:"new";s:8:"password";s:49:"` + fxAppHash + `";s:7:"created";i:1690000000;s:9:"last_used";N;s:7:"last_ip";N;s:5:"extra";s:4:"kept";}}`

func fxSessions(exp int64) string {
	return fmt.Sprintf(`a:1:{s:64:"%s";a:4:{s:10:"expiration";i:%d;s:2:"ip";s:11:"203.0.113.7";s:2:"ua";s:11:"Mozilla/5.0";s:5:"login";i:1698790400;}}`, fxVerifier, exp)
}

// seedSite creates the WordPress tables and the fixture users: admin (ID
// 1) and editor (ID 2).
func seedSite(t *testing.T, db *gorm.DB) {
	t.Helper()
	ctx := context.Background()
	if err := EnsureSchema(ctx, db, "wp_", WithSiteURL("https://example.com/")); err != nil {
		t.Fatalf("EnsureSchema: %v", err)
	}
	mustExec(t, db, "INSERT INTO wp_options (option_name, option_value, autoload) VALUES ('using_application_passwords', '1', 'yes')")
	ins := "INSERT INTO wp_users (ID, user_login, user_pass, user_nicename, user_email, user_url, user_registered, user_activation_key, user_status, display_name) VALUES (?, ?, ?, ?, ?, '', '2023-11-01 00:00:00', '', 0, ?)"
	mustExec(t, db, ins, 1, "admin", fxAdminPass, "admin", "admin@example.com", "admin")
	mustExec(t, db, ins, 2, "editor", "$P$B12345678Eg2z6eqcenWjcSosVt4mZ.", "editor", "editor@example.com", "Editor")
	meta := "INSERT INTO wp_usermeta (user_id, meta_key, meta_value) VALUES (?, ?, ?)"
	mustExec(t, db, meta, 1, "wp_capabilities", `a:1:{s:13:"administrator";b:1;}`)
	mustExec(t, db, meta, 1, "session_tokens", fxSessions(1700000000))
	mustExec(t, db, meta, 1, "_application_passwords", fxAppPasswords)
	mustExec(t, db, meta, 2, "wp_capabilities", `a:2:{s:6:"editor";b:1;s:10:"edit_posts";b:0;}`)
}

func newFixtureAuth(db *gorm.DB, now int64, env string) (*Authenticator, error) {
	src, err := NewGormSource(db, "wp_")
	if err != nil {
		return nil, err
	}
	return NewAuthenticator(src, Site{Salts: standardSalts, EnvironmentType: env},
		WithClock(func() time.Time { return time.Unix(now, 0) })), nil
}

func basic(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// signCookie is wp_generate_auth_cookie() for the logged_in scheme with
// the 6.8 pass_frag rule (TestCookieVectors anchors it to core's output).
func signCookie(t *testing.T, login, userPass string, exp int64, token string) string {
	t.Helper()
	s := NewSalter(standardSalts, nil, nil)
	e := strconv.FormatInt(exp, 10)
	key, err := s.Hash(context.Background(), login+"|"+PassFrag68(userPass)+"|"+e+"|"+token, "logged_in")
	if err != nil {
		t.Fatal(err)
	}
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(login + "|" + e + "|" + token))
	return strings.Join([]string{login, e, token, hex.EncodeToString(m.Sum(nil))}, "%7C")
}

type authCase struct {
	name     string
	method   string
	target   string
	headers  map[string]string
	secure   bool
	env      string
	now      int64
	setup    func(t *testing.T, db *gorm.DB)
	wantUser string // login; "" means anonymous
	wantVia  string
	wantErr  bool // EUNAUTHORIZED
}

func authCases(t *testing.T) []authCase {
	cookie := fxCookieName + "=" + fxCookieValue
	tampered := strings.Replace(cookie, "7f3590", "7f3591", 1)
	return []authCase{
		{name: "no credentials is anonymous"},
		{name: "unrelated cookies are anonymous", headers: map[string]string{"Cookie": "a=b; wp-settings-1=x"}},
		{name: "bearer header is not ours", headers: map[string]string{"Authorization": "Bearer abc"}},
		{name: "cookie + X-WP-Nonce", headers: map[string]string{"Cookie": cookie, "X-WP-Nonce": fxNonce}, wantUser: "admin", wantVia: "cookie"},
		{name: "cookie + previous tick nonce", headers: map[string]string{"Cookie": cookie, "X-WP-Nonce": fxNoncePrev}, wantUser: "admin", wantVia: "cookie"},
		{name: "cookie + _wpnonce query", target: "/?_wpnonce=" + fxNonce, headers: map[string]string{"Cookie": cookie}, wantUser: "admin", wantVia: "cookie"},
		{name: "_wpnonce wins over header", target: "/?_wpnonce=" + fxNonce, headers: map[string]string{"Cookie": cookie, "X-WP-Nonce": "0000000000"}, wantUser: "admin", wantVia: "cookie"},
		{name: "bad _wpnonce loses to good header", target: "/?_wpnonce=0000000000", headers: map[string]string{"Cookie": cookie, "X-WP-Nonce": fxNonce}, wantErr: true},
		{name: "cookie among others, with spaces", headers: map[string]string{"Cookie": "x=1;  " + cookie + "; y=2", "X-WP-Nonce": fxNonce}, wantUser: "admin", wantVia: "cookie"},
		{name: "cookie without nonce", headers: map[string]string{"Cookie": cookie}, wantErr: true},
		{name: "cookie + bad nonce", headers: map[string]string{"Cookie": cookie, "X-WP-Nonce": "6906a6710e"}, wantErr: true},
		{name: "cookie + nonce two ticks old", now: fxNow + 86400, headers: map[string]string{"Cookie": signCookie(t, "admin", fxAdminPass, fxNow+90000, fxToken), "X-WP-Nonce": fxNonce}, wantErr: true,
			setup: func(t *testing.T, db *gorm.DB) {
				mustExec(t, db, "UPDATE wp_usermeta SET meta_value = ? WHERE meta_key = 'session_tokens'", fxSessions(fxNow+90000))
			}},
		{name: "anonymous nonce for another user", headers: map[string]string{"Cookie": cookie, "X-WP-Nonce": fxNonceAnon}, wantErr: true},
		{name: "tampered hmac", headers: map[string]string{"Cookie": tampered, "X-WP-Nonce": fxNonce}, wantErr: true},
		{name: "upper-case hmac", headers: map[string]string{"Cookie": fxCookieName + "=" + fxCookieValue[:len(fxCookieValue)-64] + strings.ToUpper(fxCookieValue[len(fxCookieValue)-64:]), "X-WP-Nonce": fxNonce}, wantErr: true},
		{name: "three-part cookie", headers: map[string]string{"Cookie": fxCookieName + "=admin%7C1700000000%7Cabc", "X-WP-Nonce": fxNonce}, wantErr: true},
		{name: "expired cookie", now: 1700000001, headers: map[string]string{"Cookie": cookie, "X-WP-Nonce": fxNonce}, wantErr: true},
		{name: "expired cookie, POST grace but session expired", method: http.MethodPost, now: 1700000100, headers: map[string]string{"Cookie": cookie, "X-WP-Nonce": fxNonce}, wantErr: true},
		{name: "expired cookie, POST grace with longer session", method: http.MethodPost, now: 1700000100, headers: map[string]string{"Cookie": cookie, "X-WP-Nonce": fxNonce}, wantUser: "admin", wantVia: "cookie",
			setup: func(t *testing.T, db *gorm.DB) {
				mustExec(t, db, "UPDATE wp_usermeta SET meta_value = ? WHERE meta_key = 'session_tokens'", fxSessions(1700007200))
			}},
		{name: "expired cookie, GET has no grace", now: 1700000100, headers: map[string]string{"Cookie": cookie, "X-WP-Nonce": fxNonce}, wantErr: true,
			setup: func(t *testing.T, db *gorm.DB) {
				mustExec(t, db, "UPDATE wp_usermeta SET meta_value = ? WHERE meta_key = 'session_tokens'", fxSessions(1700007200))
			}},
		{name: "session destroyed (logout)", headers: map[string]string{"Cookie": cookie, "X-WP-Nonce": fxNonce}, wantErr: true,
			setup: func(t *testing.T, db *gorm.DB) {
				mustExec(t, db, "UPDATE wp_usermeta SET meta_value = 'a:0:{}' WHERE meta_key = 'session_tokens'")
			}},
		{name: "legacy int session record", headers: map[string]string{"Cookie": cookie, "X-WP-Nonce": fxNonce}, wantUser: "admin", wantVia: "cookie",
			setup: func(t *testing.T, db *gorm.DB) {
				mustExec(t, db, "UPDATE wp_usermeta SET meta_value = ? WHERE meta_key = 'session_tokens'", `a:1:{s:64:"`+fxVerifier+`";i:1700000000;}`)
			}},
		{name: "password changed invalidates cookie", headers: map[string]string{"Cookie": cookie, "X-WP-Nonce": fxNonce}, wantErr: true,
			setup: func(t *testing.T, db *gorm.DB) {
				mustExec(t, db, "UPDATE wp_users SET user_pass = '$P$BzzzzzzzzEg2z6eqcenWjcSosVt4mZ.' WHERE ID = 1")
			}},
		{name: "user deleted", headers: map[string]string{"Cookie": cookie, "X-WP-Nonce": fxNonce}, wantErr: true,
			setup: func(t *testing.T, db *gorm.DB) { mustExec(t, db, "DELETE FROM wp_users WHERE ID = 1") }},
		{name: "nonce without cookie, valid for user 0", headers: map[string]string{"X-WP-Nonce": fxNonceAnon}},
		{name: "nonce without cookie, invalid", headers: map[string]string{"X-WP-Nonce": fxNonce}, wantErr: true},

		{name: "app password, chunked", secure: true, headers: map[string]string{"Authorization": basic("admin", "abcd efgh ijkl mnop qrst uvwx")}, wantUser: "admin", wantVia: "application_password"},
		{name: "app password, plain", secure: true, headers: map[string]string{"Authorization": basic("admin", fxAppPassword)}, wantUser: "admin", wantVia: "application_password"},
		{name: "app password, login in upper case", secure: true, headers: map[string]string{"Authorization": basic("ADMIN", fxAppPassword)}, wantUser: "admin", wantVia: "application_password"},
		{name: "app password, email", secure: true, headers: map[string]string{"Authorization": basic("admin@example.com", fxAppPassword)}, wantUser: "admin", wantVia: "application_password"},
		{name: "app password, legacy phpass item", secure: true, headers: map[string]string{"Authorization": basic("admin", "123456")}, wantUser: "admin", wantVia: "application_password"},
		{name: "app password, lower-case scheme", secure: true, headers: map[string]string{"Authorization": "basic " + base64.StdEncoding.EncodeToString([]byte("admin:"+fxAppPassword))}, wantUser: "admin", wantVia: "application_password"},
		{name: "app password over HTTP", headers: map[string]string{"Authorization": basic("admin", fxAppPassword)}, wantErr: true},
		{name: "app password over HTTP, environment local", env: "local", headers: map[string]string{"Authorization": basic("admin", fxAppPassword)}, wantUser: "admin", wantVia: "application_password"},
		{name: "app password over HTTP, environment development", env: "development", headers: map[string]string{"Authorization": basic("admin", fxAppPassword)}, wantErr: true},
		{name: "app password, wrong", secure: true, headers: map[string]string{"Authorization": basic("admin", "abcdefghijklmnopqrstuvwy")}, wantErr: true},
		{name: "app password, unknown user", secure: true, headers: map[string]string{"Authorization": basic("nobody", fxAppPassword)}, wantErr: true},
		{name: "app password, unknown email", secure: true, headers: map[string]string{"Authorization": basic("nobody@example.com", fxAppPassword)}, wantErr: true},
		{name: "app password, user without any", secure: true, headers: map[string]string{"Authorization": basic("editor", fxAppPassword)}, wantErr: true},
		{name: "app password of another user", secure: true, headers: map[string]string{"Authorization": basic("editor", "123456")}, wantErr: true},
		{name: "login password is never accepted", secure: true, headers: map[string]string{"Authorization": basic("editor", "password")}, wantErr: true},
		{name: "malformed Basic header", secure: true, headers: map[string]string{"Authorization": "Basic !!!"}, wantErr: true},
		{name: "Basic without colon", secure: true, headers: map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("admin"))}, wantErr: true},
		{name: "app passwords never used on the site", secure: true, headers: map[string]string{"Authorization": basic("admin", fxAppPassword)}, wantErr: true,
			setup: func(t *testing.T, db *gorm.DB) {
				mustExec(t, db, "DELETE FROM wp_options WHERE option_name = 'using_application_passwords'")
			}},
		{name: "valid cookie without nonce beats valid Basic", secure: true, headers: map[string]string{"Cookie": cookie, "Authorization": basic("admin", fxAppPassword)}, wantErr: true},
		{name: "tampered cookie, valid Basic", secure: true, headers: map[string]string{"Cookie": tampered, "Authorization": basic("admin", fxAppPassword)}, wantUser: "admin", wantVia: "application_password"},
		{name: "valid Basic ignores a bogus nonce", secure: true, headers: map[string]string{"Authorization": basic("admin", fxAppPassword), "X-WP-Nonce": "bogus"}, wantUser: "admin", wantVia: "application_password"},
		{name: "editor via cookie", headers: map[string]string{"Cookie": fxCookieName + "=" + signCookie(t, "editor", "$P$B12345678Eg2z6eqcenWjcSosVt4mZ.", 1700000000, fxToken), "X-WP-Nonce": "x"}, wantErr: true},
	}
}

func TestAuthenticate(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		for _, tc := range authCases(t) {
			t.Run(tc.name, func(t *testing.T) {
				// Each case gets its own table prefix-free copy of the
				// fixture: reset by deleting and re-seeding.
				for _, tbl := range []string{"wp_users", "wp_usermeta", "wp_options"} {
					db.Exec("DROP TABLE IF EXISTS " + tbl)
				}
				seedSite(t, db)
				if tc.setup != nil {
					tc.setup(t, db)
				}
				now := tc.now
				if now == 0 {
					now = fxNow
				}
				a, err := newFixtureAuth(db, now, tc.env)
				if err != nil {
					t.Fatal(err)
				}
				method, target := tc.method, tc.target
				if method == "" {
					method = http.MethodGet
				}
				if target == "" {
					target = "/wp-json/mail-svc/v1/settings"
				}
				r := httptest.NewRequest(method, target, nil)
				r.RemoteAddr = "198.51.100.9:4567"
				for k, v := range tc.headers {
					r.Header.Set(k, v)
				}
				u, err := a.Authenticate(r, tc.secure)
				switch {
				case tc.wantErr:
					if core.ErrorCode(err) != core.EUNAUTHORIZED || u != nil {
						t.Fatalf("Authenticate = %+v, %v; want EUNAUTHORIZED", u, err)
					}
				case tc.wantUser == "":
					if err != nil || u != nil {
						t.Fatalf("Authenticate = %+v, %v; want anonymous", u, err)
					}
				default:
					if err != nil || u == nil {
						t.Fatalf("Authenticate = %+v, %v; want %s", u, err, tc.wantUser)
					}
					if u.Login != tc.wantUser || u.Via != tc.wantVia {
						t.Fatalf("user %s via %s, want %s via %s", u.Login, u.Via, tc.wantUser, tc.wantVia)
					}
					if u.ID != 1 || u.Email != "admin@example.com" || !slices.Equal(u.Roles, []string{"administrator"}) || !u.Can("manage_options") || !u.Can("exist") {
						t.Fatalf("admin user loaded wrong: %+v", u)
					}
				}
			})
		}
	})
}

// A second user: roles and per-user revocations come through.
func TestAuthenticateEditorCapabilities(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		seedSite(t, db)
		mustExec(t, db, "INSERT INTO wp_usermeta (user_id, meta_key, meta_value) VALUES (2, 'session_tokens', ?)", fxSessions(1700000000))
		a, err := newFixtureAuth(db, fxNow, "")
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Cookie", fxCookieName+"="+signCookie(t, "editor", "$P$B12345678Eg2z6eqcenWjcSosVt4mZ.", 1700000000, fxToken))
		r.Header.Set("X-WP-Nonce", a.CreateNonce(&core.User{ID: 2}, fxToken, "wp_rest"))
		u, err := a.Authenticate(r, false)
		if err != nil || u == nil {
			t.Fatalf("Authenticate = %v, %v", u, err)
		}
		if u.ID != 2 || !slices.Equal(u.Roles, []string{"editor"}) {
			t.Fatalf("user = %+v", u)
		}
		for c, want := range map[string]bool{"moderate_comments": true, "edit_posts": false, "manage_options": false, "editor": true, "exist": true} {
			if u.Can(c) != want {
				t.Errorf("Can(%s) = %v, want %v", c, u.Can(c), want)
			}
		}
	})
}

// Usage is recorded at most once a day, in place, keeping order, unknown
// keys and the other items.
func TestApplicationPasswordUsageRecorded(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		seedSite(t, db)
		call := func(now int64, ip string) {
			t.Helper()
			a, err := newFixtureAuth(db, now, "")
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = ip + ":1234"
			r.Header.Set("Authorization", basic("admin", fxAppPassword))
			if u, err := a.Authenticate(r, true); err != nil || u == nil {
				t.Fatalf("Authenticate = %v, %v", u, err)
			}
		}
		want := func(lastUsed int64, ip string) string {
			return strings.Replace(fxAppPasswords,
				`s:9:"last_used";N;s:7:"last_ip";N;s:5:"extra"`,
				fmt.Sprintf(`s:9:"last_used";i:%d;s:7:"last_ip";s:%d:"%s";s:5:"extra"`, lastUsed, len(ip), ip), 1)
		}
		call(fxNow, "203.0.113.7")
		if got := userMeta(t, db, "wp_", 1, "_application_passwords"); got != want(fxNow, "203.0.113.7") {
			t.Fatalf("after first use:\n%s\nwant\n%s", got, want(fxNow, "203.0.113.7"))
		}
		call(fxNow+86399, "198.51.100.1") // within a day: unchanged
		if got := userMeta(t, db, "wp_", 1, "_application_passwords"); got != want(fxNow, "203.0.113.7") {
			t.Fatalf("within a day the item changed:\n%s", got)
		}
		call(fxNow+86400, "198.51.100.1")
		if got := userMeta(t, db, "wp_", 1, "_application_passwords"); got != want(fxNow+86400, "198.51.100.1") {
			t.Fatalf("after a day:\n%s\nwant\n%s", got, want(fxNow+86400, "198.51.100.1"))
		}
	})
}

// The SMTP entry point: same rules, no HTTPS requirement, IP from context.
func TestCheckApplicationPassword(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		seedSite(t, db)
		a, err := newFixtureAuth(db, fxNow, "")
		if err != nil {
			t.Fatal(err)
		}
		ctx := ContextWithRemoteIP(context.Background(), "192.0.2.5")
		u, err := a.CheckApplicationPassword(ctx, "admin", "abcd-efgh-ijkl-mnop-qrst-uvwx")
		if err != nil || u == nil || u.Login != "admin" || u.Via != "smtp" || !u.Can("manage_options") {
			t.Fatalf("CheckApplicationPassword = %+v, %v", u, err)
		}
		if got := userMeta(t, db, "wp_", 1, "_application_passwords"); !strings.Contains(got, `s:7:"last_ip";s:9:"192.0.2.5";`) {
			t.Fatalf("last_ip not recorded: %s", got)
		}
		if u, err := a.CheckApplicationPassword(ctx, "admin", "wrong"); core.ErrorCode(err) != core.EUNAUTHORIZED || u != nil {
			t.Fatalf("wrong password = %+v, %v", u, err)
		}
	})
}

// fakeSource is an in-memory Source for unit tests of the algorithms.
type fakeSource struct {
	options map[string]string
	users   []UserRow
	meta    map[int64]map[string]string
}

func (f *fakeSource) Prefix() string { return "wp_" }
func (f *fakeSource) Option(_ context.Context, name string) (string, bool, error) {
	v, ok := f.options[name]
	return v, ok, nil
}
func (f *fakeSource) find(match func(UserRow) bool) (*UserRow, error) {
	for _, u := range f.users {
		if match(u) {
			u := u
			return &u, nil
		}
	}
	return nil, nil
}
func (f *fakeSource) UserByLogin(_ context.Context, login string) (*UserRow, error) {
	return f.find(func(u UserRow) bool { return strings.EqualFold(u.Login, login) })
}
func (f *fakeSource) UserByEmail(_ context.Context, email string) (*UserRow, error) {
	return f.find(func(u UserRow) bool { return strings.EqualFold(u.Email, email) })
}
func (f *fakeSource) UserByID(_ context.Context, id int64) (*UserRow, error) {
	return f.find(func(u UserRow) bool { return u.ID == id })
}
func (f *fakeSource) UserMeta(_ context.Context, id int64, key string) (string, bool, error) {
	v, ok := f.meta[id][key]
	return v, ok, nil
}
func (f *fakeSource) SetUserMeta(_ context.Context, id int64, key, value string) error {
	if f.meta[id] == nil {
		f.meta[id] = map[string]string{}
	}
	f.meta[id][key] = value
	return nil
}

// TestCookieVectors checks every row of core's cookie table (research
// §12.2): for each user_pass, the cookies WordPress 6.1 and 6.8 issue are
// both accepted, whichever pass_frag rule they used.
func TestCookieVectors(t *testing.T) {
	debian := map[string]string{"SECRET_KEY": "debian-secret-key-ABCDEFGHIJKLMNOPQRSTUVWXYZ"}
	debianOpts := map[string]string{"logged_in_salt": "db-logged-in-salt", "nonce_salt": "db-nonce-salt", "logged_in_key": "db-logged-in-key"}
	tests := []struct {
		name     string
		salts    map[string]string
		options  map[string]string
		userPass string
		hmac     string
		nonce    string
	}{
		{"phpass", standardSalts, nil, "$P$BVaXtDXwf/ceSVp8VpLKx8bS2Y4O5F/", "7f35902a3917205aee7502d70772f2cf387e25fb05360daa3f7ebab01f768857", fxNonce},
		{"$wp 6.8", standardSalts, nil, "$wp$2y$10$abcdefghijklmnopqrstuumEoo.ju1cwQjKzeYRkDL5edk3VdeiFy", "382e9c56d52d29f0920f7b8152d0d451db862c9f2e18dd5c3574b6eed72b6073", fxNonce},
		{"$wp 6.1 rule", standardSalts, nil, "$wp$2y$10$abcdefghijklmnopqrstuumEoo.ju1cwQjKzeYRkDL5edk3VdeiFy", "da34a0522970228d60f2cc9d538ff028e420a2c219f9806a1e9c9b5e2ce1bb25", fxNonce},
		{"bcrypt", standardSalts, nil, "$2y$10$abcdefghijklmnopqrstuu5Lo0g67CiD3M4RpN1BmBb4Crp5w7dbK", "f02e6c37dd7546729e762d5b6c7facf46253402fd527cd5fc335d40fe6e5fb45", fxNonce},
		{"md5 6.1", standardSalts, nil, "5f4dcc3b5aa765d61d8327deb882cf99", "35535c9677d95b90d04e48645a8137f385c1a104fc254e6da86539c2558a7333", fxNonce},
		{"md5 6.8", standardSalts, nil, "5f4dcc3b5aa765d61d8327deb882cf99", "47c2142d0d207b00ee2d0a69893b2ab040dad5928b459fe32020c9b6859ca4d5", fxNonce},
		{"debian salts", debian, debianOpts, "$P$BVaXtDXwf/ceSVp8VpLKx8bS2Y4O5F/", "9c733bb97fa0d5295cbd6deeafa91021bfd30b7c0336da0130a4bfcc621685df", "868a40e149"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := map[string]string{"siteurl": "https://example.com", "wp_user_roles": DefaultUserRoles()}
			for k, v := range tc.options {
				opts[k] = v
			}
			src := &fakeSource{
				options: opts,
				users:   []UserRow{{ID: 1, Login: "admin", Pass: tc.userPass, Email: "admin@example.com"}},
				meta:    map[int64]map[string]string{1: {"session_tokens": fxSessions(1700000000), "wp_capabilities": `a:1:{s:13:"administrator";b:1;}`}},
			}
			a := NewAuthenticator(src, Site{Salts: tc.salts}, WithClock(func() time.Time { return time.Unix(fxNow, 0) }))
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.Header.Set("Cookie", fxCookieName+"=admin%7C1700000000%7C"+fxToken+"%7C"+tc.hmac)
			r.Header.Set("X-WP-Nonce", tc.nonce)
			u, err := a.Authenticate(r, false)
			if err != nil || u == nil || u.ID != 1 {
				t.Fatalf("Authenticate = %+v, %v", u, err)
			}
			if got := a.CreateNonce(u, fxToken, "wp_rest"); got != tc.nonce {
				t.Fatalf("CreateNonce = %q, want %q", got, tc.nonce)
			}
			if got := a.SessionToken(r); got != fxToken {
				t.Fatalf("SessionToken = %q", got)
			}
		})
	}
}

func TestNonceVectors(t *testing.T) {
	a := NewAuthenticator(&fakeSource{}, Site{Salts: standardSalts}, WithClock(func() time.Time { return time.Unix(1700000000, 0) }))
	if got := a.nonceTick(); got != 39352 {
		t.Fatalf("tick = %d", got)
	}
	tests := []struct {
		tick  int64
		uid   int64
		token string
		want  string
	}{
		{39352, 1, fxToken, "6906a6710d"},
		{39351, 1, fxToken, "0b3157584b"},
		{39352, 0, "", "4fb4e50dc2"},
		{39351, 0, "", "c52d28a957"},
	}
	for _, tc := range tests {
		got, err := a.nonceFor(context.Background(), tc.tick, "wp_rest", tc.uid, tc.token)
		if err != nil || got != tc.want {
			t.Errorf("nonce(%d,%d) = %q, %v; want %q", tc.tick, tc.uid, got, err, tc.want)
		}
	}
	// Without any nonce salt, CreateNonce cannot produce one and nothing
	// verifies.
	b := NewAuthenticator(&fakeSource{}, Site{}, WithClock(func() time.Time { return time.Unix(1700000000, 0) }))
	if got := b.CreateNonce(nil, "", "wp_rest"); got != "" {
		t.Fatalf("CreateNonce without salts = %q", got)
	}
}

// Missing salts mean no cookie can be valid: 401, not an internal error.
func TestCookieWithoutSalts(t *testing.T) {
	src := &fakeSource{
		options: map[string]string{"siteurl": "https://example.com"},
		users:   []UserRow{{ID: 1, Login: "admin", Pass: fxAdminPass}},
		meta:    map[int64]map[string]string{1: {"session_tokens": fxSessions(1700000000)}},
	}
	a := NewAuthenticator(src, Site{}, WithClock(func() time.Time { return time.Unix(fxNow, 0) }))
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Cookie", fxCookieName+"="+fxCookieValue)
	r.Header.Set("X-WP-Nonce", fxNonce)
	if u, err := a.Authenticate(r, false); core.ErrorCode(err) != core.EUNAUTHORIZED || u != nil {
		t.Fatalf("Authenticate = %+v, %v", u, err)
	}
}

func TestCookieNameOverrides(t *testing.T) {
	src := &fakeSource{options: map[string]string{"siteurl": "http://127.0.0.1:8761/"}}
	tests := []struct {
		site Site
		want string
	}{
		{Site{}, "wordpress_logged_in_6ae79a6c2c7601edcbbbc14da14a6eed"},
		{Site{SiteURL: "https://example.com/"}, "wordpress_logged_in_c984d06aafbecf6bc55569f964148ea3"},
		{Site{CookieHash: "abc"}, "wordpress_logged_in_abc"},
		{Site{LoggedInCookie: "my_cookie"}, "my_cookie"},
	}
	for _, tc := range tests {
		a := NewAuthenticator(src, tc.site)
		if got, err := a.loggedInCookieName(context.Background()); err != nil || got != tc.want {
			t.Errorf("%+v: cookie name %q, %v; want %q", tc.site, got, err, tc.want)
		}
	}
}

// Research §12.6: capability resolution with the default roles.
func TestCapabilities(t *testing.T) {
	a := NewAuthenticator(&fakeSource{options: map[string]string{"wp_user_roles": DefaultUserRoles()}}, Site{})
	defs, err := a.roleDefinitions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		meta                  string
		roles                 []string
		editPosts, manageOpts bool
		extra                 string
	}{
		{`a:1:{s:6:"editor";b:1;}`, []string{"editor"}, true, false, ""},
		{`a:1:{s:6:"editor";b:0;}`, []string{"editor"}, true, false, ""},
		{`a:2:{s:6:"editor";b:1;s:10:"edit_posts";b:0;}`, []string{"editor"}, false, false, ""},
		{`a:1:{s:14:"manage_options";b:1;}`, []string{}, false, true, ""},
		{`a:1:{s:14:"manage_options";s:1:"1";}`, []string{}, false, true, ""},
		{`a:1:{s:14:"manage_options";s:1:"0";}`, []string{}, false, false, ""},
		{`a:1:{s:5:"ghost";b:1;}`, []string{}, false, false, "ghost"},
		{`a:1:{s:13:"administrator";b:1;}`, []string{"administrator"}, true, true, "update_core"},
		{`a:2:{s:10:"subscriber";b:1;s:6:"author";b:1;}`, []string{"subscriber", "author"}, true, false, "upload_files"},
		{`not serialized`, []string{}, false, false, ""},
		{`a:1:{s:12:"do_not_allow";b:1;}`, []string{}, false, false, ""},
	}
	for _, tc := range tests {
		roles, caps := Capabilities(defs, tc.meta)
		if !slices.Equal(roles, tc.roles) || caps["edit_posts"] != tc.editPosts || caps["manage_options"] != tc.manageOpts || !caps["exist"] || caps["do_not_allow"] {
			t.Errorf("%s: roles %v edit_posts %v manage_options %v", tc.meta, roles, caps["edit_posts"], caps["manage_options"])
		}
		if tc.extra != "" && !caps[tc.extra] {
			t.Errorf("%s: missing %s", tc.meta, tc.extra)
		}
	}
	_, admin := Capabilities(defs, `a:1:{s:13:"administrator";b:1;}`)
	// 61 role caps + "administrator" itself + "exist".
	if len(admin) != 63 {
		t.Errorf("administrator has %d caps, want 63", len(admin))
	}
}
