package wpsite

import (
	"crypto/md5"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// phpJSON runs code on the site and decodes the JSON it prints into v.
func phpJSON(t *testing.T, s *Site, code string, v any) {
	t.Helper()
	out := s.PHP(t, code)
	if err := json.Unmarshal([]byte(out), v); err != nil {
		t.Fatalf("decode PHP output %q: %v", out, err)
	}
}

func TestInstall(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want struct{ prefix, env string }
	}{
		{name: "defaults", opts: Options{}, want: struct{ prefix, env string }{"wp_", ""}},
		{name: "custom prefix, local, URL constants",
			opts: Options{Prefix: "t5x_", EnvironmentType: "local", URLConstants: true,
				ExtraConfig: "define( 'WPSITE_EXTRA', 'it\\'s here' );"},
			want: struct{ prefix, env string }{"t5x_", "local"}},
		{name: "https site URL", opts: Options{SiteURL: "https://shop.example.test/"},
			want: struct{ prefix, env string }{"wp_", ""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := Install(t, tc.opts)
			if s.Prefix != tc.want.prefix {
				t.Errorf("Prefix = %q, want %q", s.Prefix, tc.want.prefix)
			}
			var got struct {
				DBName      string            `json:"db_name"`
				Prefix      string            `json:"prefix"`
				ABSPATH     string            `json:"abspath"`
				ContentDir  string            `json:"content_dir"`
				SiteURL     string            `json:"siteurl"`
				Home        string            `json:"home"`
				Cookie      string            `json:"cookie"`
				Env         string            `json:"env"`
				Salts       map[string]string `json:"salts"`
				AdminID     int64             `json:"admin_id"`
				AdminIsRole bool              `json:"admin_is_administrator"`
				Extra       string            `json:"extra"`
			}
			phpJSON(t, s, `global $table_prefix;
$salts = array();
foreach ( array( 'AUTH_KEY', 'SECURE_AUTH_KEY', 'LOGGED_IN_KEY', 'NONCE_KEY', 'AUTH_SALT', 'SECURE_AUTH_SALT', 'LOGGED_IN_SALT', 'NONCE_SALT' ) as $name ) {
	$salts[ $name ] = constant( $name );
}
$admin = wp_authenticate( `+PHPString(s.AdminLogin)+`, `+PHPString(s.AdminPassword)+` );
echo json_encode( array(
	'db_name'                => DB_NAME,
	'prefix'                 => $table_prefix,
	'abspath'                => ABSPATH,
	'content_dir'            => WP_CONTENT_DIR,
	'siteurl'                => get_option( 'siteurl' ),
	'home'                   => get_option( 'home' ),
	'cookie'                 => LOGGED_IN_COOKIE,
	'env'                    => defined( 'WP_ENVIRONMENT_TYPE' ) ? WP_ENVIRONMENT_TYPE : '',
	'salts'                  => $salts,
	'admin_id'               => is_wp_error( $admin ) ? 0 : $admin->ID,
	'admin_is_administrator' => ! is_wp_error( $admin ) && in_array( 'administrator', $admin->roles, true ),
	'extra'                  => defined( 'WPSITE_EXTRA' ) ? WPSITE_EXTRA : '',
) );`, &got)

			if got.DBName != s.DBName || got.Prefix != tc.want.prefix {
				t.Errorf("DB_NAME, $table_prefix = %q, %q; want %q, %q", got.DBName, got.Prefix, s.DBName, tc.want.prefix)
			}
			if got.ABSPATH != WordPressDir || got.ContentDir != s.ContentDir {
				t.Errorf("ABSPATH, WP_CONTENT_DIR = %q, %q; want %q, %q", got.ABSPATH, got.ContentDir, WordPressDir, s.ContentDir)
			}
			wantURL := strings.TrimRight(tc.opts.SiteURL, "/")
			if wantURL == "" {
				wantURL = s.SiteURL
			}
			if got.SiteURL != wantURL || got.Home != wantURL || s.SiteURL != wantURL {
				t.Errorf("siteurl, home, Site.SiteURL = %q, %q, %q; want %q", got.SiteURL, got.Home, s.SiteURL, wantURL)
			}
			sum := md5.Sum([]byte(wantURL))
			if want := "wordpress_logged_in_" + hex.EncodeToString(sum[:]); got.Cookie != want {
				t.Errorf("LOGGED_IN_COOKIE = %q, want %q (md5 of the site URL)", got.Cookie, want)
			}
			if got.Env != tc.want.env {
				t.Errorf("WP_ENVIRONMENT_TYPE = %q, want %q", got.Env, tc.want.env)
			}
			if len(got.Salts) != len(SaltNames) {
				t.Errorf("PHP saw %d salts, want %d", len(got.Salts), len(SaltNames))
			}
			special := 0
			for _, name := range SaltNames {
				if got.Salts[name] != s.Salts[name] {
					t.Errorf("%s in PHP = %q, Site.Salts has %q", name, got.Salts[name], s.Salts[name])
				}
				if strings.ContainsAny(s.Salts[name], `'\`) {
					special++
				}
			}
			if special < 4 {
				t.Errorf("only %d salts contain a quote or backslash, want at least 4", special)
			}
			if got.AdminID != 1 || !got.AdminIsRole {
				t.Errorf("administrator login: id %d, administrator %v; want 1, true", got.AdminID, got.AdminIsRole)
			}
			if tc.opts.ExtraConfig != "" && got.Extra != "it's here" {
				t.Errorf("ExtraConfig constant = %q, want %q", got.Extra, "it's here")
			}

			// The DSN reaches the site's tables under its prefix.
			db, err := sql.Open("mysql", s.DSN)
			if err != nil {
				t.Fatalf("open %s: %v", s.DSN, err)
			}
			defer db.Close()
			var login, siteurl string
			if err := db.QueryRow("SELECT user_login FROM " + s.Prefix + "users WHERE ID = 1").Scan(&login); err != nil {
				t.Fatalf("read users table: %v", err)
			}
			if err := db.QueryRow("SELECT option_value FROM " + s.Prefix + "options WHERE option_name = 'siteurl'").Scan(&siteurl); err != nil {
				t.Fatalf("read options table: %v", err)
			}
			if login != s.AdminLogin || siteurl != wantURL {
				t.Errorf("database: admin login %q, siteurl %q; want %q, %q", login, siteurl, s.AdminLogin, wantURL)
			}
		})
	}
}

func TestInstallDropsDatabase(t *testing.T) {
	var dbName string
	t.Run("site", func(t *testing.T) {
		dbName = Install(t, Options{}).DBName
	})
	if dbName == "" {
		t.Skip("no site was installed")
	}
	db, err := sql.Open("mysql", "root@tcp("+DBAddr+")/")
	if err != nil {
		t.Fatalf("open MariaDB: %v", err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", dbName).Scan(&n); err != nil {
		t.Fatalf("look up database: %v", err)
	}
	if n != 0 {
		t.Errorf("database %s still exists after the test ended", dbName)
	}
}

func TestPHPString(t *testing.T) {
	s := Install(t, Options{})
	values := []string{"", "plain", "it's", `back\slash`, `trailing\`, `\'`, `\\'`, "$var {$x} \"dq\" \n\t", "ünïcødé"}
	var b strings.Builder
	b.WriteString("echo json_encode( array(")
	for _, v := range values {
		b.WriteString(PHPString(v) + ",")
	}
	b.WriteString(") );")
	var got []string
	phpJSON(t, s, b.String(), &got)
	if len(got) != len(values) {
		t.Fatalf("PHP returned %d values, want %d", len(got), len(values))
	}
	for i, v := range values {
		if got[i] != v {
			t.Errorf("PHPString(%q) reads back in PHP as %q", v, got[i])
		}
	}
}

// fatalRecorder is a testing.TB whose Fatal stops only the goroutine it
// was called on and records the message, to test that PHP fails a test.
type fatalRecorder struct {
	testing.TB
	mu  sync.Mutex
	msg string
}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.msg = fmt.Sprintf(format, args...)
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *fatalRecorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }

func TestPHPFailsOnErrors(t *testing.T) {
	s := Install(t, Options{})
	tests := []struct {
		name     string
		code     string
		wantFail string // substring of the failure; "" for success
		wantOut  string
	}{
		{name: "output", code: `echo get_bloginfo( 'name' );`, wantOut: "mailsvc test site"},
		{name: "notice is not a failure", code: `trigger_error( 'just so you know', E_USER_NOTICE ); echo 'ok';`, wantOut: "ok"},
		{name: "silenced warning", code: `@trigger_error( 'hidden', E_USER_WARNING ); echo 'ok';`, wantOut: "ok"},
		{name: "warning", code: `trigger_error( 'careful', E_USER_WARNING );`, wantFail: "careful"},
		{name: "undefined function", code: `wpsite_no_such_function();`, wantFail: "wpsite_no_such_function"},
		{name: "exception", code: `throw new RuntimeException( 'boom' );`, wantFail: "boom"},
		{name: "wpsite_fail", code: `wpsite_fail( 'reason given' );`, wantFail: "reason given"},
		{name: "exit code", code: `exit( 7 );`, wantFail: "exited with 7"},
		{name: "parse error", code: `echo 'unterminated;`, wantFail: "exited with 255"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &fatalRecorder{TB: t}
			var out string
			done := make(chan struct{})
			go func() {
				defer close(done)
				out = s.PHP(r, tc.code)
			}()
			<-done
			switch {
			case tc.wantFail == "" && r.msg != "":
				t.Fatalf("PHP failed the test: %s", r.msg)
			case tc.wantFail == "" && out != tc.wantOut:
				t.Errorf("PHP printed %q, want %q", out, tc.wantOut)
			case tc.wantFail != "" && !strings.Contains(r.msg, tc.wantFail):
				t.Errorf("PHP failure = %q, want it to mention %q", r.msg, tc.wantFail)
			}
		})
	}
}

// outcomeRecorder is a testing.TB that records whether the code under test
// skipped or failed, stopping only the goroutine it runs on.
type outcomeRecorder struct {
	testing.TB
	outcome, msg string
}

func (r *outcomeRecorder) Skipf(format string, args ...any) {
	r.outcome, r.msg = "skip", fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (r *outcomeRecorder) Fatalf(format string, args ...any) {
	r.outcome, r.msg = "fatal", fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestMissingToolsSkipOutsideCI(t *testing.T) {
	tests := []struct {
		ci   string
		want string
	}{
		{ci: "", want: "skip"},
		{ci: "true", want: "fatal"},
		{ci: "1", want: "fatal"},
	}
	for _, tc := range tests {
		t.Run("CI="+tc.ci, func(t *testing.T) {
			t.Setenv("CI", tc.ci)
			r := &outcomeRecorder{TB: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				toolsMissing(r, "php-cli is not installed")
			}()
			<-done
			if r.outcome != tc.want {
				t.Errorf("outcome %q, want %q", r.outcome, tc.want)
			}
			if !strings.Contains(r.msg, "php-cli is not installed") || !strings.Contains(r.msg, "install-deps.sh") {
				t.Errorf("message %q should name the missing tool and scripts/install-deps.sh", r.msg)
			}
		})
	}
}
