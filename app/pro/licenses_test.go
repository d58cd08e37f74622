package pro

import (
	"context"
	"crypto/ed25519"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/app/apptest"
	"github.com/mailsvc/mailsvc/core"
)

// fakeServer is an in-memory LicenseServer.
type fakeServer struct {
	mu      sync.Mutex
	down    bool
	verdict ServerVerdict
	calls   []string // action:license_id
}

func (f *fakeServer) Call(_ context.Context, action string, req ServerRequest) (ServerVerdict, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, action+":"+req.LicenseID)
	if f.down {
		return ServerVerdict{}, errors.New("connection refused")
	}
	return f.verdict, nil
}

type licenseEnv struct {
	svc   *Licenses
	store *apptest.SettingsStore
	priv  ed25519.PrivateKey
	now   time.Time
}

func newLicenseEnv(t *testing.T, server LicenseServer) *licenseEnv {
	t.Helper()
	pub, priv := vendorPair(t)
	e := &licenseEnv{store: apptest.NewSettingsStore(), priv: priv, now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	e.svc = &Licenses{Store: e.store, Cipher: apptest.Cipher{Key: "k1"}, Vendors: []ed25519.PublicKey{pub},
		Site: "https://shop.example.com", Server: server, Now: func() time.Time { return e.now }}
	return e
}

func (e *licenseEnv) key(t *testing.T, id, site string, expires time.Time, features ...string) string {
	t.Helper()
	k, err := IssueLicense(e.priv, License{ID: id, Site: site, ExpiresAt: expires, Features: features})
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestActivateRefusals(t *testing.T) {
	e := newLicenseEnv(t, nil)
	_, strangerPriv := vendorPair(t)
	stranger, _ := IssueLicense(strangerPriv, License{Site: "https://shop.example.com", ExpiresAt: e.now.AddDate(1, 0, 0)})
	tests := []struct {
		name, key, want string
	}{
		{"empty", "", "required"},
		{"garbage", "not-a-key", "not a mailsvc licence key"},
		{"expired", e.key(t, "lic_1", "https://shop.example.com", e.now.Add(-time.Hour)), "expired at 2026-05-01 11:00 UTC"},
		{"other site", e.key(t, "lic_2", "https://other.example.com", e.now.AddDate(1, 0, 0)), "issued for https://other.example.com"},
		{"unknown vendor", stranger, "not issued by a known vendor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.svc.Activate(context.Background(), tt.key)
			if core.ErrorCode(err) != core.EINVALID || !strings.Contains(core.ErrorFields(err)["license_key"], tt.want) {
				t.Fatalf("err = %v, want 422 on license_key containing %q", err, tt.want)
			}
		})
	}
	if st, _ := e.svc.Status(context.Background()); st.Active || st.Status != LicenseInactive || st.LicenseKey != "" {
		t.Fatalf("after refusals: %+v, want inactive with no key", st)
	}
}

func TestActivateStatusDeactivate(t *testing.T) {
	ctx := context.Background()
	e := newLicenseEnv(t, nil)
	key := e.key(t, "lic_ok", "https://www.shop.example.com/", e.now.AddDate(0, 1, 0), "tools.domain_check")
	st, err := e.svc.Activate(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Active || st.LicenseID != "lic_ok" || st.LicenseKey != core.Mask || st.LastConfirmedAt != nil || st.LicenseServer ||
		len(st.Features) != 1 || st.Features[0] != "feature:tools.domain_check" || st.ExpiresAt == nil {
		t.Fatalf("status = %+v", st)
	}
	raw, _ := e.store.LoadSettings(ctx, ScopeLicense)
	if s, _ := raw[keyLicenseKey].(string); s == key || !strings.HasPrefix(s, "test-enc:") {
		t.Fatalf("stored key %q is not encrypted", s)
	}
	if l, _ := e.svc.Active(ctx); l == nil || !l.HasFeature("tools.domain_check") {
		t.Fatalf("Active = %+v", l)
	}

	// Time passes: the stored licence expires without any job.
	e.now = e.now.AddDate(0, 2, 0)
	if st, _ := e.svc.Status(ctx); st.Active || st.Status != LicenseExpired || st.LicenseKey != core.Mask {
		t.Fatalf("after expiry: %+v", st)
	}
	if l, _ := e.svc.Active(ctx); l != nil {
		t.Fatal("an expired licence is still active")
	}

	st, err = e.svc.Deactivate(ctx)
	if err != nil || st.Active || st.Status != LicenseInactive || st.LicenseKey != "" || st.LicenseID != "" {
		t.Fatalf("after deactivate: %+v, %v", st, err)
	}

	// A changed encryption key makes the stored licence unreadable, not a crash.
	e.now = e.now.AddDate(0, -2, 0)
	if _, err := e.svc.Activate(ctx, key); err != nil {
		t.Fatal(err)
	}
	e.svc.Cipher = apptest.Cipher{Key: "k2"}
	if st, _ := e.svc.Status(ctx); st.Active || st.Status != LicenseInvalid || st.LicenseKey != core.Mask {
		t.Fatalf("undecryptable: %+v", st)
	}
}

func TestLicenseServer(t *testing.T) {
	ctx := context.Background()
	srv := &fakeServer{verdict: ServerVerdict{Status: "active", Message: "Thanks"}}
	e := newLicenseEnv(t, srv)
	key := e.key(t, "lic_srv", "https://shop.example.com", e.now.AddDate(1, 0, 0))

	st, err := e.svc.Activate(ctx, key)
	if err != nil || !st.Active || st.LastConfirmedAt == nil || !st.LastConfirmedAt.Equal(e.now) || !st.LicenseServer {
		t.Fatalf("activate with a reachable server: %+v, %v", st, err)
	}
	confirmed := *st.LastConfirmedAt

	// Unreachable on refresh: the licence stays active, last confirmed stays.
	srv.down = true
	e.now = e.now.Add(time.Hour)
	st, err = e.svc.Refresh(ctx)
	if err != nil || !st.Active || !st.LastConfirmedAt.Equal(confirmed) || !st.LastCheckedAt.Equal(e.now) || !strings.Contains(st.Message, "could not be reached") {
		t.Fatalf("refresh, server down: %+v, %v", st, err)
	}

	// The server revokes it.
	srv.down, srv.verdict = false, ServerVerdict{Status: "revoked", Message: "Refunded."}
	st, _ = e.svc.Refresh(ctx)
	if st.Active || st.Status != LicenseRevoked || !strings.Contains(st.Message, "Refunded.") {
		t.Fatalf("refresh, revoked: %+v", st)
	}
	if l, _ := e.svc.Active(ctx); l != nil {
		t.Fatal("a revoked licence is still active")
	}
	// And reinstates it.
	srv.verdict = ServerVerdict{Status: "active"}
	e.now = e.now.Add(time.Hour)
	if st, _ = e.svc.Refresh(ctx); !st.Active || !st.LastConfirmedAt.Equal(e.now) {
		t.Fatalf("refresh, reinstated: %+v", st)
	}

	// A server that refuses on activation: 422, nothing stored changes.
	srv.verdict = ServerVerdict{Status: "unknown", Message: "No such licence."}
	other := e.key(t, "lic_other", "https://shop.example.com", e.now.AddDate(1, 0, 0))
	if _, err := e.svc.Activate(ctx, other); core.ErrorCode(err) != core.EINVALID || !strings.Contains(core.ErrorFields(err)["license_key"], "No such licence.") {
		t.Fatalf("refused activation: %v", err)
	}
	if st, _ := e.svc.Status(ctx); st.LicenseID != "lic_srv" || !st.Active {
		t.Fatalf("after a refused activation: %+v", st)
	}

	// Unreachable on activation: the offline verdict stands, never confirmed.
	srv.down = true
	st, err = e.svc.Activate(ctx, other)
	if err != nil || !st.Active || st.LicenseID != "lic_other" || st.LastConfirmedAt != nil {
		t.Fatalf("activate, server down: %+v, %v", st, err)
	}
	srv.down = false
	if _, err := e.svc.Deactivate(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{"activate:lic_srv", "check:lic_srv", "check:lic_srv", "check:lic_srv", "activate:lic_other", "activate:lic_other", "deactivate:lic_srv", "deactivate:lic_other"}
	if strings.Join(srv.calls, " ") != strings.Join(want, " ") {
		t.Fatalf("server calls %v, want %v", srv.calls, want)
	}
}
