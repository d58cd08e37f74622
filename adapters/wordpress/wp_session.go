package wordpress

import (
	"bytes"
	"context"
	"crypto/hmac"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The bridge's abilities (WordPress's Abilities API, docs/hooks.md) call
// the service from inside WordPress, for a user WordPress has already
// authenticated and whose capability the ability's permission callback
// has checked. Such a call carries no credential of its own (a user
// logged in by cookie has no nonce inside PHP, and an ability may be run
// from PHP without any HTTP request at all), so the bridge states who the
// user is in a signed SessionHeader:
//
//	"<user id>:<unix time>:<signature>"
//
// The signature is hash_hmac('sha256', message, VerdictKey) over
//
//	"mailsvc-wp-session\n<user id>\n<time>\n<METHOD>\n<Host>\n<request target>\n<sha256 of the body>"
//
// so it holds for one method, site address, path with query and body,
// for SessionWindow. The first line separates it from the other
// statements signed with the same key (the application password
// verdict, whose message starts with a user id, and the service's
// questions, which start with a time). docs/security.md says why a
// direct caller cannot make one.

// SessionHeader carries the bridge's signed statement of the current
// WordPress user on a call an ability makes.
const SessionHeader = "X-Mailsvc-Wp-Session"

// SessionWindow is how far a session statement's time may be from the
// service's clock.
const SessionWindow = VerdictWindow

// sessionLabel starts the signed message.
const sessionLabel = "mailsvc-wp-session"

// maxSessionBody bounds the body read to check a statement; the HTTP
// layer refuses larger bodies anyway (DefaultMaxBodyBytes).
const maxSessionBody = 1 << 20

// SignSession returns the SessionHeader value by which the bridge states
// that WordPress's current user is userID, at Unix time ts, for a
// request with this method, Host header, request target (path and query,
// as sent) and body.
func SignSession(key string, userID, ts int64, method, host, target string, body []byte) string {
	return fmt.Sprintf("%d:%d:%s", userID, ts, hmacHex(key, sessionMessage(userID, ts, method, host, target, body)))
}

func sessionMessage(userID, ts int64, method, host, target string, body []byte) string {
	return fmt.Sprintf("%s\n%d\n%d\n%s\n%s\n%s\n%s", sessionLabel, userID, ts, strings.ToUpper(method), strings.ToLower(host), target, sha256Hex(string(body)))
}

// checkSession returns the user a session statement names when header is
// signed with key, within SessionWindow of now, for exactly this method,
// host, target and body; ok is false otherwise.
func checkSession(key, header, method, host, target string, body []byte, now time.Time) (userID int64, ok bool) {
	parts := strings.Split(header, ":")
	if key == "" || len(parts) != 3 {
		return 0, false
	}
	id, err1 := strconv.ParseInt(parts[0], 10, 64)
	ts, err2 := strconv.ParseInt(parts[1], 10, 64)
	if err1 != nil || err2 != nil || id < 1 {
		return 0, false
	}
	if d := now.Sub(time.Unix(ts, 0)); d > SessionWindow || d < -SessionWindow {
		return 0, false
	}
	want := hmacHex(key, sessionMessage(id, ts, method, host, target, body))
	if !hmac.Equal([]byte(want), []byte(strings.ToLower(parts[2]))) {
		return 0, false
	}
	return id, true
}

// authenticateSession authenticates a request that carries a
// SessionHeader: the user it names, with the roles and capabilities of a
// cookie's user, or EUNAUTHORIZED when the statement does not hold for
// this request. It reads the body to check it and puts it back.
func (a *Authenticator) authenticateSession(ctx context.Context, r *http.Request, header string) (*UserRow, error) {
	var body []byte
	if r.Body != nil && r.Body != http.NoBody {
		b, err := io.ReadAll(io.LimitReader(r.Body, maxSessionBody+1))
		r.Body.Close()
		if err != nil {
			return nil, unauthorized(msgBadSession)
		}
		r.Body = io.NopCloser(bytes.NewReader(b))
		if len(b) > maxSessionBody {
			return nil, unauthorized(msgBadSession)
		}
		body = b
	}
	salt, err := a.salter.Salt(ctx, "auth")
	if err != nil {
		return nil, err
	}
	id, ok := checkSession(VerdictKey(salt), header, r.Method, r.Host, requestTarget(r), body, a.now())
	if !ok {
		return nil, unauthorized(msgBadSession)
	}
	row, err := a.src.UserByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if row == nil {
		return nil, unauthorized(msgBadSession)
	}
	return row, nil
}

// msgBadSession answers a session statement that does not hold.
const msgBadSession = "The bridge's statement of the WordPress user is invalid or expired."

// requestTarget is the path and query of r as the client sent them
// (r.URL may since have been rewritten for routing): the origin form of
// RequestURI, taken from an absolute form too.
func requestTarget(r *http.Request) string {
	target := r.RequestURI
	if target == "" {
		return r.URL.RequestURI()
	}
	if !strings.HasPrefix(target, "/") {
		if u, err := url.ParseRequestURI(target); err == nil && u.IsAbs() {
			return u.RequestURI()
		}
	}
	return target
}
