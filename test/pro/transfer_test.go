package protest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	_ "github.com/mailsvc/mailsvc/adapters/notify/all"
	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/app/pro/transfer"
	"github.com/mailsvc/mailsvc/core"
	_ "github.com/mailsvc/mailsvc/drivers/all"
	"github.com/mailsvc/mailsvc/internal/testdb"
)

// txStore runs an import in one transaction of the real store.
type txStore struct{ db *store.DB }

func (t txStore) InTransaction(ctx context.Context, fn func(transfer.Store) error) error {
	return t.db.InTransaction(ctx, func(tx *store.DB) error { return fn(newTransferStore(tx)) })
}

// transferStore joins the store's services a transfer reads and writes
// (as the Pro module's does); the sections' own stores are the DB's.
type transferStore struct {
	*store.DB
	*store.ConnectionService
	*store.SettingsService
	*store.NotificationService
}

func newTransferStore(db *store.DB) transferStore {
	return transferStore{db, db.Connections(), db.Settings(), db.Notifications()}
}

// failingSection fails its import, after connections were written.
type failingSection struct{}

func (failingSection) Name() string { return "sender_groups" }
func (failingSection) Export(context.Context, transfer.Store) ([]transfer.Item, error) {
	return []transfer.Item{}, nil
}
func (failingSection) Check(transfer.Item) string { return "" }
func (failingSection) Apply(context.Context, transfer.Store, transfer.Item, int64, string, transfer.Refs) (int64, error) {
	return 0, errors.New("the disk is full")
}

func openStore(t *testing.T, dsn string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), dsn, store.DefaultPrefix, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func transferService(db *store.DB, sections ...transfer.Section) *transfer.Service {
	return &transfer.Service{Store: newTransferStore(db), Tx: txStore{db}, Site: "https://shop.example", Cipher: apptest.Cipher{Key: "k"}, Sections: sections}
}

func seedStore(t *testing.T, db *store.DB) {
	t.Helper()
	ctx := context.Background()
	c := apptest.Cipher{Key: "k"}
	secret, _ := c.Encrypt("SG.very-secret")
	url, _ := c.Encrypt("https://hooks.slack.com/services/T0/B0/SECRET")
	for _, conn := range []*core.Connection{
		{Name: "Old", Driver: "smtp", IsActive: true, Settings: core.Settings{"host": "old.example", "port": int64(25)}},
		{Name: "SendGrid", Driver: "sendgrid", IsActive: true, Settings: core.Settings{"api_key": secret, "from_email": "shop@example.com"}},
		{Name: "Relay", Driver: "smtp", IsActive: false, Settings: core.Settings{"host": "smtp.example", "port": int64(587), "encryption": "tls"}},
	} {
		if err := db.Connections().CreateConnection(ctx, conn); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Connections().DeleteConnections(ctx, []int64{1}); err != nil {
		t.Fatal(err)
	}
	ch := &core.NotificationChannel{Name: "Ops", Type: "slack", IsActive: true, Events: []string{"delivery_failed"}, Settings: core.Settings{"webhook_url": url}}
	if err := db.Notifications().CreateNotificationChannel(ctx, ch); err != nil {
		t.Fatal(err)
	}
	if err := db.Settings().SaveSettings(ctx, core.ScopeFree, map[string]any{"from_name": "Shop", "default_connection_id": int64(2), "fallback_connection_id": int64(3)}); err != nil {
		t.Fatal(err)
	}
	if err := db.Settings().SaveSettings(ctx, core.ScopePro, map[string]any{"max_retries": int64(6), "disabled_log_sources": []string{"sendmail"}}); err != nil {
		t.Fatal(err)
	}
}

func exportJSON(t *testing.T, svc *transfer.Service) []byte {
	t.Helper()
	snap, err := svc.Export(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(snap)
	return b
}

// comparable strips what a round trip may change: the time, the ids, and
// the secrets, which never travel.
func comparable(t *testing.T, b []byte) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "exported_at")
	for _, sec := range []string{"connections", "alert_channels"} {
		for _, it := range m[sec].([]any) {
			item := it.(map[string]any)
			delete(item, "id")
			delete(item, "secrets_omitted")
			for k, v := range item["settings"].(map[string]any) {
				if v == nil {
					delete(item["settings"].(map[string]any), k)
				}
			}
		}
	}
	s := m["settings"].(map[string]any)
	s["default_connection_id"], s["fallback_connection_id"] = "ref", "ref"
	out, _ := json.Marshal(m)
	return string(out)
}

func TestTransferRoundTripThroughTheStore(t *testing.T) {
	for _, dialect := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"sqlite", testdb.SQLite}, {"mariadb", testdb.MySQL}} {
		t.Run(dialect.name, func(t *testing.T) {
			ctx := context.Background()
			src := openStore(t, dialect.dsn(t))
			seedStore(t, src)
			file := exportJSON(t, transferService(src))
			for _, secret := range []string{"very-secret", "SECRET", "test-enc:"} {
				if strings.Contains(string(file), secret) {
					t.Fatalf("the export contains %q", secret)
				}
			}

			// A failing section: nothing of the import stays.
			dst := openStore(t, dialect.dsn(t))
			if _, err := transferService(dst, failingSection{}).Import(ctx, withGroup(t, file), nil); err == nil {
				t.Fatal("the import with a failing section succeeded")
			}
			if conns, n, _ := dst.Connections().FindConnections(ctx, core.ConnectionFilter{}); n != 0 {
				t.Fatalf("a failed import left %d connections: %v", n, conns)
			}
			if s, _ := dst.Settings().LoadSettings(ctx, core.ScopeFree); len(s) != 0 {
				t.Fatalf("a failed import left settings %v", s)
			}

			res, err := transferService(dst).Import(ctx, file, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Counts["connections"] != 2 || res.Counts["alert_channels"] != 1 || res.Counts["settings"] != 3 || res.Counts["pro_settings"] != 2 {
				t.Fatalf("counts %v", res.Counts)
			}
			again := exportJSON(t, transferService(dst))
			if comparable(t, file) != comparable(t, again) {
				t.Fatalf("the round trip differs:\n%s\n%s", comparable(t, file), comparable(t, again))
			}
			// Settings follow the connections to their new ids.
			s, _ := dst.Settings().LoadSettings(ctx, core.ScopeFree)
			def, _ := core.AsInt(s["default_connection_id"])
			c, err := dst.Connections().FindConnectionByID(ctx, def)
			if err != nil || c.Name != "SendGrid" {
				t.Fatalf("default_connection_id %v names %+v (%v)", s["default_connection_id"], c, err)
			}
			if c.Settings["api_key"] != nil || !strings.Contains(c.LastError, "api_key") {
				t.Fatalf("imported SendGrid: settings %v, last_error %q", c.Settings, c.LastError)
			}
		})
	}
}

// withGroup adds a sender group to a snapshot, for the failing section.
func withGroup(t *testing.T, b []byte) []byte {
	t.Helper()
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	m["sender_groups"] = []any{map[string]any{"id": 1, "name": "G"}}
	out, _ := json.Marshal(m)
	return out
}
