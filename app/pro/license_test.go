package pro

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

func vendorPair(t testing.TB) (ed25519.PublicKey, ed25519.PrivateKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	return pub, priv
}

func TestLicenseKeyRoundTripAndTampering(t *testing.T) {
	pub, priv := vendorPair(t)
	otherPub, otherPriv := vendorPair(t)
	exp := time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC)
	key, err := IssueLicense(priv, License{Site: "HTTPS://Shop.Example.com:443/", Features: []string{"tools.domain_check", "feature:connections.oneclick.save"}, ExpiresAt: exp})
	if err != nil {
		t.Fatal(err)
	}
	l, err := VerifyLicenseKey(key, []ed25519.PublicKey{otherPub, pub})
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if l.Site != "https://shop.example.com" || !strings.HasPrefix(l.ID, "lic_") || !l.ExpiresAt.Equal(exp) {
		t.Errorf("licence = %+v", l)
	}
	if !l.HasFeature("tools.domain_check") || !l.HasFeature("feature:connections.oneclick.save") || l.HasFeature("connections.ses.identity_management") {
		t.Errorf("features = %v", l.Features)
	}

	otherKey, _ := IssueLicense(otherPriv, License{Site: "shop.example.com", ExpiresAt: exp})
	payload := key[len(LicenseKeyPrefix):strings.LastIndexByte(key, '.')]
	raw, _ := base64.RawURLEncoding.DecodeString(payload)
	forged := LicenseKeyPrefix + base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(raw), "2030", "2099", 1))) + key[strings.LastIndexByte(key, '.'):]
	tests := []struct {
		name string
		key  string
		keys []ed25519.PublicKey
		want error
	}{
		{"payload altered", forged, []ed25519.PublicKey{pub}, ErrBadSignature},
		{"one signature byte flipped", key[:len(key)-3] + flip(key[len(key)-3:]), []ed25519.PublicKey{pub}, ErrBadSignature},
		{"unknown vendor", otherKey, []ed25519.PublicKey{pub}, ErrBadSignature},
		{"not a key", "hello", []ed25519.PublicKey{pub}, ErrMalformedKey},
		{"prefix only", LicenseKeyPrefix, []ed25519.PublicKey{pub}, ErrMalformedKey},
		{"signature not base64", LicenseKeyPrefix + "abc.!!!", []ed25519.PublicKey{pub}, ErrMalformedKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := VerifyLicenseKey(tt.key, tt.keys); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func flip(s string) string {
	b := []byte(s)
	if b[0] == 'A' {
		b[0] = 'B'
	} else {
		b[0] = 'A'
	}
	return string(b)
}

func TestLicenseCheck(t *testing.T) {
	l := &License{Site: "https://shop.example.com", ExpiresAt: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	before := time.Date(2029, 12, 31, 23, 59, 0, 0, time.UTC)
	tests := []struct {
		name, site string
		now        time.Time
		want       string
		msg        string
	}{
		{"same site", "https://shop.example.com", before, LicenseActive, ""},
		{"www and scheme and slash ignored", "http://www.Shop.example.com/", before, LicenseActive, ""},
		{"expired", "https://shop.example.com", l.ExpiresAt, LicenseExpired, "expired at 2030-01-01 00:00 UTC"},
		{"other site", "https://other.example.com", before, LicenseWrongSite, "issued for https://shop.example.com, not for this site (https://other.example.com)"},
		{"other path", "https://shop.example.com/blog", before, LicenseWrongSite, "not for this site"},
		{"other port", "https://shop.example.com:8443", before, LicenseWrongSite, "not for this site"},
		{"site unknown", "", before, LicenseWrongSite, "MAILSVC_PUBLIC_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, msg := l.Check(tt.site, tt.now)
			if got != tt.want || !strings.Contains(msg, tt.msg) {
				t.Fatalf("Check = %s %q, want %s containing %q", got, msg, tt.want, tt.msg)
			}
		})
	}
}

func TestVendorKeys(t *testing.T) {
	pub, _ := vendorPair(t)
	keys, err := VendorKeys([]string{base64.StdEncoding.EncodeToString(pub), base64.RawURLEncoding.EncodeToString(pub)})
	if err != nil || len(keys) != 3 {
		t.Fatalf("VendorKeys = %d keys, %v; want the built-in one and two extra", len(keys), err)
	}
	if _, err := VendorKeys([]string{"bm90IGEga2V5"}); err == nil || !strings.Contains(err.Error(), "key 1") {
		t.Fatalf("bad extra key: err = %v", err)
	}
}

func TestParsePrivateKey(t *testing.T) {
	pub, priv := vendorPair(t)
	got, err := ParsePrivateKey(base64.StdEncoding.EncodeToString(priv) + "\n")
	if err != nil || !got.Equal(priv) {
		t.Fatalf("ParsePrivateKey = %v", err)
	}
	corrupt := append(ed25519.PrivateKey(nil), priv...)
	corrupt[40] ^= 1
	for name, text := range map[string]string{
		"the public key": base64.StdEncoding.EncodeToString(pub),
		"the seed only":  base64.StdEncoding.EncodeToString(priv.Seed()),
		"corrupt":        base64.StdEncoding.EncodeToString(corrupt),
		"not base64":     "!!",
	} {
		if _, err := ParsePrivateKey(text); err == nil {
			t.Errorf("%s was accepted as a private key", name)
		}
	}
}
