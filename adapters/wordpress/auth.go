package wordpress

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// Site is the configuration of the WordPress site whose credentials are
// checked: what wp-config.php defines, plus overrides.
type Site struct {
	// Salts holds the salt constants wp-config.php defines: AUTH_KEY,
	// SECURE_AUTH_KEY, LOGGED_IN_KEY, NONCE_KEY, the four *_SALT, and the
	// legacy SECRET_KEY / SECRET_SALT. A missing key means "not defined".
	Salts map[string]string
	// SaltPlaceholders lists localized variants of "put your unique phrase
	// here" to treat as unusable, as WordPress does through gettext.
	SaltPlaceholders []string
	// EnvironmentType is WP_ENVIRONMENT_TYPE; only "local" lets
	// application passwords work over plain HTTP.
	EnvironmentType string
	// SiteURL overrides the siteurl option (WP_SITEURL); trailing slashes
	// are removed, as WordPress does.
	SiteURL string
	// CookieHash overrides COOKIEHASH (default md5 of the site URL).
	CookieHash string
	// LoggedInCookie overrides LOGGED_IN_COOKIE (default
	// "wordpress_logged_in_" + COOKIEHASH).
	LoggedInCookie string
}

// Option configures an Authenticator.
type Option func(*Authenticator)

// WithClock sets the time source (tests).
func WithClock(now func() time.Time) Option {
	return func(a *Authenticator) { a.now = now }
}

// WithNonceLife sets nonce_life (default one day, WordPress's default).
func WithNonceLife(d time.Duration) Option {
	return func(a *Authenticator) {
		if d >= 2*time.Second {
			a.nonceLife = d
		}
	}
}

// WithLogger sets where non-fatal problems (a failed last_used write, an
// unavailable salt) are logged.
func WithLogger(l *slog.Logger) Option {
	return func(a *Authenticator) { a.log = l }
}

// WithNetwork makes the authenticator a multisite network's (see
// Network): salts, the cookie hash and using_application_passwords come
// from the network options ({base}sitemeta), the roles and capabilities
// from the site a request's context names (core.WithSite; the main site
// otherwise), and the network's super admins (site_admins) hold every
// capability.
func WithNetwork(n *Network) Option {
	return func(a *Authenticator) { a.network = n }
}

// WithApplicationPasswordPolicy makes the authenticator apply what the
// site's WordPress decided about application passwords (its filters, as
// the bridge publishes them) to every application password that arrives
// without the bridge's verdict, asking WordPress itself (asker) where the
// site decides per request. Without it (no WordPress: the standalone
// service) only the password is checked.
func WithApplicationPasswordPolicy(policy ApplicationPasswordPolicy, asker WordPressAsker) Option {
	return func(a *Authenticator) { a.policy, a.asker = policy, asker }
}

// Authenticator validates requests the way WordPress core's REST API does:
// the logged-in cookie with a REST nonce, or an application password over
// HTTP Basic, then loads the user's roles and capabilities. It is safe for
// concurrent use. On a multisite network (WithNetwork) it follows
// WordPress's multisite rules.
type Authenticator struct {
	src       Source
	site      Site
	salter    *Salter
	now       func() time.Time
	nonceLife time.Duration
	log       *slog.Logger
	network   *Network
	policy    ApplicationPasswordPolicy
	asker     WordPressAsker
}

// NewAuthenticator returns an Authenticator over src for site.
func NewAuthenticator(src Source, site Site, opts ...Option) *Authenticator {
	a := &Authenticator{
		src:       src,
		site:      site,
		now:       time.Now,
		nonceLife: 24 * time.Hour,
		log:       slog.New(slog.DiscardHandler),
	}
	for _, o := range opts {
		o(a)
	}
	// wp_salt() reads get_site_option(): sitemeta on a network.
	var saltOptions OptionReader = src
	if a.network != nil {
		saltOptions = a.network
	}
	a.salter = NewSalter(site.Salts, site.SaltPlaceholders, saltOptions)
	return a
}

// Salter returns the Salter the authenticator uses (wp_salt / wp_hash).
func (a *Authenticator) Salter() *Salter { return a.salter }

// Messages of the credential failures. They never say which part of a
// credential was wrong beyond what WordPress itself reveals.
const (
	msgNotLoggedIn     = "You are not currently logged in."
	msgBadCookie       = "The login cookie is invalid or expired. Log in again."
	msgMissingNonce    = "Missing REST nonce: send the X-WP-Nonce header with a cookie-authenticated request."
	msgBadNonce        = "Cookie check failed."
	msgBadAppPassword  = "The provided password is an invalid application password."
	msgUnknownUser     = "Unknown username. Check again or try your email address."
	msgUnknownEmail    = "Unknown email address. Check again or try your username."
	msgAppPasswordsOff = "Application passwords are not available."
	// msgAppPasswordsOffForUser is WordPress's own message.
	msgAppPasswordsOffForUser = "Application passwords are not available for your account. Please contact the site administrator for assistance."
	msgBadBasicHeader         = "Malformed HTTP Basic Authorization header."
	appPasswordsMetaKey       = "_application_passwords"
	appPasswordsInUseName     = "using_application_passwords"
	// usageRecordInterval is how often last_used/last_ip are rewritten.
	usageRecordInterval = 86400
)

func unauthorized(msg string) error { return core.Errorf(core.EUNAUTHORIZED, "%s", msg) }

// Authenticate validates r. It returns (nil, nil) for an anonymous request
// (no credentials at all), the user on success, and a *core.Error with code
// core.EUNAUTHORIZED when credentials are present but invalid: a bad or
// expired logged-in cookie, a valid cookie without a nonce or with a wrong
// one, a nonce that does not verify, or Basic credentials that fail (also
// when application passwords are not in use or not available). Other errors
// are internal (database). secure says whether the request arrived over
// HTTPS; application passwords need it unless EnvironmentType is "local".
//
// A request with the bridge's SessionHeader is decided by that statement
// alone (wp_session.go): the user it names, or EUNAUTHORIZED.
//
// As in core, a valid cookie wins over Basic credentials, and an invalid
// cookie does not prevent a valid application password from
// authenticating. The remote address recorded in last_ip is r.RemoteAddr.
func (a *Authenticator) Authenticate(r *http.Request, secure bool) (*core.User, error) {
	ctx := r.Context()
	authz := r.Header.Get("Authorization")
	nonce := nonceFromRequest(r)
	cookieHeaders := r.Header.Values("Cookie")
	if session := r.Header.Get(SessionHeader); session != "" {
		// An ability's call from inside WordPress (wp_session.go): the
		// statement alone decides, and a bad one is refused.
		row, err := a.authenticateSession(ctx, r, session)
		if err != nil {
			return nil, err
		}
		return a.loadUser(ctx, row, "wordpress")
	}
	if len(cookieHeaders) == 0 && authz == "" && nonce == "" {
		return nil, nil
	}

	var cookieErr error
	token := ""
	if len(cookieHeaders) > 0 {
		name, err := a.loggedInCookieName(ctx)
		if err != nil {
			return nil, err
		}
		if value := requestCookies(r)[name]; value != "" {
			if c, ok := ParseAuthCookie(value); ok {
				token = c.Token
			}
			row, err := a.validateLoggedInCookie(ctx, value, r.Method == http.MethodPost)
			if err != nil {
				return nil, err
			}
			if row != nil {
				if nonce == "" {
					return nil, unauthorized(msgMissingNonce)
				}
				ok, err := a.verifyNonce(ctx, nonce, "wp_rest", row.ID, token)
				if err != nil {
					return nil, err
				}
				if !ok {
					return nil, unauthorized(msgBadNonce)
				}
				return a.loadUser(ctx, row, "cookie")
			}
			cookieErr = unauthorized(msgBadCookie)
		}
	}

	if user, pass, present, ok := ParseBasicAuth(authz); present {
		if !ok {
			return nil, unauthorized(msgBadBasicHeader)
		}
		if !secure && a.site.EnvironmentType != "local" {
			return nil, unauthorized(msgAppPasswordsOff + " Use HTTPS.")
		}
		return a.checkApplicationPassword(ctx, user, pass, appPasswordRequest{
			ip: remoteIP(r), secure: secure, authorization: authz, verdict: r.Header.Get(VerdictHeader)})
	}

	if cookieErr != nil {
		return nil, cookieErr
	}
	if nonce != "" {
		// Core verifies a nonce sent without a logged-in user for user 0
		// (with the token of any unvalidated cookie) and rejects the
		// request when it fails.
		ok, err := a.verifyNonce(ctx, nonce, "wp_rest", 0, token)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, unauthorized(msgBadNonce)
		}
	}
	return nil, nil
}

// SessionToken returns wp_get_session_token() for r: the token of the
// logged-in cookie, parsed but not validated, or "". The HTTP layer passes
// it to CreateNonce to send a refreshed X-WP-Nonce.
func (a *Authenticator) SessionToken(r *http.Request) string {
	name, err := a.loggedInCookieName(r.Context())
	if err != nil {
		return ""
	}
	if c, ok := ParseAuthCookie(requestCookies(r)[name]); ok {
		return c.Token
	}
	return ""
}

// CheckApplicationPassword checks an application password for a login or
// email (for the SMTP listener), with the same rules as Basic credentials
// except the HTTPS requirement, which the caller enforces (so WordPress,
// when asked, is told the client's connection is secure). The remote
// address recorded in last_ip is taken from ContextWithRemoteIP.
func (a *Authenticator) CheckApplicationPassword(ctx context.Context, login, password string) (*core.User, error) {
	u, err := a.checkApplicationPassword(ctx, login, password, appPasswordRequest{ip: core.ClientIP(ctx), secure: true})
	if err == nil && u != nil {
		u.Via = "smtp"
	}
	return u, err
}

// ContextWithRemoteIP returns ctx carrying the client address that
// CheckApplicationPassword records as the application password's last_ip
// (core.WithClientIP).
func ContextWithRemoteIP(ctx context.Context, ip string) context.Context {
	return core.WithClientIP(ctx, ip)
}

// remoteIP is the client's address: the one the HTTP edge found
// (core.ClientIP: a trusted proxy's X-Forwarded-For), else the peer's.
func remoteIP(r *http.Request) string {
	if ip := core.ClientIP(r.Context()); ip != "" {
		return ip
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// option is get_option(): the raw value unserialized, with siteurl/home
// untrailingslashed.
func (a *Authenticator) option(ctx context.Context, name string) (any, bool, error) {
	raw, found, err := a.src.Option(ctx, name)
	if err != nil || !found {
		return nil, found, err
	}
	if name == "siteurl" || name == "home" {
		raw = strings.TrimRight(raw, "/\\")
	}
	return MaybeUnserialize(raw), true, nil
}

// loggedInCookieName is LOGGED_IN_COOKIE for the site.
func (a *Authenticator) loggedInCookieName(ctx context.Context) (string, error) {
	if a.site.LoggedInCookie != "" {
		return a.site.LoggedInCookie, nil
	}
	hash := a.site.CookieHash
	if hash == "" && a.network != nil {
		// COOKIEHASH is md5(get_site_option('siteurl')): the network's
		// siteurl as stored (with its trailing slash), and multisite
		// ignores WP_SITEURL.
		raw, _, err := a.network.Option(ctx, "siteurl")
		if err != nil {
			return "", fmt.Errorf("cookie name: %w", err)
		}
		if raw != "" {
			sum := md5.Sum([]byte(raw))
			hash = hex.EncodeToString(sum[:])
		}
		return "wordpress_logged_in_" + hash, nil
	}
	if hash == "" {
		siteURL := strings.TrimRight(a.site.SiteURL, "/\\")
		if siteURL == "" {
			v, _, err := a.option(ctx, "siteurl")
			if err != nil {
				return "", fmt.Errorf("cookie name: %w", err)
			}
			siteURL = phpString(v)
		}
		if siteURL != "" {
			sum := md5.Sum([]byte(siteURL))
			hash = hex.EncodeToString(sum[:])
		}
	}
	return "wordpress_logged_in_" + hash, nil
}

// validateLoggedInCookie is wp_validate_auth_cookie($cookie, 'logged_in'):
// it returns the user, or nil when the cookie is not valid. post adds the
// one-hour grace WordPress gives POST requests.
func (a *Authenticator) validateLoggedInCookie(ctx context.Context, value string, post bool) (*UserRow, error) {
	c, ok := ParseAuthCookie(value)
	if !ok {
		return nil, nil
	}
	exp, err := strconv.ParseInt(c.Expiration, 10, 64)
	if err != nil {
		return nil, nil
	}
	now := a.now().Unix()
	expired := exp
	if post {
		expired += 3600
	}
	if expired < now {
		return nil, nil
	}
	row, err := a.userByLogin(ctx, c.Username)
	if err != nil || row == nil {
		return nil, err
	}
	matched := false
	for _, frag := range passFrags(row.Pass) {
		key, err := a.salter.Hash(ctx, c.Username+"|"+frag+"|"+c.Expiration+"|"+c.Token, "logged_in")
		if errors.Is(err, ErrSaltUnavailable) {
			a.log.Warn("wordpress: cannot validate logged-in cookies", "reason", err.Error())
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		m := hmac.New(sha256.New, []byte(key))
		m.Write([]byte(c.Username + "|" + c.Expiration + "|" + c.Token))
		if subtle.ConstantTimeCompare([]byte(hex.EncodeToString(m.Sum(nil))), []byte(c.HMAC)) == 1 {
			matched = true
			break
		}
	}
	if !matched {
		return nil, nil
	}
	ok, err = a.verifySession(ctx, row.ID, c.Token)
	if err != nil || !ok {
		return nil, err
	}
	return row, nil
}

// verifySession is WP_Session_Tokens::verify() with the default user-meta
// store: sha256(token) must be a session whose expiration is not past.
func (a *Authenticator) verifySession(ctx context.Context, userID int64, token string) (bool, error) {
	raw, found, err := a.src.UserMeta(ctx, userID, "session_tokens")
	if err != nil || !found {
		return false, err
	}
	sessions, ok := MaybeUnserialize(raw).(*Array)
	if !ok {
		return false, nil
	}
	sum := sha256.Sum256([]byte(token))
	s, ok := sessions.Get(hex.EncodeToString(sum[:]))
	if !ok {
		return false, nil
	}
	var exp any
	switch x := s.(type) {
	case int64: // legacy: the value is the expiration
		exp = x
	case *Array:
		exp, ok = x.Get("expiration")
		if !ok {
			return false, nil
		}
	default:
		return false, nil
	}
	return phpNumber(exp) >= float64(a.now().Unix()), nil
}

// phpNumber is the numeric value PHP uses when comparing v with an int.
func phpNumber(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	case bool:
		if x {
			return 1
		}
		return 0
	case string:
		if f, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err == nil {
			return f
		}
		return float64(phpInt(x))
	}
	return 0
}

// userByLogin is get_user_by('login', ...): trim, sanitize_user, then the
// query (a falsy result finds nobody).
func (a *Authenticator) userByLogin(ctx context.Context, login string) (*UserRow, error) {
	login = SanitizeUser(phpTrim(login))
	if !Truthy(login) {
		return nil, nil
	}
	return a.src.UserByLogin(ctx, login)
}

// nonceTick is wp_nonce_tick(): ceil(now / (nonce_life / 2)).
func (a *Authenticator) nonceTick() int64 {
	half := int64(a.nonceLife/time.Second) / 2
	now := a.now().Unix()
	t := now / half
	if now%half != 0 && now > 0 {
		t++
	}
	return t
}

func (a *Authenticator) nonceFor(ctx context.Context, tick int64, action string, uid int64, token string) (string, error) {
	h, err := a.salter.Hash(ctx, strconv.FormatInt(tick, 10)+"|"+action+"|"+strconv.FormatInt(uid, 10)+"|"+token, "nonce")
	if err != nil {
		return "", err
	}
	return h[len(h)-12 : len(h)-2], nil
}

// verifyNonce is wp_verify_nonce(): the nonce of the current or the
// previous tick.
func (a *Authenticator) verifyNonce(ctx context.Context, nonce, action string, uid int64, token string) (bool, error) {
	if nonce == "" {
		return false, nil
	}
	tick := a.nonceTick()
	for _, t := range []int64{tick, tick - 1} {
		want, err := a.nonceFor(ctx, t, action, uid, token)
		if errors.Is(err, ErrSaltUnavailable) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if subtle.ConstantTimeCompare([]byte(want), []byte(nonce)) == 1 {
			return true, nil
		}
	}
	return false, nil
}

// CreateNonce is wp_create_nonce(action) for user (nil means logged out)
// and the session token of the user's logged-in cookie. It returns "" when
// the nonce salt is not available (see ErrSaltUnavailable) or cannot be
// read.
func (a *Authenticator) CreateNonce(user *core.User, token string, action string) string {
	var uid int64
	if user != nil {
		uid = user.ID
	}
	n, err := a.nonceFor(context.Background(), a.nonceTick(), action, uid, token)
	if err != nil {
		a.log.Warn("wordpress: cannot create nonce", "error", err.Error())
		return ""
	}
	return n
}

// applicationPasswordsInUse is WP_Application_Passwords::is_in_use().
func (a *Authenticator) applicationPasswordsInUse(ctx context.Context) (bool, error) {
	if a.network != nil {
		// The main network's option on multisite.
		raw, _, err := a.network.Option(ctx, appPasswordsInUseName)
		if err != nil {
			return false, err
		}
		return Truthy(MaybeUnserialize(raw)), nil
	}
	v, _, err := a.option(ctx, appPasswordsInUseName)
	if err != nil {
		return false, err
	}
	return Truthy(v), nil
}

// appPasswordRequest is what checkApplicationPassword knows of the
// request beside the credentials.
type appPasswordRequest struct {
	ip     string // the client's address, for last_ip and WordPress's filters
	secure bool   // it arrived over HTTPS (or the caller enforces it)
	// authorization and verdict are the request's Authorization and
	// VerdictHeader headers (empty for SMTP AUTH).
	authorization, verdict string
}

// checkApplicationPassword is wp_authenticate_application_password()
// after the availability checks of the caller: the password, then what
// the site's WordPress decides (WithApplicationPasswordPolicy).
func (a *Authenticator) checkApplicationPassword(ctx context.Context, username, password string, req appPasswordRequest) (*core.User, error) {
	inUse, err := a.applicationPasswordsInUse(ctx)
	if err != nil {
		return nil, err
	}
	if !inUse {
		return nil, unauthorized(msgAppPasswordsOff)
	}
	row, err := a.userByLogin(ctx, username)
	if err != nil {
		return nil, err
	}
	if row == nil && IsEmail(username) {
		if email := phpTrim(username); Truthy(email) {
			if row, err = a.src.UserByEmail(ctx, email); err != nil {
				return nil, err
			}
		}
	}
	if row == nil {
		if IsEmail(username) {
			return nil, unauthorized(msgUnknownEmail)
		}
		return nil, unauthorized(msgUnknownUser)
	}
	raw, found, err := a.src.UserMeta(ctx, row.ID, appPasswordsMetaKey)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, unauthorized(msgBadAppPassword)
	}
	items, ok := MaybeUnserialize(raw).(*Array)
	if !ok {
		return nil, unauthorized(msgBadAppPassword)
	}
	pw := NormalizeApplicationPassword(password)
	for i := 0; i < items.Len(); i++ {
		_, v := items.At(i)
		item, ok := v.(*Array)
		if !ok {
			continue
		}
		hv, _ := item.Get("password")
		hash, ok := hv.(string)
		if !ok || hash == "" {
			continue
		}
		if !CheckApplicationPasswordHash(pw, hash) {
			continue
		}
		uuid, _ := item.Get("uuid")
		id, _ := uuid.(string)
		recorded, err := a.wordPressDecides(ctx, row.ID, id, username, password, req)
		if err != nil {
			return nil, err
		}
		if !recorded && id != "" {
			if err := a.recordUsage(ctx, row.ID, id, req.ip); err != nil {
				a.log.Warn("wordpress: cannot record application password usage", "user_id", row.ID, "error", err.Error())
			}
		}
		return a.loadUser(ctx, row, "application_password")
	}
	return nil, unauthorized(msgBadAppPassword)
}

// wordPressDecides applies what the site's WordPress decides about a
// verified application password (uuid) of user userID: a bridge verdict
// for this request is WordPress's acceptance; otherwise the published
// rules apply, and WordPress is asked where the site decides per
// request. recorded reports that WordPress recorded the use (last_used,
// last_ip) itself.
func (a *Authenticator) wordPressDecides(ctx context.Context, userID int64, uuid, username, password string, req appPasswordRequest) (recorded bool, err error) {
	if a.policy == nil {
		return false, nil
	}
	if req.verdict != "" {
		salt, err := a.salter.Salt(ctx, "auth")
		if err == nil && checkVerdict(VerdictKey(salt), req.verdict, userID, uuid, req.authorization, a.now()) {
			return true, nil
		}
	}
	rules, ok := a.policy.ApplicationPasswordRules(ctx)
	if !ok {
		return false, core.Errorf(core.EUNAVAILABLE, "The site's application password rules could not be read yet; try again.")
	}
	ask, err := applyRules(rules, userID)
	if err != nil || !ask {
		return false, err
	}
	if a.asker == nil {
		return false, errAskUnavailable
	}
	id, err := a.asker.AskApplicationPassword(ctx, username, password, req.ip, req.secure)
	switch {
	case core.ErrorCode(err) == core.EUNAUTHORIZED:
		return false, err
	case err != nil:
		a.log.Warn("wordpress: cannot ask WordPress to check an application password", "user_id", userID, "error", err.Error())
		return false, errAskUnavailable
	case id != userID:
		return false, unauthorized(msgBadAppPassword)
	}
	return true, nil
}

// recordUsage is record_application_password_usage(): at most once a day
// it sets last_used and last_ip of the item with uuid, re-reading the meta
// and rewriting it with every other key and item preserved.
func (a *Authenticator) recordUsage(ctx context.Context, userID int64, uuid, ip string) error {
	raw, found, err := a.src.UserMeta(ctx, userID, appPasswordsMetaKey)
	if err != nil || !found {
		return err
	}
	items, ok := MaybeUnserialize(raw).(*Array)
	if !ok {
		return nil
	}
	now := a.now().Unix()
	for i := 0; i < items.Len(); i++ {
		_, v := items.At(i)
		item, ok := v.(*Array)
		if !ok {
			continue
		}
		if id, _ := item.Get("uuid"); id != uuid {
			continue
		}
		last, _ := item.Get("last_used")
		if phpInt(last)+usageRecordInterval > now {
			return nil
		}
		if err := item.Set("last_used", now); err != nil {
			return err
		}
		if err := item.Set("last_ip", ip); err != nil {
			return err
		}
		out, err := Serialize(items)
		if err != nil {
			return fmt.Errorf("serialize application passwords: %w", err)
		}
		return a.src.SetUserMeta(ctx, userID, appPasswordsMetaKey, out)
	}
	return nil
}
