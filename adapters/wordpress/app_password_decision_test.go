package wordpress

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/mailsvc/mailsvc/core"
)

// fixedRules is an ApplicationPasswordPolicy with set rules.
type fixedRules struct {
	rules ApplicationPasswordRules
	known bool
}

func (f fixedRules) ApplicationPasswordRules(context.Context) (ApplicationPasswordRules, bool) {
	return f.rules, f.known
}

// recordingAsker is a WordPressAsker that records its questions.
type recordingAsker struct {
	userID int64
	err    error
	asked  []string // "login ip secure"
}

func (a *recordingAsker) AskApplicationPassword(_ context.Context, login, _, ip string, secure bool) (int64, error) {
	a.asked = append(a.asked, login+" "+ip+" "+strconv.FormatBool(secure))
	return a.userID, a.err
}

// TestWordPressDecidesApplicationPasswords: beside WordPress a correct
// application password is accepted only as WordPress's filters decide:
// a bridge verdict for exactly this request is WordPress's acceptance
// (nothing asked, the use not recorded twice); without one the published
// rules refuse (unavailable, unavailable for the user, unknown rules) or
// make the service ask WordPress with the client's address, refusing
// when WordPress refuses or cannot be asked.
func TestWordPressDecidesApplicationPasswords(t *testing.T) {
	salt, err := NewSalter(standardSalts, nil, nil).Salt(context.Background(), "auth")
	if err != nil {
		t.Fatal(err)
	}
	key := VerdictKey(salt)
	authz := basic("admin", fxAppPassword)
	verdict := SignVerdict(key, 1, "u-new", fxNow, authz)
	tests := []struct {
		name      string
		rules     fixedRules
		asker     *recordingAsker
		verdict   string
		wantCode  string // "" accepted
		wantAsked string
		recorded  bool // the service recorded last_used itself
	}{
		{name: "no rule", rules: fixedRules{known: true}, asker: &recordingAsker{}, recorded: true},
		{name: "rules not read yet", rules: fixedRules{}, asker: &recordingAsker{}, wantCode: core.EUNAVAILABLE},
		{name: "unavailable", rules: fixedRules{rules: ApplicationPasswordRules{Unavailable: true}, known: true}, asker: &recordingAsker{}, wantCode: core.EUNAUTHORIZED},
		{name: "unavailable for the user", rules: fixedRules{rules: ApplicationPasswordRules{UnavailableFor: []int64{7, 1}}, known: true}, asker: &recordingAsker{}, wantCode: core.EUNAUTHORIZED},
		{name: "unavailable for another user", rules: fixedRules{rules: ApplicationPasswordRules{UnavailableFor: []int64{2}}, known: true}, asker: &recordingAsker{}, recorded: true},
		{name: "asked, accepted", rules: fixedRules{rules: ApplicationPasswordRules{AskWordPress: true}, known: true}, asker: &recordingAsker{userID: 1}, wantAsked: "admin 203.0.113.7 true"},
		{name: "asked, refused", rules: fixedRules{rules: ApplicationPasswordRules{AskWordPress: true}, known: true}, asker: &recordingAsker{err: unauthorized("Not from here.")}, wantCode: core.EUNAUTHORIZED, wantAsked: "admin 203.0.113.7 true"},
		{name: "asked, another user", rules: fixedRules{rules: ApplicationPasswordRules{AskWordPress: true}, known: true}, asker: &recordingAsker{userID: 2}, wantCode: core.EUNAUTHORIZED, wantAsked: "admin 203.0.113.7 true"},
		{name: "asked, WordPress down", rules: fixedRules{rules: ApplicationPasswordRules{AskWordPress: true}, known: true}, asker: &recordingAsker{err: errors.New("connection refused")}, wantCode: core.EUNAVAILABLE, wantAsked: "admin 203.0.113.7 true"},
		{name: "verdict", rules: fixedRules{rules: ApplicationPasswordRules{Unavailable: true, AskWordPress: true}, known: true}, asker: &recordingAsker{}, verdict: verdict},
		{name: "verdict for another request", rules: fixedRules{rules: ApplicationPasswordRules{AskWordPress: true}, known: true}, asker: &recordingAsker{userID: 1},
			verdict: SignVerdict(key, 1, "u-new", fxNow, basic("admin", "another password")), wantAsked: "admin 203.0.113.7 true"},
		{name: "verdict too old", rules: fixedRules{rules: ApplicationPasswordRules{Unavailable: true}, known: true}, asker: &recordingAsker{},
			verdict: SignVerdict(key, 1, "u-new", fxNow-61, authz), wantCode: core.EUNAUTHORIZED},
		{name: "verdict with another key", rules: fixedRules{rules: ApplicationPasswordRules{Unavailable: true}, known: true}, asker: &recordingAsker{},
			verdict: SignVerdict(VerdictKey("not the salt"), 1, "u-new", fxNow, authz), wantCode: core.EUNAUTHORIZED},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forEachDB(t, func(t *testing.T, db *gorm.DB) {
				seedSite(t, db)
				tt.asker.asked = nil
				src, err := NewGormSource(db, "wp_")
				if err != nil {
					t.Fatal(err)
				}
				a := NewAuthenticator(src, Site{Salts: standardSalts}, WithClock(func() time.Time { return time.Unix(fxNow, 0) }),
					WithApplicationPasswordPolicy(tt.rules, tt.asker))
				r := httptest.NewRequest(http.MethodGet, "/", nil)
				r.RemoteAddr = "127.0.0.1:5555"
				r = r.WithContext(core.WithClientIP(r.Context(), "203.0.113.7"))
				r.Header.Set("Authorization", authz)
				if tt.verdict != "" {
					r.Header.Set(VerdictHeader, tt.verdict)
				}
				u, err := a.Authenticate(r, true)
				if got := core.ErrorCode(err); got != tt.wantCode || (tt.wantCode == "" && (u == nil || u.Login != "admin")) {
					t.Fatalf("Authenticate = %+v, %v; want code %q", u, err, tt.wantCode)
				}
				if got := strings.Join(tt.asker.asked, ";"); got != tt.wantAsked {
					t.Errorf("asked WordPress %q, want %q", got, tt.wantAsked)
				}
				recorded := strings.Contains(userMeta(t, db, "wp_", 1, "_application_passwords"), `s:7:"last_ip";s:11:"203.0.113.7"`)
				if recorded != tt.recorded {
					t.Errorf("the service recorded the use itself: %v, want %v", recorded, tt.recorded)
				}
			})
		})
	}
}

// TestReadApplicationPasswordRules reads what the bridge publishes; a
// value of the wrong type refuses rather than reads as no rule.
func TestReadApplicationPasswordRules(t *testing.T) {
	tests := []struct {
		name      string
		published string
		want      ApplicationPasswordRules
	}{
		{"none", `a:0:{}`, ApplicationPasswordRules{}},
		{"unavailable", `a:1:{s:25:"app_passwords_unavailable";b:1;}`, ApplicationPasswordRules{Unavailable: true}},
		{"for users", `a:1:{s:29:"app_passwords_unavailable_for";a:2:{i:0;i:3;i:1;i:9;}}`, ApplicationPasswordRules{UnavailableFor: []int64{3, 9}}},
		{"errors callback", `a:1:{s:19:"app_password_errors";b:1;}`, ApplicationPasswordRules{AskWordPress: true}},
		{"unavailable not a bool", `a:1:{s:25:"app_passwords_unavailable";s:2:"no";}`, ApplicationPasswordRules{Unavailable: true}},
		{"users not a list", `a:1:{s:29:"app_passwords_unavailable_for";s:1:"3";}`, ApplicationPasswordRules{Unavailable: true}},
		{"a user not a number", `a:1:{s:29:"app_passwords_unavailable_for";a:1:{i:0;s:5:"admin";}}`, ApplicationPasswordRules{Unavailable: true}},
		{"errors not a bool", `a:1:{s:19:"app_password_errors";i:0;}`, ApplicationPasswordRules{AskWordPress: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ReadFilterResults(context.Background(), mapOptions{FiltersOption: tt.published})
			if err != nil {
				t.Fatal(err)
			}
			got := r.ApplicationPasswords
			if got.Unavailable != tt.want.Unavailable || got.AskWordPress != tt.want.AskWordPress ||
				strings.Trim(strings.Join(strings.Fields(strconv.Quote(formatIDs(got.UnavailableFor))), ""), `"`) != formatIDs(tt.want.UnavailableFor) {
				t.Errorf("rules = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func formatIDs(ids []int64) string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(out, ",")
}

// TestBridgeAsker asks the bridge's route under the site's stored home
// with a question signed over its time and body, and reads WordPress's
// answers: a user, a refusal with WordPress's message, and anything else
// (a refused signature, a redirect) as not asked.
func TestBridgeAsker(t *testing.T) {
	salt, err := NewSalter(standardSalts, nil, nil).Salt(context.Background(), "auth")
	if err != nil {
		t.Fatal(err)
	}
	var answer func(w http.ResponseWriter, in map[string]any)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ts := r.Header.Get(HookRunTimestampHeader)
		if r.URL.String() != "/index.php?rest_route=/mailsvc-bridge/v1/auth" || r.Header.Get(HookRunSignatureHeader) != hmacHex(VerdictKey(salt), ts+"\n"+string(body)) {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"code":"rest_forbidden","message":"The question is not signed by the mailsvc service."}`))
			return
		}
		var in map[string]any
		_ = json.Unmarshal(body, &in)
		answer(w, in)
	}))
	defer site.Close()
	asker := &BridgeAsker{Sites: &SiteHomes{Options: mapOptions{"home": site.URL + "/"}}, Salter: NewSalter(standardSalts, nil, nil)}
	ctx := context.Background()

	answer = func(w http.ResponseWriter, in map[string]any) {
		if in["login"] != "admin" || in["password"] != "pw" || in["ip"] != "203.0.113.7" || in["https"] != true {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		_, _ = w.Write([]byte(`{"user_id":1}`))
	}
	if id, err := asker.AskApplicationPassword(ctx, "admin", "pw", "203.0.113.7", true); err != nil || id != 1 {
		t.Errorf("accepted: %d, %v", id, err)
	}
	answer = func(w http.ResponseWriter, _ map[string]any) {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"code":"ip_not_allowed","message":"Not from here."}`))
	}
	if _, err := asker.AskApplicationPassword(ctx, "admin", "pw", "203.0.113.7", true); core.ErrorCode(err) != core.EUNAUTHORIZED || core.ErrorMessage(err) != "Not from here." {
		t.Errorf("refused: %v, want WordPress's 401 and message", err)
	}
	answer = func(w http.ResponseWriter, _ map[string]any) {
		http.Redirect(w, &http.Request{}, "http://203.0.113.9/", http.StatusFound)
	}
	if _, err := asker.AskApplicationPassword(ctx, "admin", "pw", "203.0.113.7", true); err == nil || core.ErrorCode(err) == core.EUNAUTHORIZED {
		t.Errorf("redirected: %v, want not asked", err)
	}
	wrongKey := &BridgeAsker{Sites: asker.Sites, Salter: NewSalter(map[string]string{"AUTH_KEY": "other", "AUTH_SALT": "other"}, nil, nil)}
	if _, err := wrongKey.AskApplicationPassword(ctx, "admin", "pw", "203.0.113.7", true); err == nil || core.ErrorCode(err) == core.EUNAUTHORIZED {
		t.Errorf("signature refused: %v, want not asked (a misconfiguration, not WordPress's refusal)", err)
	}
}

// FuzzCheckVerdict: no header makes checkVerdict panic, and none but the
// signed one is accepted.
func FuzzCheckVerdict(f *testing.F) {
	key := VerdictKey("salt")
	good := SignVerdict(key, 1, "u-1", 1700000000, "Basic abc")
	f.Add(good)
	f.Add("1:u-1:1700000000:")
	f.Add(":::")
	f.Add("1:u-1:notanumber:" + strings.Repeat("a", 64))
	f.Fuzz(func(t *testing.T, header string) {
		ok := checkVerdict(key, header, 1, "u-1", "Basic abc", time.Unix(1700000000, 0))
		if ok && !strings.EqualFold(header, good) {
			t.Fatalf("accepted %q", header)
		}
	})
}
