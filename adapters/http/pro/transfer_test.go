package pro_test

import (
	"context"
	"crypto/ed25519"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	api "github.com/mailsvc/mailsvc/adapters/http"
	httppro "github.com/mailsvc/mailsvc/adapters/http/pro"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/oauth"
	"github.com/mailsvc/mailsvc/app/pro"
	"github.com/mailsvc/mailsvc/app/pro/transfer"
	"github.com/mailsvc/mailsvc/core"
	_ "github.com/mailsvc/mailsvc/drivers/smtp"
)

// memStore is an in-memory transfer.Store whose transactions run on the
// store itself.
type memStore struct {
	*apptest.ConnectionStore
	*apptest.SettingsStore
	*apptest.NotificationStore
}

func (m *memStore) InTransaction(_ context.Context, fn func(transfer.Store) error) error {
	return fn(m)
}

// fakeOneClick records the calls of the one-click routes.
type fakeOneClick struct {
	authorized []oauth.OneClickInput
	callbacks  []oauth.CallbackInput
}

func (f *fakeOneClick) Authorize(_ context.Context, in oauth.OneClickInput) (string, error) {
	if in.ConnectionID == "x" {
		return "", core.InvalidField("connection_id", "Must be a connection id.")
	}
	f.authorized = append(f.authorized, in)
	return "https://consent.example/?p=" + in.Provider, nil
}

func (f *fakeOneClick) Callback(_ context.Context, provider string, in oauth.CallbackInput) string {
	f.callbacks = append(f.callbacks, in)
	return "https://site.example/admin/?oauth=success&provider=" + provider
}

type toolsEnv struct {
	*env
	store    *memStore
	oneclick *fakeOneClick
	licenses *pro.Licenses
}

func newToolsEnv(t *testing.T) *toolsEnv {
	t.Helper()
	pub, priv, _ := ed25519.GenerateKey(nil)
	st := &memStore{apptest.NewConnectionStore(), apptest.NewSettingsStore(), apptest.NewNotificationStore()}
	lic := &pro.Licenses{Store: st, Cipher: apptest.Cipher{Key: "k"}, Vendors: []ed25519.PublicKey{pub}, Site: "https://shop.example.com"}
	oc := &fakeOneClick{}
	m := &httppro.Module{Licenses: lic, Settings: &pro.Settings{Store: st},
		Transfer: &transfer.Service{Store: st, Tx: st, Sections: []transfer.Section{}}, OneClick: oc}
	s := &api.Server{Auth: adminAuth{}, Hooks: &core.Hooks{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Modules: []api.Module{m}}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return &toolsEnv{env: &env{url: ts.URL + api.Namespace, priv: priv, t: t}, store: st, oneclick: oc, licenses: lic}
}

func TestTransferRoutes(t *testing.T) {
	e := newToolsEnv(t)
	ctx := context.Background()
	if err := e.store.CreateConnection(ctx, &core.Connection{Name: "Relay", Driver: "smtp", IsActive: true,
		Settings: core.Settings{"host": "smtp.example", "port": int64(587), "password": "test-enc:c2VjcmV0"}}); err != nil {
		t.Fatal(err)
	}
	_, exported := e.call("POST", "/pro/tools/export", "")
	changed := strings.Replace(exported, `"smtp.example"`, `"other.example"`, 1)
	renamed := strings.Replace(exported, `"host":"smtp.example"`, `"from_name":"Shop","host":"smtp.example"`, 1)
	e.run([]step{
		{"export", "POST", "/pro/tools/export", "", 200, []string{`"version":1`, `"password":null`, `"secrets_omitted":["password"]`, `"sender_groups":[]`, `"routing_rules":[]`}},
		{"preview malformed", "POST", "/pro/tools/import/preview", `{"data":`, 400, []string{"bad_request"}},
		{"preview no data", "POST", "/pro/tools/import/preview", `{}`, 422, []string{"validation_error", `"data":`}},
		{"preview bad version", "POST", "/pro/tools/import/preview", `{"data":{"version":7}}`, 422, []string{`"data.version":`}},
		{"preview identical", "POST", "/pro/tools/import/preview", `{"data":` + exported + `}`, 200, []string{`"conflicts":[]`, `"skipped":[]`}},
		{"preview conflict", "POST", "/pro/tools/import/preview", `{"data":` + changed + `}`, 200, []string{`"key":"connections:1"`, `"fields":["settings.host"]`}},
		{"preview skipped", "POST", "/pro/tools/import/preview", `{"data":{"version":1,"connections":[{"id":5,"name":"P","driver":"pigeon"}]}}`, 200, []string{`"section":"connections"`, `Unknown driver`}},
		{"import malformed", "POST", "/pro/tools/import", `[`, 400, []string{"bad_request"}},
		{"import bad resolutions type", "POST", "/pro/tools/import", `{"data":{"version":1},"resolutions":[1]}`, 400, []string{"bad_request"}},
		{"import unresolved", "POST", "/pro/tools/import", `{"data":` + changed + `}`, 422, []string{`"resolutions.connections:1":`}},
		{"import bad resolution", "POST", "/pro/tools/import", `{"data":` + changed + `,"resolutions":{"connections:1":"merge"}}`, 422, []string{"keep, replace or new"}},
		{"unchanged after refusals", "POST", "/pro/tools/export", "", 200, []string{`"smtp.example"`}},
		{"import replace", "POST", "/pro/tools/import", `{"data":` + renamed + `,"resolutions":{"connections:1":"replace"}}`, 200, []string{`"counts":{"connections":1}`, `"replaced":[{"section":"connections","id":1,"name":"Relay","existing_id":1}]`}},
		{"replaced", "POST", "/pro/tools/export", "", 200, []string{`"from_name":"Shop"`}},
	}, "c2VjcmV0")
	if c := e.store.ConnectionStore.Raw(1); c.Settings.String("password") != "test-enc:c2VjcmV0" {
		t.Fatalf("the replaced connection lost its secret: %v", c.Settings)
	}
	// A replace that moves the connection to another server drops the
	// secret entered for the first one.
	e.run([]step{
		{"import moved", "POST", "/pro/tools/import", `{"data":` + changed + `,"resolutions":{"connections:1":"replace"}}`, 200,
			[]string{`"replaced":[{"section":"connections","id":1,"name":"Relay","existing_id":1,"status":"needs_password","missing":["password"]}]`}},
		{"moved", "POST", "/pro/tools/export", "", 200, []string{`"other.example"`, `"secrets_omitted":[]`}},
	}, "c2VjcmV0")
	if c := e.store.ConnectionStore.Raw(1); c.Settings["password"] != nil || !strings.Contains(c.LastError, "password") {
		t.Fatalf("the moved connection kept its secret: %v (last_error %q)", c.Settings, c.LastError)
	}
}
