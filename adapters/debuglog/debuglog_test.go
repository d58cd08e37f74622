package debuglog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/glebarez/sqlite"
	"gorm.io/gorm"
	gormlogger "gorm.io/gorm/logger"

	"github.com/mailsvc/mailsvc/adapters/debuglog"
	"github.com/mailsvc/mailsvc/core"
)

func constants(env map[string]string) *core.Constants {
	c, _ := core.NewConstants(nil, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	return c
}

// logLines returns the lines of debug.log with the given tag, decoded.
func logLines(t *testing.T, l *debuglog.Log, tag string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(l.Path())
	if os.IsNotExist(err) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		// "<timestamp> <tag> <json>"
		_, rest, _ := strings.Cut(line, " ")
		if !strings.HasPrefix(rest, tag+" {") {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(strings.TrimPrefix(rest, tag+" ")), &m); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func TestOptionsFromConstants(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want debuglog.Options
	}{
		{"nothing defined: every channel off, mask, data dir logs", nil,
			debuglog.Options{Root: filepath.Join("/data", "logs"), Visibility: "mask", RequestVisibility: "mask"}},
		{"log dir moves the whole root", map[string]string{"MAIL_SVC_DEBUG_LOG_DIR": "/var/tmp/x"},
			debuglog.Options{Root: "/var/tmp/x/mail-svc-logs", Visibility: "mask", RequestVisibility: "mask"}},
		{"every channel on", map[string]string{"MAIL_SVC_DEBUG_HTTP": "true", "MAIL_SVC_DEBUG_REQUEST": "1", "MAIL_SVC_DEBUG_MAILER": "yes", "MAIL_SVC_DEBUG_QUERIES": "true", "SAVEQUERIES": "true"},
			debuglog.Options{Root: "/data/logs", HTTP: true, Request: true, Mailer: true, Queries: true, Visibility: "mask", RequestVisibility: "mask"}},
		{"queries need SAVEQUERIES", map[string]string{"MAIL_SVC_DEBUG_QUERIES": "true"},
			debuglog.Options{Root: "/data/logs", Visibility: "mask", RequestVisibility: "mask"}},
		{"legacy redact behaves like full", map[string]string{"MAIL_SVC_DEBUG_REDACT": "true"},
			debuglog.Options{Root: "/data/logs", Visibility: "full", RequestVisibility: "full"}},
		{"explicit visibility beats legacy redact", map[string]string{"MAIL_SVC_DEBUG_REDACT": "true", "MAIL_SVC_DEBUG_SECRET_VISIBILITY": "show"},
			debuglog.Options{Root: "/data/logs", Visibility: "show", RequestVisibility: "show"}},
		{"request payload override", map[string]string{"MAIL_SVC_DEBUG_SECRET_VISIBILITY": "full", "MAIL_SVC_DEBUG_REQUEST_SECRET_VISIBILITY": "show"},
			debuglog.Options{Root: "/data/logs", Visibility: "full", RequestVisibility: "show"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := debuglog.OptionsFrom(constants(tt.env), "/data", nil)
			if got.Root != tt.want.Root || got.HTTP != tt.want.HTTP || got.Request != tt.want.Request ||
				got.Mailer != tt.want.Mailer || got.Queries != tt.want.Queries ||
				got.Visibility != tt.want.Visibility || got.RequestVisibility != tt.want.RequestVisibility {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestAPIDebugResponseEnabled(t *testing.T) {
	hooks := &core.Hooks{}
	if debuglog.APIDebugResponseEnabled(constants(nil), hooks) {
		t.Fatal("enabled by default")
	}
	if !debuglog.APIDebugResponseEnabled(constants(map[string]string{"MAIL_SVC_DEBUG_ATTACH_API_DEBUG": "true"}), hooks) {
		t.Fatal("legacy constant ignored")
	}
	hooks.AddFilter(core.HookAPIDebugResponseEnable, func(v any, _ ...any) any { return false })
	if debuglog.APIDebugResponseEnabled(constants(map[string]string{"MAIL_SVC_DEBUG_ATTACH_API_DEBUG": "true"}), hooks) {
		t.Fatal("filter did not win over the constant")
	}
}

func TestRedactor(t *testing.T) {
	body := `{"api_key":"sk-123","personalizations":[{"to":[{"email":"a@example.com"}]}],"nested":{"password":"p@ss","n":1},"empty_token":""}`
	tests := []struct {
		vis        string
		wantSecret string
	}{
		{"mask", core.Mask},
		{"", core.Mask},
		{"full", debuglog.Redacted},
		{"show", ""},
	}
	for _, tt := range tests {
		t.Run("visibility "+tt.vis, func(t *testing.T) {
			r := debuglog.Redactor{Visibility: tt.vis}
			var got map[string]any
			if err := json.Unmarshal([]byte(r.Body([]byte(body), "application/json")), &got); err != nil {
				t.Fatal(err)
			}
			wantKey, wantPass := tt.wantSecret, tt.wantSecret
			if tt.vis == "show" {
				wantKey, wantPass = "sk-123", "p@ss"
			}
			if got["api_key"] != wantKey || got["nested"].(map[string]any)["password"] != wantPass {
				t.Fatalf("body %v", got)
			}
			if got["empty_token"] != "" {
				t.Fatalf("empty secret shown as %v", got["empty_token"])
			}
			if !strings.Contains(r.Body([]byte(body), ""), "a@example.com") {
				t.Fatal("non-secret value lost")
			}

			h := http.Header{}
			h.Set("Authorization", "Basic dXNlcjpwYXNz")
			h.Set("X-Postmark-Server-Token", "pm-token")
			h.Set("Api-Key", "k1")
			h.Set("Content-Type", "application/json")
			hs := r.Headers(h)
			if tt.vis == "show" {
				if hs["Authorization"] != "Basic dXNlcjpwYXNz" || hs["X-Postmark-Server-Token"] != "pm-token" {
					t.Fatalf("show changed headers: %v", hs)
				}
			} else if hs["Authorization"] != "Basic "+tt.wantSecret || hs["X-Postmark-Server-Token"] != tt.wantSecret || hs["Api-Key"] != tt.wantSecret {
				t.Fatalf("headers %v", hs)
			}
			if hs["Content-Type"] != "application/json" {
				t.Fatalf("content type %q", hs["Content-Type"])
			}

			u, _ := url.Parse("https://user:pw@api.example.com/v3/x?api_key=abc&domain=mg.example.com")
			us := r.URL(u)
			if tt.vis != "show" && (strings.Contains(us, "abc") || strings.Contains(us, ":pw@")) {
				t.Fatalf("url %s", us)
			}
			if !strings.Contains(us, "domain=mg.example.com") {
				t.Fatalf("url lost a parameter: %s", us)
			}

			form := r.Body([]byte("Action=SendRawEmail&RawMessage.Data=SGVsbG8%3D&secret=s3"), "application/x-www-form-urlencoded")
			if tt.vis != "show" && strings.Contains(form, "s3") {
				t.Fatalf("form secret shown: %s", form)
			}
			if !strings.Contains(form, "RawMessage.Data=SGVsbG8") {
				t.Fatalf("message data redacted: %s", form)
			}
		})
	}
}

func TestChannelsOffByDefaultWriteNothing(t *testing.T) {
	root := t.TempDir()
	opts := debuglog.OptionsFrom(constants(nil), root, nil)
	l := debuglog.New(opts)

	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer upstream.Close()
	if c := l.HTTPClient(nil); c != http.DefaultClient {
		t.Fatal("HTTP off must return the base client")
	}
	resp, err := l.HTTPClient(upstream.Client()).Get(upstream.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	h := l.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/x", strings.NewReader(`{"password":"p"}`)))

	hooks := &core.Hooks{}
	l.RegisterMailer(hooks)
	hooks.DoAction(core.HookAPIDebug, map[string]any{"to": "a@example.com"})

	db := openSQLite(t)
	q, err := l.InstallQueries(db)
	if err != nil || q != nil {
		t.Fatalf("queries off installed %v, %v", q, err)
	}
	q.Flush()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(l.Path()); !os.IsNotExist(err) {
		b, _ := os.ReadFile(l.Path())
		t.Fatalf("debug.log written with every channel off: %s", b)
	}
}

func openSQLite(t *testing.T) *gorm.DB {
	t.Helper()
	db, err := gorm.Open(sqlite.Open(filepath.Join(t.TempDir(), "q.db")), &gorm.Config{Logger: gormlogger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestHTTPOutLines(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if string(b) != `{"api_key":"sk-live","subject":"Hi"}` {
			t.Errorf("upstream got body %q", b)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, `{"id":"msg-1","token":"tok"}`)
	}))
	defer upstream.Close()
	for _, vis := range []string{"mask", "full", "show"} {
		t.Run(vis, func(t *testing.T) {
			l := debuglog.New(debuglog.Options{Root: t.TempDir(), HTTP: true, Visibility: vis, MaxBodyBytes: 1000})
			req, _ := http.NewRequest("POST", upstream.URL+"/v3/mail/send?key=qk", strings.NewReader(`{"api_key":"sk-live","subject":"Hi"}`))
			req.Header.Set("Authorization", "Bearer sk-live")
			req.Header.Set("Content-Type", "application/json")
			resp, err := l.HTTPClient(upstream.Client()).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(got) != `{"id":"msg-1","token":"tok"}` {
				t.Fatalf("caller got body %q", got)
			}
			lines := logLines(t, l, debuglog.TagHTTPOut)
			if len(lines) != 1 {
				t.Fatalf("%d HTTP OUT lines", len(lines))
			}
			line := lines[0]
			if line["method"] != "POST" || line["status"] != float64(202) || !strings.Contains(line["url"].(string), "/v3/mail/send") {
				t.Fatalf("line %v", line)
			}
			raw, _ := json.Marshal(line)
			want := map[string]string{"mask": core.Mask, "full": debuglog.Redacted, "show": "sk-live"}[vis]
			if !strings.Contains(string(raw), "Bearer "+want) || !strings.Contains(line["request_body"].(string), `"api_key":"`+want+`"`) {
				t.Fatalf("secret not shown as %q: %s", want, raw)
			}
			if vis != "show" && (strings.Contains(string(raw), "sk-live") || strings.Contains(string(raw), "qk") || strings.Contains(string(raw), `"tok"`)) {
				t.Fatalf("secret leaked: %s", raw)
			}
			if !strings.Contains(line["response_body"].(string), "msg-1") {
				t.Fatalf("response body %v", line["response_body"])
			}
		})
	}
}

func TestHTTPOutTruncatesBodies(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Write(bytes.Repeat([]byte("y"), 5000))
	}))
	defer upstream.Close()
	l := debuglog.New(debuglog.Options{Root: t.TempDir(), HTTP: true, MaxBodyBytes: 100})
	resp, err := l.HTTPClient(upstream.Client()).Post(upstream.URL, "text/plain", strings.NewReader(strings.Repeat("x", 5000)))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if len(got) != 5000 {
		t.Fatalf("caller got %d bytes", len(got))
	}
	line := logLines(t, l, debuglog.TagHTTPOut)[0]
	for _, k := range []string{"request_body", "response_body"} {
		s := line[k].(string)
		if len(s) > 200 || !strings.Contains(s, "truncated, 5000 bytes") {
			t.Fatalf("%s not truncated: %d bytes %q", k, len(s), s[len(s)-40:])
		}
	}
}

// TestFilteredSensitiveKeysMasked: a key the sensitive-keys filter adds
// after the log was made is masked in the next line.
func TestFilteredSensitiveKeysMasked(t *testing.T) {
	var extra []string
	l := debuglog.New(debuglog.Options{Root: t.TempDir(), Request: true, Visibility: "mask", SensitiveKeys: func() []string { return extra }})
	h := l.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.ReadAll(r.Body) }))
	post := func() {
		req := httptest.NewRequest("POST", "/wp-json/mailsvc/v1/connections", strings.NewReader(`{"settings":{"client_id":"cid-1234567"}}`))
		req.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	post()
	extra = []string{"client_id"}
	post()
	pays := logLines(t, l, debuglog.TagRequestPayload)
	if len(pays) != 2 || !strings.Contains(pays[0]["body"].(string), "cid-1234567") || strings.Contains(pays[1]["body"].(string), "cid-1234567") {
		t.Fatalf("REQUEST PAYLOAD lines %v: want client_id shown, then masked once the filter adds it", pays)
	}
}

func TestRequestLines(t *testing.T) {
	tests := []struct {
		name, vis, reqVis string
		wantHeader        string
		wantPayload       string
	}{
		{"mask everywhere", "mask", "mask", core.Mask, core.Mask},
		{"payload override shows", "full", "show", debuglog.Redacted, "hunter2"},
		{"payload override hides", "show", "full", "abc", debuglog.Redacted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := debuglog.New(debuglog.Options{Root: t.TempDir(), Request: true, Visibility: tt.vis, RequestVisibility: tt.reqVis})
			var seen string
			h := l.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				seen = string(b)
				w.WriteHeader(http.StatusCreated)
			}))
			body := `{"name":"c","settings":{"password":"hunter2"}}`
			req := httptest.NewRequest("POST", "/wp-json/mailsvc/v1/connections", strings.NewReader(body))
			req.Header.Set("Authorization", "Basic abc")
			req.Header.Set("Content-Type", "application/json")
			h.ServeHTTP(httptest.NewRecorder(), req)
			if seen != body {
				t.Fatalf("handler saw %q", seen)
			}
			reqs := logLines(t, l, debuglog.TagRequest)
			if len(reqs) != 1 || reqs[0]["status"] != float64(201) || reqs[0]["method"] != "POST" {
				t.Fatalf("REQUEST lines %v", reqs)
			}
			if got := reqs[0]["headers"].(map[string]any)["Authorization"]; got != "Basic "+tt.wantHeader {
				t.Fatalf("Authorization logged as %v", got)
			}
			pays := logLines(t, l, debuglog.TagRequestPayload)
			if len(pays) != 1 || !strings.Contains(pays[0]["body"].(string), `"password":"`+tt.wantPayload+`"`) {
				t.Fatalf("REQUEST PAYLOAD lines %v", pays)
			}
		})
	}
}

func TestMailerLines(t *testing.T) {
	l := debuglog.New(debuglog.Options{Root: t.TempDir(), Mailer: true, Visibility: "full"})
	hooks := &core.Hooks{}
	l.RegisterMailer(hooks)
	type payload struct {
		Provider string `json:"provider"`
		APIKey   string `json:"api_key"`
	}
	hooks.DoAction(core.HookAPIDebug, payload{Provider: "sendgrid", APIKey: "SG.secret"}, `{"response":{"token":"t1"}}`)
	lines := logLines(t, l, debuglog.TagMailer)
	if len(lines) != 1 {
		t.Fatalf("%d MAILER lines", len(lines))
	}
	raw, _ := json.Marshal(lines[0])
	if strings.Contains(string(raw), "SG.secret") || strings.Contains(string(raw), "t1") ||
		!strings.Contains(string(raw), "sendgrid") || strings.Count(string(raw), debuglog.Redacted) != 2 {
		t.Fatalf("MAILER line %s", raw)
	}
}

func TestQueriesSummary(t *testing.T) {
	l := debuglog.New(debuglog.Options{Root: t.TempDir(), Queries: true})
	db := openSQLite(t)
	q, err := l.InstallQueries(db)
	if err != nil || q == nil {
		t.Fatalf("install: %v, %v", q, err)
	}
	type row struct {
		ID     int64
		Secret string
	}
	if err := db.AutoMigrate(&row{}); err != nil {
		t.Fatal(err)
	}
	before := q.Summary().Count
	for i := 0; i < 3; i++ {
		if err := db.Create(&row{Secret: "value-not-logged"}).Error; err != nil {
			t.Fatal(err)
		}
	}
	var rows []row
	if err := db.Find(&rows).Error; err != nil || len(rows) != 3 {
		t.Fatal(err, len(rows))
	}
	if got := q.Summary().Count - before; got != 4 {
		t.Fatalf("counted %d queries, want 4", got)
	}
	q.Flush()
	lines := logLines(t, l, debuglog.TagQueries)
	if len(lines) != 1 {
		t.Fatalf("%d QUERIES lines", len(lines))
	}
	raw, _ := json.Marshal(lines[0])
	if lines[0]["count"].(float64) < 4 || len(lines[0]["slowest"].([]any)) == 0 || strings.Contains(string(raw), "value-not-logged") {
		t.Fatalf("QUERIES line %s", raw)
	}
}

func TestLogRotation(t *testing.T) {
	l := debuglog.New(debuglog.Options{Root: t.TempDir(), Mailer: true, MaxFileBytes: 300})
	hooks := &core.Hooks{}
	l.RegisterMailer(hooks)
	for i := 0; i < 10; i++ {
		hooks.DoAction(core.HookAPIDebug, strings.Repeat("z", 50))
	}
	l.Close()
	st, err := os.Stat(l.Path())
	if err != nil || st.Size() > 300 {
		t.Fatalf("debug.log %v, %v", st, err)
	}
	if _, err := os.Stat(l.Path() + ".1"); err != nil {
		t.Fatalf("no rotated file: %v", err)
	}
}

func TestTranscripts(t *testing.T) {
	transcript := strings.Join([]string{
		"10:00:00.000 S: 220 sink ESMTP",
		"10:00:00.001 C: EHLO localhost",
		"10:00:00.002 C: AUTH PLAIN AHVzZXIAcGFzcw==",
		"10:00:00.003 S: 235 ok",
		"10:00:00.004 C: AUTH LOGIN",
		"10:00:00.005 S: 334 VXNlcm5hbWU6",
		"10:00:00.006 C: dXNlcg==",
		"10:00:00.007 S: 334 UGFzc3dvcmQ6",
		"10:00:00.008 C: cGFzcw==",
		"10:00:00.009 S: 235 ok",
		"10:00:00.010 C: MAIL FROM:<a@example.com>",
	}, "\n")
	for _, vis := range []string{"mask", "full", "show"} {
		t.Run(vis, func(t *testing.T) {
			root := t.TempDir()
			ts := debuglog.NewTranscripts(root, 3, 0, debuglog.Redactor{Visibility: vis}, nil)
			ts.SaveTranscript(7, transcript)
			list, total, err := ts.List(context.Background(), 0, 0)
			if err != nil || total != 1 || len(list) != 1 {
				t.Fatalf("list %v %d %v", list, total, err)
			}
			got := list[0].Transcript
			for _, secret := range []string{"AHVzZXIAcGFzcw==", "dXNlcg==", "cGFzcw=="} {
				if strings.Contains(got, secret) {
					t.Fatalf("credential %s kept:\n%s", secret, got)
				}
			}
			want := core.Mask
			if vis == "full" {
				want = debuglog.Redacted
			}
			if strings.Count(got, want) != 3 || !strings.Contains(got, "C: AUTH PLAIN "+want) || !strings.Contains(got, "MAIL FROM:<a@example.com>") || !strings.Contains(got, "S: 334 VXNlcm5hbWU6") {
				t.Fatalf("transcript:\n%s", got)
			}
			if list[0].ConnectionID != 7 || filepath.Dir(filepath.Join(ts.Dir(), "x")) != filepath.Join(root, "smtp-sessions") {
				t.Fatalf("entry %+v in %s", list[0], ts.Dir())
			}
		})
	}
}

func TestTranscriptsBoundedNewestFirst(t *testing.T) {
	root := t.TempDir()
	ts := debuglog.NewTranscripts(root, 3, 64, debuglog.Redactor{}, nil)
	for i := int64(1); i <= 5; i++ {
		ts.SaveTranscript(i, "C: NOOP "+strings.Repeat("n", int(i)))
	}
	ts.SaveTranscript(9, "   ") // blank: not stored
	ts.SaveTranscript(6, strings.Repeat("x", 500))
	list, total, err := ts.List(context.Background(), 0, 2)
	if err != nil || total != 3 || len(list) != 2 {
		t.Fatalf("list %d of %d: %v", len(list), total, err)
	}
	if list[0].ConnectionID != 6 || list[1].ConnectionID != 5 {
		t.Fatalf("order %d, %d", list[0].ConnectionID, list[1].ConnectionID)
	}
	if len(list[0].Transcript) > 64+40 || !strings.Contains(list[0].Transcript, "truncated") {
		t.Fatalf("long transcript kept at %d bytes", len(list[0].Transcript))
	}
	files, _ := os.ReadDir(ts.Dir())
	if len(files) != 3 {
		t.Fatalf("%d files on disk", len(files))
	}
	// A new store on the same root sees the same transcripts.
	again := debuglog.NewTranscripts(root, 3, 64, debuglog.Redactor{}, nil)
	if _, total, _ := again.List(context.Background(), 2, 10); total != 3 {
		t.Fatalf("reopened total %d", total)
	}
	n, err := again.Clear(context.Background())
	if err != nil || n != 3 {
		t.Fatalf("clear %d %v", n, err)
	}
	if list, total, _ := ts.List(context.Background(), 0, 0); total != 0 && len(list) != 0 {
		// ts has a stale index; its files are gone, so it lists nothing readable.
		t.Fatalf("after clear: %d listed of %d", len(list), total)
	}
}

// credentials are the values TestCredentialsInEveryChannel sends; none may
// be written by a channel unless the visibility is show.
var credentials = map[string]string{
	"_wpnonce":      "wpnonce-7f3a9c",
	"code":          "authcode-5d1e",
	"code_verifier": "verifier-88b2",
	"state":         "state-c0ffee",
	"client_secret": "clientsecret-4411",
	"refresh_token": "refresh-9911",
	"access_token":  "access-7722",
	"id_token":      "idtoken-3344",
	"assertion":     "assertion-5566",
	"cookie":        "wordpress_logged_in_abc=cookie-1234",
	"authorization": "authz-9876",
}

// channelRun makes one channel write lines carrying credentials, and
// returns the credential names it sent and the non-secret texts that must
// stay visible.
type channelRun func(t *testing.T, l *debuglog.Log) (sent []string, visible []string)

func httpOutRun(t *testing.T, l *debuglog.Log) ([]string, []string) {
	c := credentials
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Location", "https://site.example/wp-admin/?page=mail&code="+c["code"]+"&state="+c["state"])
		if r.URL.Path == "/rest" {
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `{"code":"rest_forbidden","data":{"state":"active"}}`)
			return
		}
		fmt.Fprintf(w, `{"access_token":%q,"refresh_token":%q,"id_token":%q,"token_type":"Bearer"}`, c["access_token"], c["refresh_token"], c["id_token"])
	}))
	defer upstream.Close()
	form := url.Values{"grant_type": {"authorization_code"}, "code": {c["code"]}, "code_verifier": {c["code_verifier"]},
		"client_secret": {c["client_secret"]}, "redirect_uri": {"https://site.example/callback"}, "client_assertion": {c["assertion"]}}
	req, _ := http.NewRequest("POST", upstream.URL+"/token?_wpnonce="+c["_wpnonce"]+"&state="+c["state"], strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-WP-Nonce", c["_wpnonce"])
	req.Header.Set("Cookie", c["cookie"])
	req.Header.Set("Authorization", "Bearer "+c["authorization"])
	client := l.HTTPClient(upstream.Client())
	for _, r := range []*http.Request{req, mustRequest(t, "GET", upstream.URL+"/rest?code="+c["code"], "")} {
		resp, err := client.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return []string{"_wpnonce", "code", "code_verifier", "state", "client_secret", "refresh_token", "access_token", "id_token", "assertion", "cookie", "authorization"},
		[]string{"grant_type=authorization_code", "redirect_uri=https%3A%2F%2Fsite.example%2Fcallback", `\"code\":\"rest_forbidden\"`, `\"state\":\"active\"`}
}

func mustRequest(t *testing.T, method, u, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func requestRun(t *testing.T, l *debuglog.Log) ([]string, []string) {
	c := credentials
	h := l.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	// The provider's redirect to the OAuth callback, with a browser's
	// cookie; a screen's request with its nonce and the screen's URL as
	// Referer.
	cb := httptest.NewRequest("GET", "/wp-json/mailsvc/v1/oauth/google/callback?code="+c["code"]+"&state="+c["state"]+"&scope=mail", nil)
	cb.Header.Set("Cookie", c["cookie"])
	h.ServeHTTP(httptest.NewRecorder(), cb)
	screen := httptest.NewRequest("GET", "/wp-json/mailsvc/v1/logs?_wpnonce="+c["_wpnonce"]+"&page=2", nil)
	screen.Header.Set("X-WP-Nonce", c["_wpnonce"])
	screen.Header.Set("Referer", "https://site.example/wp-admin/admin.php?page=mail&_wpnonce="+c["_wpnonce"])
	h.ServeHTTP(httptest.NewRecorder(), screen)
	return []string{"code", "state", "_wpnonce", "cookie"}, []string{"scope=mail", "page=2", "/oauth/google/callback"}
}

func requestPayloadRun(t *testing.T, l *debuglog.Log) ([]string, []string) {
	c := credentials
	h := l.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	// Microsoft's form_post answer to the one-click callback.
	post := httptest.NewRequest("POST", "/wp-json/mailsvc/v1/pro/oauth/microsoft/one-click/callback",
		strings.NewReader("code="+c["code"]+"&state="+c["state"]+"&session_state=s1"))
	post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	h.ServeHTTP(httptest.NewRecorder(), post)
	js := httptest.NewRequest("POST", "/wp-json/mailsvc/v1/connections/1/oauth/token",
		strings.NewReader(fmt.Sprintf(`{"_wpnonce":%q,"code_verifier":%q,"refresh_token":%q,"code":"keep-me"}`, c["_wpnonce"], c["code_verifier"], c["refresh_token"])))
	js.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(httptest.NewRecorder(), js)
	// A body that does not parse is still redacted.
	bad := httptest.NewRequest("POST", "/wp-json/mailsvc/v1/connections", strings.NewReader(fmt.Sprintf(`{"settings":{"client_secret":%q`, c["client_secret"])))
	bad.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(httptest.NewRecorder(), bad)
	return []string{"code", "state", "_wpnonce", "code_verifier", "refresh_token", "client_secret"}, []string{"session_state=s1", `\"code\":\"keep-me\"`}
}

func mailerRun(t *testing.T, l *debuglog.Log) ([]string, []string) {
	c := credentials
	hooks := &core.Hooks{}
	l.RegisterMailer(hooks)
	hooks.DoAction(core.HookAPIDebug, map[string]any{
		"driver":   "gmail",
		"error":    fmt.Sprintf(`Post "https://oauth2.example/token?code=%s&state=%s": connection refused`, c["code"], c["state"]),
		"response": fmt.Sprintf(`{"error":"invalid_grant","refresh_token":%q`, c["refresh_token"]),
		"request":  map[string]any{"code_verifier": c["code_verifier"], "_wpnonce": c["_wpnonce"]},
	})
	return []string{"code", "state", "refresh_token", "code_verifier", "_wpnonce"}, []string{"invalid_grant", "gmail", "connection refused"}
}

// TestCredentialsInEveryChannel sends the WordPress nonce, the OAuth
// code, state and code_verifier, and the other OAuth credentials through
// every debug channel at every visibility: only show writes them.
func TestCredentialsInEveryChannel(t *testing.T) {
	channels := []struct {
		name string
		opts debuglog.Options
		run  channelRun
	}{
		{"HTTP OUT", debuglog.Options{HTTP: true}, httpOutRun},
		{"REQUEST", debuglog.Options{Request: true}, requestRun},
		{"REQUEST PAYLOAD", debuglog.Options{Request: true}, requestPayloadRun},
		{"MAILER", debuglog.Options{Mailer: true}, mailerRun},
	}
	placeholder := map[string]string{core.VisibilityMask: core.Mask, core.VisibilityFull: debuglog.Redacted, core.VisibilityShow: ""}
	for _, ch := range channels {
		for _, vis := range []string{core.VisibilityMask, core.VisibilityShow, core.VisibilityFull} {
			t.Run(ch.name+"/"+vis, func(t *testing.T) {
				opts := ch.opts
				opts.Root, opts.Visibility, opts.RequestVisibility, opts.MaxBodyBytes = t.TempDir(), vis, vis, 1<<16
				l := debuglog.New(opts)
				sent, visible := ch.run(t, l)
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
				b, err := os.ReadFile(l.Path())
				if err != nil {
					t.Fatal(err)
				}
				text := string(b)
				for _, name := range sent {
					v := credentials[name]
					if name == "cookie" {
						_, v, _ = strings.Cut(v, "=")
					}
					if got := strings.Contains(text, v); got != (vis == core.VisibilityShow) {
						t.Errorf("%s (%s) written: %v, want %v", name, v, got, vis == core.VisibilityShow)
					}
				}
				if p := placeholder[vis]; p != "" && !strings.Contains(text, p) {
					t.Errorf("no %q placeholder", p)
				}
				for _, v := range visible {
					if !strings.Contains(text, v) {
						t.Errorf("non-secret %s lost", v)
					}
				}
				if t.Failed() {
					t.Logf("debug.log:\n%s", text)
				}
			})
		}
	}
}

// TestRedactorParamsAndText: OAuth's code and state are credentials in
// URL queries and forms, not as JSON keys; names are read decoded; pairs
// that do not decode and bodies that are not JSON are redacted too.
func TestRedactorParamsAndText(t *testing.T) {
	r := debuglog.Redactor{Visibility: core.VisibilityFull}
	tests := []struct {
		name, got, want string
	}{
		{"query keeps order and encoding", r.URL(mustURL(t, "https://x.example/cb?scope=a%20b&code=c1&state=s1&session_state=ok")),
			"https://x.example/cb?scope=a%20b&code=[REDACTED]&state=[REDACTED]&session_state=ok"},
		{"encoded name", r.URL(mustURL(t, "https://x.example/?%5Fwpnonce=n1&X=1")), "https://x.example/?%5Fwpnonce=[REDACTED]&X=1"},
		{"empty value stays empty", r.URL(mustURL(t, "https://x.example/?code=&a=1")), "https://x.example/?code=&a=1"},
		{"form pair that does not decode", r.Body([]byte("code=c1&bad=%zz&code_verifier=v1"), "application/x-www-form-urlencoded"),
			"code=[REDACTED]&bad=%zz&code_verifier=[REDACTED]"},
		{"JSON code and state are not OAuth's", r.Body([]byte(`{"code":"rest_forbidden","state":"active","nonce":"n1"}`), "application/json"),
			`{"code":"rest_forbidden","nonce":"[REDACTED]","state":"active"}`},
		{"form without a content type", r.Body([]byte("code=c1&state=s1"), ""), "code=[REDACTED]&state=[REDACTED]"},
		{"URL in free text", r.Text(`Get "https://x.example/t?_ajax_nonce=n1&a=1": EOF`), `Get "https://x.example/t?_ajax_nonce=[REDACTED]&a=1": EOF`},
		{"truncated JSON", r.Body([]byte(`{"client_assertion": "a1", "code":"keep`), "application/json"), `{"client_assertion":"[REDACTED]", "code":"keep`},
		{"a form at the start of text; other pairs stay", r.Text("code=abc is not a URL, see ?page=2"), "code=[REDACTED] is not a URL, see ?page=2"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, tt.got, tt.want)
		}
	}
	show := debuglog.Redactor{Visibility: core.VisibilityShow}
	if got := show.URL(mustURL(t, "https://x.example/cb?code=c1&state=s1")); got != "https://x.example/cb?code=c1&state=s1" {
		t.Errorf("show changed the URL: %s", got)
	}
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// FuzzRedactorBody: any body under any content type is redacted without a
// panic, and a form's code and code_verifier never come out as sent.
func FuzzRedactorBody(f *testing.F) {
	f.Add([]byte(`{"code":"x","refresh_token":"r"}`), "application/json", "c0de")
	f.Add([]byte("a=1&%zz=2&state=s"), "application/x-www-form-urlencoded", "v&=1")
	f.Add([]byte(`{"access_token": "a`), "", "\"quoted\"")
	f.Add([]byte("?_wpnonce=n&x"), "text/plain", "")
	f.Fuzz(func(t *testing.T, body []byte, contentType, secret string) {
		r := debuglog.Redactor{Visibility: core.VisibilityMask}
		_ = r.Body(body, contentType)
		_ = r.Text(string(body))
		if secret == "" {
			return
		}
		for _, name := range []string{"code", "code_verifier", "_wpnonce"} {
			pair := name + "=" + url.QueryEscape(secret)
			form := "a=1&" + pair + "&b=2"
			for _, got := range []string{r.Body([]byte(form), "application/x-www-form-urlencoded"), r.Body([]byte(form), ""), r.URL(&url.URL{Scheme: "https", Host: "x.example", RawQuery: form})} {
				if strings.Contains(got, pair) {
					t.Fatalf("%q redacted as %q", form, got)
				}
			}
		}
	})
}

// TestTranscriptsDeleteNaming: a personal data erase removes the
// transcripts naming the address, in any case, and keeps the others.
func TestTranscriptsDeleteNaming(t *testing.T) {
	ctx := context.Background()
	ts := debuglog.NewTranscripts(t.TempDir(), 10, 0, debuglog.Redactor{}, nil)
	ts.SaveTranscript(1, "C: RCPT TO:<Pat@Example.com>\nS: 250 ok")
	ts.SaveTranscript(2, "C: RCPT TO:<other@example.com>\nS: 250 ok")
	ts.SaveTranscript(3, "C: MAIL FROM:<shop@example.com>\nC: RCPT TO:<pat@example.com>")
	for i, want := range []int{2, 0} {
		n, err := ts.DeleteNaming(ctx, "PAT@example.com")
		if err != nil || n != want {
			t.Fatalf("DeleteNaming #%d = %d, %v; want %d", i+1, n, err, want)
		}
	}
	list, total, err := ts.List(ctx, 0, 0)
	if err != nil || total != 1 || list[0].ConnectionID != 2 {
		t.Fatalf("left %+v (%d, %v), want connection 2's only", list, total, err)
	}
	files, _ := os.ReadDir(ts.Dir())
	if len(files) != 1 {
		t.Fatalf("%d files on disk, want 1", len(files))
	}
}
