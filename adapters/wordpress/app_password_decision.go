package wordpress

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// WordPress decides who may use an application password: besides the
// password itself, wp_is_application_passwords_available,
// wp_is_application_passwords_available_for_user and
// wp_authenticate_application_password_errors may refuse it. The service
// honours those decisions in three ways (docs/security.md):
//
//   - Through the bridge, WordPress checks the password itself; the bridge
//     refuses what WordPress refuses and forwards what it accepts with a
//     signed verdict (VerdictHeader) bound to the request's Authorization
//     header.
//   - The bridge publishes what the first two filters decide in its
//     published filters (ApplicationPasswordRules); the service applies
//     them to a request without a verdict (the direct path, SMTP AUTH).
//   - A site with a wp_authenticate_application_password_errors callback
//     decides per request (an IP allow-list): the service then asks
//     WordPress (WordPressAsker) for every application password that
//     arrives without a verdict, and refuses when WordPress cannot be
//     asked.

// VerdictHeader carries the bridge's verdict on a forwarded request:
// "<user id>:<application password uuid>:<unix time>:<signature>".
const VerdictHeader = "X-Mailsvc-Wp-Verdict"

// VerdictWindow is how far a verdict's or an asking request's time may be
// from the clock of the side that checks it.
const VerdictWindow = 60 * time.Second

// verdictKeyLabel derives the verdict key from wp_salt('auth').
const verdictKeyLabel = "mailsvc-wp-verdict"

// VerdictKey derives the key of verdicts and of the service's questions
// from wp_salt('auth'), as the bridge does:
// hash_hmac('sha256', 'mailsvc-wp-verdict', wp_salt('auth')).
func VerdictKey(authSalt string) string {
	return hmacHex(authSalt, verdictKeyLabel)
}

func hmacHex(key, msg string) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// SignVerdict returns the VerdictHeader value by which the bridge states
// that WordPress authenticated userID with application password uuid, at
// Unix time ts, for a request whose Authorization header is authorization.
func SignVerdict(key string, userID int64, uuid string, ts int64, authorization string) string {
	return fmt.Sprintf("%d:%s:%d:%s", userID, uuid, ts, hmacHex(key, verdictMessage(userID, uuid, ts, authorization)))
}

func verdictMessage(userID int64, uuid string, ts int64, authorization string) string {
	return fmt.Sprintf("%d\n%s\n%d\n%s", userID, uuid, ts, sha256Hex(authorization))
}

// checkVerdict reports whether header is a verdict, signed with key
// within VerdictWindow of now, that WordPress authenticated userID with
// application password uuid for this Authorization header.
func checkVerdict(key, header string, userID int64, uuid, authorization string, now time.Time) bool {
	parts := strings.Split(header, ":")
	if key == "" || len(parts) != 4 {
		return false
	}
	id, err1 := strconv.ParseInt(parts[0], 10, 64)
	ts, err2 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil || id != userID || parts[1] != uuid {
		return false
	}
	if d := now.Sub(time.Unix(ts, 0)); d > VerdictWindow || d < -VerdictWindow {
		return false
	}
	want := hmacHex(key, verdictMessage(userID, uuid, ts, authorization))
	return hmac.Equal([]byte(want), []byte(strings.ToLower(parts[3])))
}

// ApplicationPasswordRules are what the site's WordPress decided about
// application passwords, as the bridge publishes them.
type ApplicationPasswordRules struct {
	// Unavailable: wp_is_application_passwords_available is false.
	Unavailable bool
	// UnavailableFor lists the users for whom
	// wp_is_application_passwords_available_for_user is false.
	UnavailableFor []int64
	// AskWordPress: the site has a wp_authenticate_application_password_errors
	// callback, which decides per request.
	AskWordPress bool
}

// ApplicationPasswordPolicy returns the rules the site of ctx published;
// ok is false when they are not known (nothing was read yet), and the
// service then refuses application passwords.
type ApplicationPasswordPolicy interface {
	ApplicationPasswordRules(ctx context.Context) (rules ApplicationPasswordRules, ok bool)
}

// WordPressAsker lets WordPress decide one application password
// authentication, for a client at ip that arrived over HTTPS or not.
// It returns the user WordPress authenticated, an EUNAUTHORIZED error
// with WordPress's message when it refused, or another error when it
// could not be asked.
type WordPressAsker interface {
	AskApplicationPassword(ctx context.Context, login, password, ip string, secure bool) (userID int64, err error)
}

// applyRules refuses what the published rules refuse for user id, and
// reports whether WordPress must be asked.
func applyRules(rules ApplicationPasswordRules, userID int64) (ask bool, err error) {
	switch {
	case rules.Unavailable:
		return false, unauthorized(msgAppPasswordsOff)
	case slices.Contains(rules.UnavailableFor, userID):
		return false, unauthorized(msgAppPasswordsOffForUser)
	}
	return rules.AskWordPress, nil
}

// AskRoute is the bridge's route that answers the service's questions.
const AskRoute = "mailsvc-bridge/v1/auth"

// SiteAddresses finds the stored address (the home option) of the site a
// context names: the site's own on a network, the site's otherwise.
type SiteAddresses interface {
	SiteHome(ctx context.Context) (string, error)
}

// BridgeAsker asks the bridge's AskRoute on the site's stored address
// (never an address taken from a request), signing each question with
// the verdict key. It follows no redirect.
type BridgeAsker struct {
	Sites  SiteAddresses
	Salter *Salter
	Client *http.Client
	// Now is the clock (tests); nil is time.Now.
	Now func() time.Time
}

// askTimeout bounds one question (WordPress loads for it).
const askTimeout = 15 * time.Second

// AskApplicationPassword implements WordPressAsker.
func (b *BridgeAsker) AskApplicationPassword(ctx context.Context, login, password, ip string, secure bool) (int64, error) {
	home, err := b.Sites.SiteHome(ctx)
	if err != nil {
		return 0, fmt.Errorf("the site's address: %w", err)
	}
	if home == "" {
		return 0, errors.New("the site's address (the home option) is empty")
	}
	salt, err := b.Salter.Salt(ctx, "auth")
	if err != nil {
		return 0, fmt.Errorf("the verdict key: %w", err)
	}
	body, err := json.Marshal(map[string]any{"login": login, "password": password, "ip": ip, "https": secure})
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, askTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, RESTURL(home, AskRoute), bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("ask WordPress: %w", err)
	}
	now := time.Now
	if b.Now != nil {
		now = b.Now
	}
	ts := strconv.FormatInt(now().Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HookRunTimestampHeader, ts)
	req.Header.Set(HookRunSignatureHeader, hmacHex(VerdictKey(salt), ts+"\n"+string(body)))
	resp, err := noRedirects(b.Client).Do(req)
	if err != nil {
		return 0, fmt.Errorf("ask WordPress: %w", err)
	}
	defer resp.Body.Close()
	var answer struct {
		UserID  int64  `json:"user_id"`
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_ = json.Unmarshal(data, &answer)
	switch {
	case resp.StatusCode == http.StatusOK && answer.UserID > 0:
		return answer.UserID, nil
	case resp.StatusCode == http.StatusUnauthorized && answer.Code != "" && answer.Code != "rest_forbidden":
		// WordPress refused the password (rest_forbidden is the route
		// refusing the question's signature: a misconfiguration).
		msg := answer.Message
		if msg == "" {
			msg = msgBadAppPassword
		}
		return 0, unauthorized(msg)
	}
	return 0, fmt.Errorf("ask WordPress: HTTP %d %s", resp.StatusCode, strings.TrimSpace(string(data)))
}

// RESTURL is the URL of a REST route under a site's stored home address,
// in the form every permalink setting answers (index.php?rest_route=).
func RESTURL(home, route string) string {
	return strings.TrimRight(home, "/") + "/index.php?rest_route=/" + strings.TrimLeft(route, "/")
}

// noRedirects returns a client like c (http.DefaultClient when nil) that
// follows no redirect: a request signed for the site goes to the site.
func noRedirects(c *http.Client) *http.Client {
	out := http.Client{}
	if c != nil {
		out = *c
	}
	out.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &out
}

// errAskUnavailable is the answer when WordPress must decide and could
// not be asked.
var errAskUnavailable = core.Errorf(core.EUNAVAILABLE, "WordPress could not be asked to check the application password; try again.")
