package pro

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mailsvc/mailsvc/core"
)

// ScopeLicense is the settings scope holding the activated licence: its
// key (encrypted), and what the licence server last said.
const ScopeLicense = "pro_license"

// Keys of ScopeLicense.
const (
	keyLicenseKey      = "license_key"
	keyActivatedAt     = "activated_at"
	keyLastConfirmedAt = "last_confirmed_at"
	keyLastCheckedAt   = "last_checked_at"
	keyServerVerdict   = "server_verdict"
	keyServerMessage   = "server_message"
)

// Licence server actions (see LicenseServer and docs/pro.md).
const (
	ServerActivate   = "activate"
	ServerDeactivate = "deactivate"
	ServerCheck      = "check"
)

// ServerRequest is what the licence server is told or asked about.
type ServerRequest struct {
	LicenseID string `json:"license_id"`
	Site      string `json:"site"`
	Version   string `json:"version,omitempty"`
}

// ServerVerdict is the licence server's answer: Status "active" confirms
// the licence; any other status ("revoked", "unknown", ...) refuses it,
// with Message saying why.
type ServerVerdict struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

// LicenseServer is the vendor's optional licence server. Call returns the
// server's verdict, or an error when the server cannot be reached or does
// not answer in the protocol's form; the caller then keeps the offline
// verdict. Calls are idempotent and safe to repeat.
type LicenseServer interface {
	Call(ctx context.Context, action string, req ServerRequest) (ServerVerdict, error)
}

// LicenseStatus is the answer of the licence routes. The key is masked.
type LicenseStatus struct {
	Active bool `json:"active"`
	// Status is one of the License* verdicts; Message says why a stored
	// licence is not active, or what the licence server last said.
	Status          string     `json:"status"`
	Message         string     `json:"message"`
	LicenseID       string     `json:"license_id"`
	Site            string     `json:"site"`
	Features        []string   `json:"features"`
	ExpiresAt       *time.Time `json:"expires_at"`
	ActivatedAt     *time.Time `json:"activated_at"`
	LastConfirmedAt *time.Time `json:"last_confirmed_at"`
	LastCheckedAt   *time.Time `json:"last_checked_at"`
	// LicenseServer says whether a licence server is configured.
	LicenseServer bool   `json:"license_server"`
	LicenseKey    string `json:"license_key"`
}

// Licenses activates, checks and reports the site's licence. The key is
// stored encrypted in ScopeLicense and verified offline on every read, so
// expiry takes effect without any job, and every replica agrees.
type Licenses struct {
	Store  core.SettingsStore
	Cipher core.Cipher // nil stores the key in plain text (tests)
	// Vendors are the trusted vendor public keys (VendorKeys).
	Vendors []ed25519.PublicKey
	// Site is this site's URL: MAILSVC_PUBLIC_URL, else WordPress's home
	// option. "" refuses every licence (it cannot be matched).
	Site string
	// Server is the licence server; nil when none is configured.
	Server  LicenseServer
	Version string
	Logger  *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (s *Licenses) now() time.Time { return core.NowFrom(s.Now).UTC() }

func (s *Licenses) logger() *slog.Logger { return core.LoggerOr(s.Logger) }

// stored is the licence state as kept in ScopeLicense.
type stored struct {
	key                                     string
	undecryptable                           bool
	activatedAt, lastConfirmed, lastChecked *time.Time
	serverVerdict, serverMessage            string
}

func (s *Licenses) load(ctx context.Context) (stored, error) {
	m, err := s.Store.LoadSettings(ctx, ScopeLicense)
	if err != nil {
		return stored{}, fmt.Errorf("load licence: %w", err)
	}
	st := core.Settings(m)
	out := stored{
		key:           st.String(keyLicenseKey),
		activatedAt:   timeOf(m[keyActivatedAt]),
		lastConfirmed: timeOf(m[keyLastConfirmedAt]),
		lastChecked:   timeOf(m[keyLastCheckedAt]),
		serverVerdict: st.String(keyServerVerdict),
		serverMessage: st.String(keyServerMessage),
	}
	if out.key != "" && s.Cipher != nil && s.Cipher.IsEncrypted(out.key) {
		plain, err := s.Cipher.Decrypt(out.key)
		if err != nil {
			out.key, out.undecryptable = "", true
		} else {
			out.key = plain
		}
	}
	return out, nil
}

func timeOf(v any) *time.Time {
	str, _ := v.(string)
	t, err := time.Parse(time.RFC3339, str)
	if err != nil {
		return nil
	}
	t = t.UTC()
	return &t
}

func timeValue(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

// Active returns the active licence, or nil when there is none (no key,
// or a key that is expired, for another site, revoked or unreadable).
func (s *Licenses) Active(ctx context.Context) (*License, error) {
	st, err := s.load(ctx)
	if err != nil {
		return nil, err
	}
	l, verdict, _ := s.judge(st)
	if verdict != LicenseActive {
		return nil, nil
	}
	return l, nil
}

// judge verifies the stored key offline and combines it with the licence
// server's last verdict.
func (s *Licenses) judge(st stored) (*License, string, string) {
	if st.undecryptable {
		return nil, LicenseInvalid, "The stored licence key cannot be decrypted (the encryption key changed): activate the licence again."
	}
	if st.key == "" {
		return nil, LicenseInactive, "No licence is activated."
	}
	l, err := VerifyLicenseKey(st.key, s.Vendors)
	if err != nil {
		return nil, LicenseInvalid, "The stored licence key is not valid: " + err.Error() + "."
	}
	if verdict, msg := l.Check(s.Site, s.now()); verdict != LicenseActive {
		return l, verdict, msg
	}
	if st.serverVerdict != "" && st.serverVerdict != LicenseActive {
		msg := "The licence server refused this licence."
		if st.serverMessage != "" {
			msg += " It said: " + st.serverMessage
		}
		return l, LicenseRevoked, msg
	}
	return l, LicenseActive, st.serverMessage
}

// Status reports the licence as the status route shows it.
func (s *Licenses) Status(ctx context.Context) (*LicenseStatus, error) {
	st, err := s.load(ctx)
	if err != nil {
		return nil, err
	}
	return s.status(st), nil
}

func (s *Licenses) status(st stored) *LicenseStatus {
	l, verdict, msg := s.judge(st)
	out := &LicenseStatus{
		Active:          verdict == LicenseActive,
		Status:          verdict,
		Message:         msg,
		Features:        []string{},
		ActivatedAt:     st.activatedAt,
		LastConfirmedAt: st.lastConfirmed,
		LastCheckedAt:   st.lastChecked,
		LicenseServer:   s.Server != nil,
		LicenseKey:      core.MaskValue(st.key).(string),
	}
	if st.undecryptable {
		out.LicenseKey = core.Mask
	}
	if l != nil {
		exp := l.ExpiresAt.UTC()
		out.LicenseID, out.Site, out.ExpiresAt = l.ID, l.Site, &exp
		if l.Features != nil {
			out.Features = l.Features
		}
	}
	return out
}

// Activate verifies key offline (signature, expiry, this site), tells the
// licence server when one is configured, and stores it, replacing any
// licence activated before. A key that does not verify, is expired, is
// for another site, or that a reachable licence server refuses, gives an
// EINVALID error on license_key; an unreachable server leaves the offline
// verdict standing (last_confirmed_at stays empty).
func (s *Licenses) Activate(ctx context.Context, key string) (*LicenseStatus, error) {
	if key == "" {
		return nil, core.InvalidField("license_key", "A licence key is required.")
	}
	l, err := VerifyLicenseKey(key, s.Vendors)
	if errors.Is(err, ErrMalformedKey) || errors.Is(err, ErrBadSignature) {
		return nil, core.InvalidField("license_key", capitalize(err.Error())+".")
	} else if err != nil {
		return nil, fmt.Errorf("verify licence key: %w", err)
	}
	if verdict, msg := l.Check(s.Site, s.now()); verdict != LicenseActive {
		return nil, core.InvalidField("license_key", msg)
	}
	prev, err := s.load(ctx)
	if err != nil {
		return nil, err
	}
	now := s.now().Truncate(time.Second)
	values := map[string]any{
		keyActivatedAt:     timeValue(&now),
		keyLastConfirmedAt: nil,
		keyLastCheckedAt:   nil,
		keyServerVerdict:   "",
		keyServerMessage:   "",
	}
	if s.Server != nil {
		values[keyLastCheckedAt] = timeValue(&now)
		v, err := s.Server.Call(ctx, ServerActivate, ServerRequest{LicenseID: l.ID, Site: s.Site, Version: s.Version})
		switch {
		case err != nil:
			s.logger().Warn("licence server unreachable on activation; the offline verdict stands", "license_id", l.ID, "err", err)
			values[keyServerMessage] = "The licence server could not be reached; the licence was verified offline."
		case v.Status != LicenseActive:
			msg := "The licence server refused this licence."
			if v.Message != "" {
				msg += " It said: " + v.Message
			}
			return nil, core.InvalidField("license_key", msg)
		default:
			values[keyLastConfirmedAt] = timeValue(&now)
			values[keyServerMessage] = v.Message
		}
	}
	enc := key
	if s.Cipher != nil {
		if enc, err = s.Cipher.Encrypt(key); err != nil {
			return nil, fmt.Errorf("encrypt licence key: %w", err)
		}
	}
	values[keyLicenseKey] = enc
	if err := s.Store.SaveSettings(ctx, ScopeLicense, values); err != nil {
		return nil, fmt.Errorf("save licence: %w", err)
	}
	// A different licence activated before is released at the server.
	if old, err := VerifyLicenseKey(prev.key, s.Vendors); err == nil && old.ID != l.ID {
		s.tellDeactivate(ctx, old.ID)
	}
	return s.Status(ctx)
}

// Deactivate removes the stored licence and tells the licence server
// (best effort: an unreachable server does not keep the licence here).
// With no licence stored it only reports the inactive status.
func (s *Licenses) Deactivate(ctx context.Context) (*LicenseStatus, error) {
	st, err := s.load(ctx)
	if err != nil {
		return nil, err
	}
	if st.key == "" && !st.undecryptable {
		return s.status(st), nil
	}
	if err := s.Store.SaveSettings(ctx, ScopeLicense, map[string]any{
		keyLicenseKey: "", keyActivatedAt: nil, keyLastConfirmedAt: nil, keyLastCheckedAt: nil,
		keyServerVerdict: "", keyServerMessage: "",
	}); err != nil {
		return nil, fmt.Errorf("remove licence: %w", err)
	}
	if l, err := VerifyLicenseKey(st.key, s.Vendors); err == nil {
		s.tellDeactivate(ctx, l.ID)
	}
	return s.Status(ctx)
}

func (s *Licenses) tellDeactivate(ctx context.Context, id string) {
	if s.Server == nil {
		return
	}
	if _, err := s.Server.Call(ctx, ServerDeactivate, ServerRequest{LicenseID: id, Site: s.Site, Version: s.Version}); err != nil {
		s.logger().Warn("licence server unreachable on deactivation", "license_id", id, "err", err)
	}
}

// Refresh verifies the stored licence again and, when a licence server is
// configured, asks it: "active" confirms the licence (last_confirmed_at
// becomes now), another status revokes it here until a later refresh or
// activation is confirmed, and an unreachable server leaves the last
// verdict standing (last_checked_at moves, last_confirmed_at does not).
func (s *Licenses) Refresh(ctx context.Context) (*LicenseStatus, error) {
	st, err := s.load(ctx)
	if err != nil {
		return nil, err
	}
	if s.Server == nil || st.key == "" {
		return s.status(st), nil
	}
	l, err := VerifyLicenseKey(st.key, s.Vendors)
	if err != nil {
		return s.status(st), nil
	}
	now := s.now().Truncate(time.Second)
	values := map[string]any{keyLastCheckedAt: timeValue(&now)}
	v, err := s.Server.Call(ctx, ServerCheck, ServerRequest{LicenseID: l.ID, Site: s.Site, Version: s.Version})
	if err != nil {
		s.logger().Warn("licence server unreachable on refresh; the last verdict stands", "license_id", l.ID, "err", err)
		values[keyServerMessage] = "The licence server could not be reached at the last check; the last verdict stands."
	} else {
		values[keyServerVerdict] = v.Status
		values[keyServerMessage] = v.Message
		if v.Status == LicenseActive {
			values[keyLastConfirmedAt] = timeValue(&now)
		}
	}
	if err := s.Store.SaveSettings(ctx, ScopeLicense, values); err != nil {
		return nil, fmt.Errorf("save licence check: %w", err)
	}
	return s.Status(ctx)
}

// capitalize upper-cases the first letter of an error text.
func capitalize(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[size:]
}
