package debuglog_test

import (
	"bytes"
	"context"
	"encoding/json"
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
