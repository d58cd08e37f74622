package wpsite

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// CreateUser creates a user with wp_insert_user and returns its ID. role
// is a WordPress role slug ("administrator", "subscriber", ...). The test
// fails if WordPress rejects the user or stores another login (it strips
// characters outside [A-Za-z0-9 _.@-] from logins).
func (s *Site) CreateUser(t testing.TB, login, email, role, password string) int64 {
	t.Helper()
	// wp_insert_user expects slashed data but hashes user_pass as given,
	// as wp_create_user calls it.
	out := s.PHP(t, fmt.Sprintf(`$data = wp_slash( array(
	'user_login' => %[1]s,
	'user_email' => %[2]s,
	'role'       => %[3]s,
) );
$data['user_pass'] = %[4]s;
$id = wp_insert_user( $data );
if ( is_wp_error( $id ) ) {
	wpsite_fail( 'wp_insert_user: ' . $id->get_error_code() . ': ' . $id->get_error_message() );
}
if ( get_userdata( $id )->user_login !== %[1]s ) {
	wpsite_fail( 'WordPress stored the login as ' . get_userdata( $id )->user_login );
}
echo $id;
`, PHPString(login), PHPString(email), PHPString(role), PHPString(password)))
	id, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
	if err != nil || id <= 0 {
		t.Fatalf("wpsite: wp_insert_user(%q) printed %q, want a user ID", login, out)
	}
	return id
}

// CreateApplicationPassword creates an application password named name for
// the user with WP_Application_Passwords::create_new_application_password
// and returns the plain password (24 letters and digits, unchunked).
func (s *Site) CreateApplicationPassword(t testing.TB, login, name string) string {
	t.Helper()
	out := s.PHP(t, fmt.Sprintf(`$user = get_user_by( 'login', %s );
if ( ! $user ) {
	wpsite_fail( 'no such user' );
}
$created = WP_Application_Passwords::create_new_application_password( $user->ID, array( 'name' => %s ) );
if ( is_wp_error( $created ) ) {
	wpsite_fail( 'create_new_application_password: ' . $created->get_error_code() . ': ' . $created->get_error_message() );
}
echo $created[0];
`, PHPString(login), PHPString(name)))
	pw := strings.TrimSpace(out)
	if pw == "" {
		t.Fatalf("wpsite: create_new_application_password(%q) printed no password", login)
	}
	return pw
}

// LoginCookie logs the user in as WordPress's login does for a REST
// client: it creates a real session token with
// WP_Session_Tokens::get_instance($id)->create($expiration), two days
// ahead, and returns the logged-in cookie that wp_generate_auth_cookie
// makes with it, named LOGGED_IN_COOKIE. Value is what a browser sends
// back: percent-encoded as PHP's setcookie() encodes it ("|" as %7C).
func (s *Site) LoginCookie(t testing.TB, login string) *http.Cookie {
	t.Helper()
	out := s.PHP(t, fmt.Sprintf(`$user = get_user_by( 'login', %s );
if ( ! $user ) {
	wpsite_fail( 'no such user' );
}
$expiration = time() + 2 * DAY_IN_SECONDS;
$token = WP_Session_Tokens::get_instance( $user->ID )->create( $expiration );
echo json_encode( array(
	'name'       => LOGGED_IN_COOKIE,
	'value'      => rawurlencode( wp_generate_auth_cookie( $user->ID, $expiration, 'logged_in', $token ) ),
	'path'       => COOKIEPATH,
	'expiration' => $expiration,
) );
`, PHPString(login)))
	var c struct {
		Name       string `json:"name"`
		Value      string `json:"value"`
		Path       string `json:"path"`
		Expiration int64  `json:"expiration"`
	}
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("wpsite: decode login cookie %q: %v", out, err)
	}
	return &http.Cookie{
		Name:     c.Name,
		Value:    c.Value,
		Path:     c.Path,
		Expires:  time.Unix(c.Expiration, 0),
		HttpOnly: true,
	}
}

// RESTNonce returns wp_create_nonce('wp_rest') for the user, made in a
// request that carries cookie (so the nonce is bound to the cookie's
// session token) with that user set as the current user.
func (s *Site) RESTNonce(t testing.TB, login string, cookie *http.Cookie) string {
	t.Helper()
	out := s.PHPWithCookie(t, cookie.Value, fmt.Sprintf(`$user = get_user_by( 'login', %s );
if ( ! $user ) {
	wpsite_fail( 'no such user' );
}
wp_set_current_user( $user->ID );
echo wp_create_nonce( 'wp_rest' );
`, PHPString(login)))
	nonce := strings.TrimSpace(out)
	if len(nonce) != 10 {
		t.Fatalf("wpsite: wp_create_nonce printed %q, want 10 hex characters", out)
	}
	return nonce
}
