package pro

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// LicenseKeyPrefix starts every licence key: the format's name and
// version. A key is LicenseKeyPrefix + base64url(payload JSON) + "." +
// base64url(Ed25519 signature of everything before that last dot).
const LicenseKeyPrefix = "MSVC1."

// FeaturePrefix starts every licensed feature name.
const FeaturePrefix = "feature:"

// License is what a licence key carries, signed by a vendor.
type License struct {
	// ID names the licence at its vendor.
	ID string `json:"license_id"`
	// Site is the site URL the licence was issued for.
	Site string `json:"site"`
	// Features are the licensed features, each "feature:<name>".
	Features []string `json:"features"`
	// ExpiresAt is the first instant the licence is no longer valid.
	ExpiresAt time.Time `json:"expires_at"`
	IssuedAt  time.Time `json:"issued_at"`
}

// HasFeature reports whether the licence carries a feature, named with or
// without its "feature:" prefix.
func (l *License) HasFeature(name string) bool {
	return l != nil && slices.Contains(l.Features, FeatureName(name))
}

// FeatureName returns name with the "feature:" prefix.
func FeatureName(name string) string {
	name = strings.TrimSpace(name)
	if strings.HasPrefix(name, FeaturePrefix) {
		return name
	}
	return FeaturePrefix + name
}

// Errors of key parsing and verification. Each is a client-safe message.
var (
	// ErrMalformedKey: the text is not a licence key at all.
	ErrMalformedKey = errors.New("this is not a mailsvc licence key")
	// ErrBadSignature: no vendor key verifies the signature (the key was
	// altered, or issued by a vendor this service does not trust).
	ErrBadSignature = errors.New("the licence key's signature does not verify: it was altered or was not issued by a known vendor")
)

// IssueLicense signs l with a vendor's private key and returns the
// licence key.
func IssueLicense(priv ed25519.PrivateKey, l License) (string, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return "", fmt.Errorf("vendor private key has %d bytes, want %d", len(priv), ed25519.PrivateKeySize)
	}
	if l.ID == "" {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", fmt.Errorf("licence id: %w", err)
		}
		l.ID = "lic_" + hex.EncodeToString(b[:])
	}
	site, err := NormalizeSite(l.Site)
	if err != nil {
		return "", err
	}
	l.Site = site
	for i, f := range l.Features {
		l.Features[i] = FeatureName(f)
	}
	if l.Features == nil {
		l.Features = []string{}
	}
	if l.ExpiresAt.IsZero() {
		return "", errors.New("a licence needs an expiry")
	}
	if l.IssuedAt.IsZero() {
		l.IssuedAt = time.Now().UTC().Truncate(time.Second)
	}
	payload, err := json.Marshal(l)
	if err != nil {
		return "", fmt.Errorf("encode licence: %w", err)
	}
	signed := LicenseKeyPrefix + base64.RawURLEncoding.EncodeToString(payload)
	sig := ed25519.Sign(priv, []byte(signed))
	return signed + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// VerifyLicenseKey checks a key's signature against the vendor public
// keys and returns the licence it carries. It checks neither expiry nor
// site (see License.Check).
func VerifyLicenseKey(key string, vendors []ed25519.PublicKey) (*License, error) {
	key = strings.TrimSpace(key)
	if !strings.HasPrefix(key, LicenseKeyPrefix) || len(key) > 8192 {
		return nil, ErrMalformedKey
	}
	dot := strings.LastIndexByte(key, '.')
	if dot <= len(LicenseKeyPrefix) {
		return nil, ErrMalformedKey
	}
	signed, sigText := key[:dot], key[dot+1:]
	sig, err := base64.RawURLEncoding.DecodeString(sigText)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return nil, ErrMalformedKey
	}
	payload, err := base64.RawURLEncoding.DecodeString(signed[len(LicenseKeyPrefix):])
	if err != nil {
		return nil, ErrMalformedKey
	}
	ok := false
	for _, pub := range vendors {
		if len(pub) == ed25519.PublicKeySize && ed25519.Verify(pub, []byte(signed), sig) {
			ok = true
			break
		}
	}
	if !ok {
		return nil, ErrBadSignature
	}
	var l License
	dec := json.NewDecoder(bytes.NewReader(payload))
	if err := dec.Decode(&l); err != nil || l.ID == "" || l.Site == "" || l.ExpiresAt.IsZero() {
		return nil, ErrMalformedKey
	}
	return &l, nil
}

// Licence verdicts of License.Check.
const (
	LicenseActive    = "active"
	LicenseInactive  = "inactive"   // no key stored
	LicenseExpired   = "expired"    // past its expiry
	LicenseWrongSite = "wrong_site" // issued for another site
	LicenseRevoked   = "revoked"    // the licence server says so
	LicenseInvalid   = "invalid"    // the stored key no longer verifies or decrypts
)

// Check returns the verdict on a verified licence for a site at now, and
// a message saying why when it is not active.
func (l *License) Check(site string, now time.Time) (verdict, message string) {
	if !now.Before(l.ExpiresAt) {
		return LicenseExpired, fmt.Sprintf("This licence expired at %s.", l.ExpiresAt.UTC().Format("2006-01-02 15:04 UTC"))
	}
	if site == "" {
		return LicenseWrongSite, "This site's URL is not known, so the licence cannot be matched to it: set MAILSVC_PUBLIC_URL."
	}
	if !SameSite(l.Site, site) {
		return LicenseWrongSite, fmt.Sprintf("This licence was issued for %s, not for this site (%s).", l.Site, site)
	}
	return LicenseActive, ""
}

// NormalizeSite returns a site URL in the form licences carry: scheme and
// host in lower case, no default port, no trailing slash, no query. A
// URL without a scheme is taken as https.
func NormalizeSite(site string) (string, error) {
	site = strings.TrimSpace(site)
	if site == "" {
		return "", errors.New("a site URL is required")
	}
	if !strings.Contains(site, "://") {
		site = "https://" + site
	}
	u, err := url.Parse(site)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("%q is not an http(s) site URL", site)
	}
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	if port != "" {
		host += ":" + port
	}
	return strings.ToLower(u.Scheme) + "://" + host + strings.TrimRight(u.EscapedPath(), "/"), nil
}

// SameSite reports whether two site URLs name the same site: the same host
// (a leading "www." ignored), port and path; the scheme may differ, so a
// site that moves to https keeps its licence.
func SameSite(a, b string) bool {
	ka, errA := siteKey(a)
	kb, errB := siteKey(b)
	return errA == nil && errB == nil && ka == kb
}

func siteKey(site string) (string, error) {
	n, err := NormalizeSite(site)
	if err != nil {
		return "", err
	}
	_, rest, _ := strings.Cut(n, "://")
	return strings.TrimPrefix(rest, "www."), nil
}

// ParsePublicKey decodes a vendor public key: base64 (standard or URL
// alphabet, padded or not) of the 32 key bytes.
func ParsePublicKey(text string) (ed25519.PublicKey, error) {
	b, err := decodeBase64(text)
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, errors.New("not a base64 Ed25519 public key (32 bytes)")
	}
	return ed25519.PublicKey(b), nil
}

// ParsePrivateKey decodes a vendor private key: base64 of the 64-byte
// Ed25519 private key, as `mailsvc license keygen` prints it.
func ParsePrivateKey(text string) (ed25519.PrivateKey, error) {
	b, err := decodeBase64(text)
	if err != nil {
		return nil, errors.New("not base64")
	}
	if len(b) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("an Ed25519 private key has %d bytes, not %d (is this the public key?)", ed25519.PrivateKeySize, len(b))
	}
	priv := ed25519.PrivateKey(b)
	// The second half of the key is its public key: check the pair.
	if !bytes.Equal(ed25519.NewKeyFromSeed(priv.Seed()), priv) {
		return nil, errors.New("the private key is corrupt (its halves do not match)")
	}
	return priv, nil
}

func decodeBase64(text string) ([]byte, error) {
	text = strings.TrimSpace(text)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(text); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("not base64")
}

// VendorKeys returns the built-in vendor public key followed by the extra
// ones given (MAILSVC_LICENSE_PUBLIC_KEYS); a bad extra key is an error
// naming its position.
func VendorKeys(extra []string) ([]ed25519.PublicKey, error) {
	builtIn, err := ParsePublicKey(BuiltInPublicKey)
	if err != nil {
		return nil, fmt.Errorf("built-in vendor key: %w", err)
	}
	keys := []ed25519.PublicKey{builtIn}
	for i, text := range extra {
		k, err := ParsePublicKey(text)
		if err != nil {
			return nil, core.Errorf(core.EINVALID, "Vendor public key %d: %v.", i+1, err)
		}
		keys = append(keys, k)
	}
	return keys, nil
}
