package transfer_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/pro/transfer"
	"github.com/mailsvc/mailsvc/core"
)

// memStore is the in-memory Store of these tests. Its transactions run on
// the same store (atomicity is tested on the real databases in test/pro).
type memStore struct {
	*apptest.ConnectionStore
	*apptest.SettingsStore
	*apptest.NotificationStore
}

func newStore() *memStore {
	return &memStore{apptest.NewConnectionStore(), apptest.NewSettingsStore(), apptest.NewNotificationStore()}
}

func (m *memStore) InTransaction(_ context.Context, fn func(transfer.Store) error) error {
	return fn(m)
}

func init() {
	core.Register(core.Driver{Slug: "xfer", Name: "Transfer test",
		Fields: []core.Field{{Key: "host", Type: core.FieldString}, {Key: "api_key", Type: core.FieldPassword}, {Key: "region", Type: core.FieldString},
			{Key: "base_url", Type: core.FieldURL, Hosts: []string{"api.xfer.example"}},
			{Key: "endpoint", Type: core.FieldURL, Destination: true}, {Key: "timeout", Type: core.FieldInteger}},
		New: func(*core.Connection, core.DriverEnv) (core.Transport, error) { return nil, nil }})
	core.RegisterChannelType(core.ChannelType{Slug: "xferchan", Name: "Transfer test channel",
		Fields: []core.Field{{Key: "chat", Type: core.FieldString}, {Key: "webhook_url", Type: core.FieldURL, Sensitive: true}},
		New:    func(*core.NotificationChannel, core.NotifierEnv) (core.Notifier, error) { return nil, nil }})
}

var cipher = apptest.Cipher{Key: "k"}

func enc(s string) string { v, _ := cipher.Encrypt(s); return v }

// seed fills a store: two connections (one with an encrypted secret and an
// unknown encrypted extra), a channel with a secret URL, settings.
func seed(t *testing.T, st *memStore) {
	t.Helper()
	ctx := context.Background()
	for _, c := range []*core.Connection{
		{Name: "Main", Driver: "xfer", IsActive: true, Settings: core.Settings{"host": "a.example", "api_key": enc("sekret-1"), "note_x": enc("hidden")}},
		{Name: "Backup", Driver: "xfer", IsActive: false, Settings: core.Settings{"host": "b.example", "region": "eu"}},
	} {
		if err := st.CreateConnection(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	ch := &core.NotificationChannel{Name: "Ops", Type: "xferchan", IsActive: true, Events: []string{"queue_stalled", "delivery_failed"},
		Settings: core.Settings{"chat": "ops", "webhook_url": enc("https://hooks.example/T0/SECRET")}}
	if err := st.CreateNotificationChannel(ctx, ch); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveSettings(ctx, core.ScopeFree, map[string]any{"from_name": "Shop", "default_connection_id": int64(2), "log_retention_days": int64(30)}); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveSettings(ctx, core.ScopePro, map[string]any{"max_retries": int64(5), "excluded_plugins": []any{"woocommerce"}}); err != nil {
		t.Fatal(err)
	}
}

func service(st *memStore) *transfer.Service {
	return &transfer.Service{Store: st, Tx: st, Site: "https://shop.example", Cipher: cipher, Sections: []transfer.Section{}}
}

func export(t *testing.T, svc *transfer.Service) []byte {
	t.Helper()
	snap, err := svc.Export(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestExportLeavesSecretsOut(t *testing.T) {
	st := newStore()
	seed(t, st)
	b := export(t, service(st))
	for _, bad := range []string{"sekret-1", "hidden", "SECRET", "test-enc:"} {
		if strings.Contains(string(b), bad) {
			t.Fatalf("export contains %q: %s", bad, b)
		}
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		path func() any
		want string
	}{
		{"version", func() any { return got["version"] }, "1"},
		{"site", func() any { return got["site"] }, `"https://shop.example"`},
		{"secret key null", func() any { return conn(got, 0)["settings"].(map[string]any)["api_key"] }, "null"},
		{"ciphertext of an unknown key null", func() any { return conn(got, 0)["settings"].(map[string]any)["note_x"] }, "null"},
		{"omitted listed", func() any { return conn(got, 0)["secrets_omitted"] }, `["api_key","note_x"]`},
		{"plain kept", func() any { return conn(got, 0)["settings"].(map[string]any)["host"] }, `"a.example"`},
		{"no secrets", func() any { return conn(got, 1)["secrets_omitted"] }, `[]`},
		{"channel secret", func() any { return got["alert_channels"].([]any)[0].(map[string]any)["secrets_omitted"] }, `["webhook_url"]`},
		{"channel events", func() any { return got["alert_channels"].([]any)[0].(map[string]any)["events"] }, `["delivery_failed","queue_stalled"]`},
		{"settings", func() any { return got["settings"] }, `{"default_connection_id":2,"from_name":"Shop","log_retention_days":30}`},
		{"pro settings", func() any { return got["pro_settings"] }, `{"excluded_plugins":["woocommerce"],"max_retries":5}`},
		{"sender groups placeholder", func() any { return got["sender_groups"] }, `[]`},
		{"routing rules placeholder", func() any { return got["routing_rules"] }, `[]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, _ := json.Marshal(tt.path())
			if string(v) != tt.want {
				t.Fatalf("got %s, want %s", v, tt.want)
			}
		})
	}
}

func conn(snap map[string]any, i int) map[string]any {
	return snap["connections"].([]any)[i].(map[string]any)
}

// edit changes a JSON snapshot through fn.
func edit(t *testing.T, b []byte, fn func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	fn(m)
	out, _ := json.Marshal(m)
	return out
}

func TestPreview(t *testing.T) {
	src := newStore()
	seed(t, src)
	file := export(t, service(src))
	tests := []struct {
		name          string
		data          []byte
		wantErrField  string
		wantConflicts []string // key → fields
		wantSkipped   []string // section/name
	}{
		{name: "identical site has no conflicts", data: file},
		{name: "changed fields", data: edit(t, file, func(m map[string]any) {
			c := m["connections"].([]any)[0].(map[string]any)
			c["is_active"] = false
			c["settings"].(map[string]any)["host"] = "c.example"
			c["settings"].(map[string]any)["api_key"] = "pasted-secret" // secrets never compared
			m["settings"].(map[string]any)["from_name"] = "Other"
		}), wantConflicts: []string{"connections:1 is_active,settings.host", "settings from_name"}},
		{name: "unknown driver, channel type, section and bad setting skipped", data: edit(t, file, func(m map[string]any) {
			m["connections"].([]any)[1].(map[string]any)["driver"] = "carrier-pigeon"
			m["alert_channels"].([]any)[0].(map[string]any)["type"] = "fax"
			m["widgets"] = []any{map[string]any{"id": 1, "name": "W"}}
			m["sender_groups"] = []any{map[string]any{"id": 1, "name": "G"}}
			m["settings"].(map[string]any)["log_retention_days"] = 99999
			m["settings"].(map[string]any)["default_connection_id"] = 2 // refers to the skipped connection
		}), wantSkipped: []string{"alert_channels/Ops", "connections/Backup", "sender_groups/G", "settings/default_connection_id", "settings/log_retention_days", "widgets/W"}},
		{name: "bad version", data: edit(t, file, func(m map[string]any) { m["version"] = 2 }), wantErrField: "data.version"},
		{name: "no version", data: edit(t, file, func(m map[string]any) { delete(m, "version") }), wantErrField: "data.version"},
		{name: "not an object", data: []byte(`[1,2]`), wantErrField: "data"},
		{name: "missing", data: nil, wantErrField: "data"},
		{name: "section not a list", data: edit(t, file, func(m map[string]any) { m["connections"] = "x" }), wantErrField: "data.connections"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := newStore()
			seed(t, dst)
			before := export(t, service(dst))
			p, err := service(dst).Preview(context.Background(), tt.data)
			if tt.wantErrField != "" {
				if _, ok := core.ErrorFields(err)[tt.wantErrField]; !ok {
					t.Fatalf("err = %v, want a validation error on %s", err, tt.wantErrField)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range p.Conflicts {
				got = append(got, c.Key+" "+strings.Join(c.Fields, ","))
			}
			if strings.Join(got, "|") != strings.Join(tt.wantConflicts, "|") {
				t.Errorf("conflicts %v, want %v", got, tt.wantConflicts)
			}
			var skipped []string
			for _, s := range p.Skipped {
				if s.Reason == "" {
					t.Errorf("skipped %+v without a reason", s)
				}
				skipped = append(skipped, s.Section+"/"+s.Name)
			}
			if strings.Join(skipped, "|") != strings.Join(tt.wantSkipped, "|") {
				t.Errorf("skipped %v, want %v", skipped, tt.wantSkipped)
			}
			if after := export(t, service(dst)); !sameExceptTime(before, after) {
				t.Errorf("preview wrote:\n%s\n%s", before, after)
			}
		})
	}
}

func sameExceptTime(a, b []byte) bool {
	strip := func(x []byte) string {
		var m map[string]any
		_ = json.Unmarshal(x, &m)
		delete(m, "exported_at")
		out, _ := json.Marshal(m)
		return string(out)
	}
	return strip(a) == strip(b)
}

func TestImportResolutions(t *testing.T) {
	src := newStore()
	seed(t, src)
	file := edit(t, export(t, service(src)), func(m map[string]any) {
		c := m["connections"].([]any)[0].(map[string]any)
		c["settings"].(map[string]any)["host"] = "new.example"
		m["settings"].(map[string]any)["from_name"] = "Imported"
	})
	tests := []struct {
		name        string
		resolutions map[string]string
		wantErr     []string // fields of the validation error
		check       func(t *testing.T, st *memStore, r *transfer.Result)
	}{
		{name: "unresolved", resolutions: map[string]string{"settings": "keep"}, wantErr: []string{"resolutions.connections:1"}},
		{name: "bad value", resolutions: map[string]string{"connections:1": "merge", "settings": "keep"}, wantErr: []string{"resolutions.connections:1"}},
		{name: "unknown key", resolutions: map[string]string{"connections:1": "keep", "settings": "keep", "connections:9": "keep"}, wantErr: []string{"resolutions.connections:9"}},
		{name: "new settings", resolutions: map[string]string{"connections:1": "keep", "settings": "new"}, wantErr: []string{"resolutions.settings"}},
		{name: "keep", resolutions: map[string]string{"connections:1": "keep", "settings": "keep"}, check: func(t *testing.T, st *memStore, r *transfer.Result) {
			if c := st.ConnectionStore.Raw(1); c.Settings.String("host") != "a.example" {
				t.Errorf("kept connection changed: %v", c.Settings)
			}
			if len(r.Kept) != 2 || len(r.Replaced) != 0 || r.Counts["connections"] != 0 {
				t.Errorf("result %+v", r)
			}
			if v, _ := st.LoadSettings(context.Background(), core.ScopeFree); v["from_name"] != "Shop" {
				t.Errorf("from_name = %v", v["from_name"])
			}
		}},
		{name: "replace keeps the secret", resolutions: map[string]string{"connections:1": "replace", "settings": "replace"}, check: func(t *testing.T, st *memStore, r *transfer.Result) {
			c := st.ConnectionStore.Raw(1)
			if c.Settings.String("host") != "new.example" || c.Settings.String("api_key") != enc("sekret-1") {
				t.Errorf("replaced connection settings %v", c.Settings)
			}
			if len(r.Replaced) != 2 || r.Counts["connections"] != 1 {
				t.Errorf("result %+v", r)
			}
			if v, _ := st.LoadSettings(context.Background(), core.ScopeFree); v["from_name"] != "Imported" {
				t.Errorf("from_name = %v", v["from_name"])
			}
		}},
		{name: "new", resolutions: map[string]string{"connections:1": "new", "settings": "keep"}, check: func(t *testing.T, st *memStore, r *transfer.Result) {
			c, err := st.FindConnectionByID(context.Background(), 3)
			if err != nil {
				t.Fatal(err)
			}
			if c.Name != "Main (imported)" || c.Settings.String("host") != "new.example" || c.Settings["api_key"] != nil {
				t.Errorf("new connection %+v", c)
			}
			if !strings.Contains(c.LastError, "api_key") {
				t.Errorf("new connection without its secret: last_error %q should name it", c.LastError)
			}
			if st.ConnectionStore.Raw(1).Settings.String("host") != "a.example" {
				t.Error("the existing connection changed")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := newStore()
			seed(t, dst)
			before := export(t, service(dst))
			r, err := service(dst).Import(context.Background(), file, tt.resolutions)
			if tt.wantErr != nil {
				fields := core.ErrorFields(err)
				for _, f := range tt.wantErr {
					if fields[f] == "" {
						t.Fatalf("err = %v (%v), want a message on %s", err, fields, f)
					}
				}
				if after := export(t, service(dst)); !sameExceptTime(before, after) {
					t.Error("a refused import wrote")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, dst, r)
		})
	}
}

func TestRoundTripIntoAnEmptyStore(t *testing.T) {
	src := newStore()
	seed(t, src)
	// A gap in the ids: the settings' connection references must follow.
	if _, err := src.DeleteConnections(context.Background(), []int64{1}); err != nil {
		t.Fatal(err)
	}
	file := export(t, service(src))
	dst := newStore()
	r, err := service(dst).Import(context.Background(), file, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Counts["connections"] != 1 || r.Counts["alert_channels"] != 1 || r.Counts["settings"] != 3 || r.Counts["pro_settings"] != 2 {
		t.Fatalf("counts %v", r.Counts)
	}
	if v, _ := dst.LoadSettings(context.Background(), core.ScopeFree); v["default_connection_id"] != int64(1) {
		t.Fatalf("default_connection_id = %v, want the imported connection 1", v["default_connection_id"])
	}
	again := export(t, service(dst))
	// Same apart from ids (2 became 1) and time.
	want := strings.ReplaceAll(string(file), `"default_connection_id":2`, `"default_connection_id":1`)
	want = strings.Replace(want, `"id":2`, `"id":1`, 1)
	// ... and the secrets, which the new site does not have.
	want = strings.Replace(want, `"secrets_omitted":["webhook_url"],"settings":{"chat":"ops","webhook_url":null}`, `"secrets_omitted":[],"settings":{"chat":"ops"}`, 1)
	if !sameExceptTime([]byte(want), again) {
		t.Fatalf("round trip differs:\n%s\n%s", want, again)
	}
	// A second import of the same file finds everything identical.
	r, err = service(dst).Import(context.Background(), file, nil)
	if err != nil || len(r.Unchanged) != 2 || r.Counts["connections"] != 0 {
		t.Fatalf("re-import: %+v, %v", r, err)
	}
}

// TestImportSkipsEndpointsOffTheProviderHosts: a snapshot whose connection
// points an endpoint setting off the provider's hosts is skipped with the
// reason (as POST /connections refuses it), unless custom endpoints are
// allowed; the provider's own host imports.
func TestImportSkipsEndpointsOffTheProviderHosts(t *testing.T) {
	src := newStore()
	seed(t, src)
	file := export(t, service(src))
	withBaseURL := func(u string) []byte {
		return edit(t, file, func(m map[string]any) {
			m["connections"].([]any)[0].(map[string]any)["settings"].(map[string]any)["base_url"] = u
		})
	}
	tests := []struct {
		name        string
		baseURL     string
		allowCustom bool
		wantSkipped bool
	}{
		{"metadata service", "http://169.254.169.254/latest/", false, true},
		{"loopback", "https://127.0.0.1:8443", false, true},
		{"the provider's host", "https://api.xfer.example/v1", false, false},
		{"loopback with custom endpoints allowed", "https://127.0.0.1:8443", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := newStore()
			seed(t, dst)
			svc := service(dst)
			svc.Connections = &app.Connections{Cipher: cipher, AllowCustomEndpoints: tt.allowCustom}
			// A skipped connection has no conflict to resolve.
			resolutions := map[string]string{"connections:1": transfer.ResolveReplace}
			if tt.wantSkipped {
				resolutions = nil
			}
			res, err := svc.Import(context.Background(), withBaseURL(tt.baseURL), resolutions)
			if err != nil {
				t.Fatal(err)
			}
			skipped := ""
			for _, s := range res.Skipped {
				if s.Section == transfer.SectionConnections && s.Name == "Main" {
					skipped = s.Reason
				}
			}
			if (skipped != "") != tt.wantSkipped {
				t.Fatalf("skipped reason %q, want skipped %v", skipped, tt.wantSkipped)
			}
			stored := dst.ConnectionStore.Raw(1).Settings["base_url"]
			if tt.wantSkipped {
				if !strings.Contains(skipped, "base_url") || !strings.Contains(skipped, core.AllowCustomEndpointsConstant) {
					t.Errorf("reason %q", skipped)
				}
				if stored != nil {
					t.Errorf("base_url stored: %v", stored)
				}
			} else if stored != tt.baseURL {
				t.Errorf("base_url stored %v, want %s", stored, tt.baseURL)
			}
		})
	}
}

// TestImportBindsSecretsToTheirDestination: a replace that moves a
// connection (a destination field changes) drops its stored secrets and
// reports it needs_password; one that does not keeps them; a connection
// whose settings its driver rejects is skipped with the driver's reason
// in the preview and the import, and nothing of it is written.
func TestImportBindsSecretsToTheirDestination(t *testing.T) {
	src := newStore()
	seed(t, src)
	file := export(t, service(src))
	moved := edit(t, file, func(m map[string]any) {
		conn(m, 0)["settings"].(map[string]any)["endpoint"] = "http://127.0.0.1:9/capture"
	})
	invalid := edit(t, file, func(m map[string]any) {
		conn(m, 0)["settings"].(map[string]any)["timeout"] = "not-a-number"
	})
	replace := map[string]string{"connections:1": "replace"}

	dst := newStore()
	seed(t, dst)
	r, err := service(dst).Import(context.Background(), moved, replace)
	if err != nil {
		t.Fatal(err)
	}
	c := dst.ConnectionStore.Raw(1)
	if c.Settings["api_key"] != nil || c.Settings.String("endpoint") != "http://127.0.0.1:9/capture" {
		t.Fatalf("moved connection settings %v: the secret followed it", c.Settings)
	}
	if len(r.Replaced) != 1 || r.Replaced[0].Status != transfer.StatusNeedsPassword || strings.Join(r.Replaced[0].Missing, ",") != "api_key" {
		t.Fatalf("replaced %+v, want connection 1 needs_password, missing api_key", r.Replaced)
	}
	if !strings.Contains(c.LastError, "api_key") {
		t.Fatalf("last_error %q does not say which secret to enter", c.LastError)
	}

	for _, name := range []string{"preview", "import"} {
		dst := newStore()
		seed(t, dst)
		before := export(t, service(dst))
		var skipped []transfer.Skipped
		if name == "preview" {
			p, err := service(dst).Preview(context.Background(), invalid)
			if err != nil {
				t.Fatal(err)
			}
			skipped = p.Skipped
		} else {
			r, err := service(dst).Import(context.Background(), invalid, nil)
			if err != nil {
				t.Fatal(err)
			}
			skipped = r.Skipped
		}
		if len(skipped) != 1 || skipped[0].Name != "Main" || !strings.Contains(skipped[0].Reason, "timeout: Must be a whole number.") {
			t.Fatalf("%s: skipped %+v, want Main for its timeout", name, skipped)
		}
		if after := export(t, service(dst)); !sameExceptTime(before, after) {
			t.Fatalf("%s wrote the invalid connection:\n%s\n%s", name, before, after)
		}
	}
}

// TestEmailControlsAndReportConnection: the email controls scope goes
// through export and import (bad entries skipped, a differing stored
// scope a conflict), and summary_report.connection_id follows its
// connection to its new id like default_connection_id; a report
// connection that is not imported is dropped (the default connection)
// while the rest of the report's setting imports.
func TestEmailControlsAndReportConnection(t *testing.T) {
	ctx := context.Background()
	src := newStore()
	seed(t, src)
	if err := src.SaveSettings(ctx, core.ScopeEmailControls, map[string]any{"comment_notification": false, "new_user_admin": false, "auto_update_core": true}); err != nil {
		t.Fatal(err)
	}
	if err := src.SaveSettings(ctx, core.ScopeFree, map[string]any{"summary_report": map[string]any{"frequency": "daily", "recipients": []any{"ops@example.com"}, "connection_id": int64(2)}}); err != nil {
		t.Fatal(err)
	}
	// Connection 1 goes: Backup (2) will be 1 on the new site.
	if _, err := src.DeleteConnections(ctx, []int64{1}); err != nil {
		t.Fatal(err)
	}
	file := export(t, service(src))
	var shape map[string]any
	if err := json.Unmarshal(file, &shape); err != nil {
		t.Fatal(err)
	}
	if ec, _ := shape["email_controls"].(map[string]any); len(ec) != 3 || ec["comment_notification"] != false || ec["auto_update_core"] != true {
		t.Fatalf("exported email_controls %v", shape["email_controls"])
	}

	dst := newStore()
	r, err := service(dst).Import(ctx, file, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Counts["email_controls"] != 3 {
		t.Errorf("counts %v, want 3 email controls", r.Counts)
	}
	ec, _ := dst.LoadSettings(ctx, core.ScopeEmailControls)
	if ec["comment_notification"] != false || ec["new_user_admin"] != false || ec["auto_update_core"] != true {
		t.Errorf("imported email controls %v", ec)
	}
	free, _ := dst.LoadSettings(ctx, core.ScopeFree)
	if got := core.ParseSummaryReport(free); got.ConnectionID != 1 || got.Frequency != "daily" || len(got.Recipients) != 1 {
		t.Errorf("imported summary_report %+v, want daily to ops@ through the imported connection 1", got)
	}
	// Re-importing finds nothing changed: the remapped report connection
	// compares equal.
	p, err := service(dst).Preview(ctx, file)
	if err != nil || len(p.Conflicts) != 0 {
		t.Errorf("re-import preview: %+v, %v", p, err)
	}

	// A site that switched comment notifications back on: a conflict,
	// kept or replaced.
	if err := dst.SaveSettings(ctx, core.ScopeEmailControls, map[string]any{"comment_notification": true}); err != nil {
		t.Fatal(err)
	}
	p, err = service(dst).Preview(ctx, file)
	if err != nil || len(p.Conflicts) != 1 || p.Conflicts[0].Key != "email_controls" || strings.Join(p.Conflicts[0].Fields, ",") != "comment_notification" {
		t.Fatalf("preview %+v, %v; want the email_controls conflict on comment_notification", p, err)
	}
	if _, err := service(dst).Import(ctx, file, map[string]string{"email_controls": "keep"}); err != nil {
		t.Fatal(err)
	}
	if ec, _ := dst.LoadSettings(ctx, core.ScopeEmailControls); ec["comment_notification"] != true {
		t.Errorf("kept: comment_notification = %v", ec["comment_notification"])
	}
	if _, err := service(dst).Import(ctx, file, map[string]string{"email_controls": "replace"}); err != nil {
		t.Fatal(err)
	}
	if ec, _ := dst.LoadSettings(ctx, core.ScopeEmailControls); ec["comment_notification"] != false {
		t.Errorf("replaced: comment_notification = %v", ec["comment_notification"])
	}

	// Bad email controls are skipped; a report connection missing from
	// the file is dropped, the rest of the report's setting imported.
	edited := strings.Replace(string(file), `"connection_id":2`, `"connection_id":99`, 1)
	edited = strings.Replace(edited, `"email_controls":{`, `"email_controls":{"nope":false,"comment_moderation":"no",`, 1)
	other := newStore()
	r, err = service(other).Import(ctx, []byte(edited), nil)
	if err != nil {
		t.Fatal(err)
	}
	skipped := map[string]string{}
	for _, sk := range r.Skipped {
		skipped[sk.Section+":"+sk.Name] = sk.Reason
	}
	for key, want := range map[string]string{
		"email_controls:nope":                   "Unknown email kind.",
		"email_controls:comment_moderation":     "Must be true or false.",
		"settings:summary_report.connection_id": "Connection 99 is not imported",
	} {
		if !strings.Contains(skipped[key], want) {
			t.Errorf("skipped %s: %q, want %q (all: %v)", key, skipped[key], want, skipped)
		}
	}
	if r.Counts["email_controls"] != 3 {
		t.Errorf("counts %v, want the 3 good email controls", r.Counts)
	}
	free, _ = other.LoadSettings(ctx, core.ScopeFree)
	if got := core.ParseSummaryReport(free); got.ConnectionID != 0 || got.Frequency != "daily" || len(got.Recipients) != 1 {
		t.Errorf("summary_report with a missing connection imported as %+v, want daily to ops@ through the default connection", got)
	}
}

// TestImportWritesBridgeDirective: importing the Pro settings writes the
// WordPress bridge's excluded sources they decide, in the import's
// transaction; keeping the stored Pro settings leaves it as it is.
func TestImportWritesBridgeDirective(t *testing.T) {
	ctx := context.Background()
	withExclusions := func(on bool, plugins ...any) []byte {
		src := newStore()
		if err := src.SaveSettings(ctx, core.ScopePro, map[string]any{"plugin_exclusions_enabled": on, "excluded_plugins": plugins}); err != nil {
			t.Fatal(err)
		}
		return export(t, service(src))
	}
	dst := newStore()
	for _, step := range []struct {
		name        string
		file        []byte
		resolutions map[string]string
		want        string
	}{
		{"into an empty store", withExclusions(true, "keep-out", "theme:astra"), nil, `["keep-out","theme:astra"]`},
		{"kept", withExclusions(false, "keep-out"), map[string]string{"pro_settings": "keep"}, `["keep-out","theme:astra"]`},
		{"replaced, exclusions off", withExclusions(false, "keep-out"), map[string]string{"pro_settings": "replace"}, `[]`},
	} {
		if _, err := service(dst).Import(ctx, step.file, step.resolutions); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		m, err := dst.LoadSettings(ctx, core.ScopeBridge)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := json.Marshal(m[core.BridgeExcludedSources]); string(got) != step.want {
			t.Errorf("%s: excluded sources %s, want %s", step.name, got, step.want)
		}
	}
}
