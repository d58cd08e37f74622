package wpsite

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// appPasswordResult runs wp_authenticate_application_password(null, login,
// pw) as a REST request would and returns the user's login or the error
// code. https sets $_SERVER['HTTPS'] = 'on' first, because WordPress
// accepts application passwords only when is_ssl() is true or the
// environment type is "local".
func appPasswordResult(t *testing.T, s *Site, login, pw string, https bool) string {
	t.Helper()
	setHTTPS := ""
	if https {
		setHTTPS = "$_SERVER['HTTPS'] = 'on';"
	}
	return s.PHP(t, fmt.Sprintf(`%s
define( 'REST_REQUEST', true );
$user = wp_authenticate_application_password( null, %s, %s );
if ( is_wp_error( $user ) ) {
	echo 'error:' . $user->get_error_code();
} elseif ( $user instanceof WP_User ) {
	echo 'user:' . $user->user_login;
} else {
	echo 'none';
}`, setHTTPS, PHPString(login), PHPString(pw)))
}

// chunk writes pw in groups of four separated by spaces, as WordPress
// shows application passwords.
func chunk(pw string) string {
	var parts []string
	for len(pw) > 4 {
		parts = append(parts, pw[:4])
		pw = pw[4:]
	}
	return strings.Join(append(parts, pw), " ")
}

func TestApplicationPasswords(t *testing.T) {
	s := Install(t, Options{})
	editorID := s.CreateUser(t, "ed", "ed@example.com", "administrator", "ed-login-pw")
	subID := s.CreateUser(t, "sue", "sue@example.com", "subscriber", "sue-login-pw")
	if editorID == subID || editorID <= 1 || subID <= 1 {
		t.Fatalf("user IDs %d, %d: want two distinct IDs after the installer's admin", editorID, subID)
	}
	edPW := s.CreateApplicationPassword(t, "ed", "mailsvc tests")
	suePW := s.CreateApplicationPassword(t, "sue", "mailsvc tests")
	for _, pw := range []string{edPW, suePW} {
		if !regexp.MustCompile(`^[A-Za-z0-9]{24}$`).MatchString(pw) {
			t.Fatalf("application password %q is not 24 letters and digits", pw)
		}
	}

	tests := []struct {
		name      string
		login, pw string
		https     bool
		want      string
	}{
		{"administrator", "ed", edPW, true, "user:ed"},
		{"subscriber", "sue", suePW, true, "user:sue"},
		{"chunked as WordPress shows it", "sue", chunk(suePW), true, "user:sue"},
		{"email instead of login", "sue@example.com", suePW, true, "user:sue"},
		{"wrong password", "ed", suePW, true, "error:incorrect_password"},
		{"login password", "ed", "ed-login-pw", true, "error:incorrect_password"},
		{"unknown user", "nobody", edPW, true, "error:invalid_username"},
		{"plain HTTP, not local", "ed", edPW, false, "error:application_passwords_disabled"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := appPasswordResult(t, s, tc.login, tc.pw, tc.https); got != tc.want {
				t.Errorf("wp_authenticate_application_password(%q) = %q, want %q", tc.login, got, tc.want)
			}
		})
	}

	t.Run("local environment over plain HTTP", func(t *testing.T) {
		local := Install(t, Options{EnvironmentType: "local"})
		pw := local.CreateApplicationPassword(t, "admin", "local")
		if got := appPasswordResult(t, local, "admin", pw, false); got != "user:admin" {
			t.Errorf("wp_authenticate_application_password = %q, want user:admin", got)
		}
	})
}

// cookieUser validates a cookie value (as a browser sends it) in a fresh
// PHP process with wp_validate_auth_cookie and returns the user ID or 0.
func cookieUser(t *testing.T, s *Site, value string) int64 {
	t.Helper()
	decoded, err := url.PathUnescape(value)
	if err != nil {
		t.Fatalf("decode cookie: %v", err)
	}
	var id int64
	out := s.PHP(t, `echo (int) wp_validate_auth_cookie( `+PHPString(decoded)+`, 'logged_in' );`)
	if _, err := fmt.Sscan(out, &id); err != nil {
		t.Fatalf("wp_validate_auth_cookie printed %q", out)
	}
	return id
}

// tamper replaces the character at index i (negative: from the end) with
// another hex digit or letter.
func tamper(s string, i int) string {
	if i < 0 {
		i += len(s)
	}
	c := byte('0')
	if s[i] == '0' {
		c = '1'
	}
	return s[:i] + string(c) + s[i+1:]
}

func TestLoginCookieAndNonce(t *testing.T) {
	s := Install(t, Options{})
	subID := s.CreateUser(t, "sue", "sue@example.com", "subscriber", "sue-login-pw")
	cookie := s.LoginCookie(t, "sue")
	other := s.LoginCookie(t, "sue") // a second session of the same user
	admin := s.LoginCookie(t, "admin")

	sum := md5.Sum([]byte(s.SiteURL))
	if want := "wordpress_logged_in_" + hex.EncodeToString(sum[:]); cookie.Name != want {
		t.Errorf("cookie name = %q, want %q", cookie.Name, want)
	}
	if cookie.Path != "/" || !cookie.HttpOnly {
		t.Errorf("cookie path %q, HttpOnly %v; want /, true", cookie.Path, cookie.HttpOnly)
	}
	parts := strings.Split(cookie.Value, "%7C")
	if len(parts) != 4 || parts[0] != "sue" {
		t.Fatalf("cookie value %q: want sue%%7Cexpiration%%7Ctoken%%7Chmac", cookie.Value)
	}
	if cookie.Value == other.Value {
		t.Fatal("two logins produced the same cookie; want distinct session tokens")
	}
	// The session token is stored hashed in the user's session_tokens meta.
	var stored bool
	phpJSON(t, s, fmt.Sprintf(`echo json_encode( WP_Session_Tokens::get_instance( %d )->verify( %s ) );`,
		subID, PHPString(parts[2])), &stored)
	if !stored {
		t.Error("the cookie's session token is not a valid session of the user")
	}

	cookieTests := []struct {
		name  string
		value string
		want  int64
	}{
		{"valid", cookie.Value, subID},
		{"second session", other.Value, subID},
		{"administrator", admin.Value, 1},
		{"hmac tampered", tamper(cookie.Value, -1), 0},
		{"token tampered", strings.Join([]string{parts[0], parts[1], tamper(parts[2], 0), parts[3]}, "%7C"), 0},
		{"expiration changed", strings.Join([]string{parts[0], tamper(parts[1], -1), parts[2], parts[3]}, "%7C"), 0},
		{"other user's name", strings.Join([]string{"admin", parts[1], parts[2], parts[3]}, "%7C"), 0},
		{"malformed", "sue%7Cgarbage", 0},
	}
	for _, tc := range cookieTests {
		t.Run("cookie/"+tc.name, func(t *testing.T) {
			if got := cookieUser(t, s, tc.value); got != tc.want {
				t.Errorf("wp_validate_auth_cookie = %d, want %d", got, tc.want)
			}
		})
	}

	nonce := s.RESTNonce(t, "sue", cookie)
	if !regexp.MustCompile(`^[0-9a-f]{10}$`).MatchString(nonce) {
		t.Fatalf("nonce %q is not 10 lowercase hex digits", nonce)
	}
	if again := s.RESTNonce(t, "sue", cookie); again != nonce {
		t.Errorf("nonce for the same user and cookie changed: %q then %q", nonce, again)
	}
	adminNonce := s.RESTNonce(t, "admin", admin)

	nonceTests := []struct {
		name   string
		cookie *http.Cookie
		nonce  string
		want   string // wp_verify_nonce's result: "1", "2" or "false"
		user   int64  // the current user WordPress determined from the cookie
	}{
		{"same cookie", cookie, nonce, "1", subID},
		{"other session of the user", other, nonce, "false", subID},
		{"other user's nonce", cookie, adminNonce, "false", subID},
		{"tampered nonce", cookie, tamper(nonce, 4), "false", subID},
		{"administrator", admin, adminNonce, "1", 1},
		{"tampered cookie", &http.Cookie{Value: tamper(cookie.Value, -1)}, nonce, "false", 0},
	}
	for _, tc := range nonceTests {
		t.Run("nonce/"+tc.name, func(t *testing.T) {
			var got struct {
				User   int64 `json:"user"`
				Verify any   `json:"verify"`
			}
			out := s.PHPWithCookie(t, tc.cookie.Value, `echo json_encode( array(
	'user'   => get_current_user_id(),
	'verify' => wp_verify_nonce( `+PHPString(tc.nonce)+`, 'wp_rest' ),
) );`)
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("decode %q: %v", out, err)
			}
			if got.User != tc.user {
				t.Errorf("current user from the cookie = %d, want %d", got.User, tc.user)
			}
			if v := fmt.Sprint(got.Verify); v != tc.want {
				t.Errorf("wp_verify_nonce = %s, want %s", v, tc.want)
			}
		})
	}
}

func TestCreateUser(t *testing.T) {
	s := Install(t, Options{})
	tests := []struct {
		login, email, role, password string
	}{
		{"ed", "ed@example.com", "administrator", "plain-password"},
		{"mary-o.brien@home", "obrien@example.com", "editor", `q"uo't\es\`},
		{"sue", "sue@example.com", "subscriber", `back\\slash $dollar`},
	}
	seen := map[int64]bool{1: true}
	for _, tc := range tests {
		t.Run(tc.login, func(t *testing.T) {
			id := s.CreateUser(t, tc.login, tc.email, tc.role, tc.password)
			if seen[id] {
				t.Fatalf("user ID %d was already taken", id)
			}
			seen[id] = true
			var got struct {
				ID    int64    `json:"id"`
				Login string   `json:"login"`
				Email string   `json:"email"`
				Roles []string `json:"roles"`
				Wrong bool     `json:"wrong_password_rejected"`
			}
			phpJSON(t, s, fmt.Sprintf(`$user = wp_authenticate( %s, %s );
if ( is_wp_error( $user ) ) {
	wpsite_fail( 'wp_authenticate: ' . $user->get_error_code() );
}
echo json_encode( array(
	'id'                      => $user->ID,
	'login'                   => $user->user_login,
	'email'                   => $user->user_email,
	'roles'                   => array_values( $user->roles ),
	'wrong_password_rejected' => is_wp_error( wp_authenticate( %s, 'not the password' ) ),
) );`, PHPString(tc.login), PHPString(tc.password), PHPString(tc.login)), &got)
			if got.ID != id || got.Login != tc.login || got.Email != tc.email {
				t.Errorf("user = %d %q %q, want %d %q %q", got.ID, got.Login, got.Email, id, tc.login, tc.email)
			}
			if len(got.Roles) != 1 || got.Roles[0] != tc.role {
				t.Errorf("roles = %v, want [%s]", got.Roles, tc.role)
			}
			if !got.Wrong {
				t.Error("a wrong password was accepted")
			}
		})
	}
}

func TestCreateUserRejected(t *testing.T) {
	s := Install(t, Options{})
	s.CreateUser(t, "taken", "taken@example.com", "subscriber", "pw")
	tests := []struct {
		name, login, email string
		wantFail           string
	}{
		{"login WordPress rewrites", "o'brien", "obrien@example.com", "stored the login as obrien"},
		{"login in use", "taken", "other@example.com", "existing_user_login"},
		{"email in use", "other", "taken@example.com", "existing_user_email"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &fatalRecorder{TB: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				s.CreateUser(r, tc.login, tc.email, "subscriber", "pw")
			}()
			<-done
			if !strings.Contains(r.msg, tc.wantFail) {
				t.Errorf("CreateUser failure = %q, want it to mention %q", r.msg, tc.wantFail)
			}
		})
	}
}
