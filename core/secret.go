package core

import (
	"fmt"
	"sort"
)

// Mask is what every response, log line and export shows in place of a
// sensitive value. A masked value sent back in an update keeps the stored
// secret.
const Mask = "********"

// MaskValue returns Mask for a non-empty value and "" for an empty one, so
// a client can tell "set" from "not set" without seeing the secret.
func MaskValue(v any) any {
	if v == nil || v == "" {
		return v
	}
	return Mask
}

// Cipher encrypts and decrypts sensitive values at rest. Encrypt output is
// printable text safe to store in a JSON string. Decrypt returns an error
// (never a panic) when the value was encrypted with another key or is
// corrupt.
type Cipher interface {
	Encrypt(plaintext string) (string, error)
	Decrypt(ciphertext string) (string, error)
	// IsEncrypted reports whether a stored value is a ciphertext of this
	// Cipher's format (a plaintext stored before encryption was on is not).
	IsEncrypted(stored string) bool
}

// EncryptSecrets returns a copy of s in which every non-empty string value
// whose key is sensitive is encrypted with c. A nil c leaves the values as
// they are.
func EncryptSecrets(c Cipher, s Settings, sensitive func(key string) bool) (Settings, error) {
	out := s.Clone()
	if c == nil {
		return out, nil
	}
	for k, v := range s {
		str, ok := v.(string)
		if !ok || str == "" || !sensitive(k) {
			continue
		}
		enc, err := c.Encrypt(str)
		if err != nil {
			return nil, fmt.Errorf("encrypt setting %s: %w", k, err)
		}
		out[k] = enc
	}
	return out, nil
}

// DecryptSecrets returns a copy of s (never nil) with every encrypted
// sensitive value decrypted. A value that cannot be decrypted (the key
// changed) becomes "", and its key is listed, sorted, in bad.
func DecryptSecrets(c Cipher, s Settings, sensitive func(key string) bool) (out Settings, bad []string) {
	out = s.Clone()
	if c == nil {
		return out, nil
	}
	for k, v := range s {
		str, ok := v.(string)
		if !ok || !sensitive(k) || !c.IsEncrypted(str) {
			continue
		}
		plain, err := c.Decrypt(str)
		if err != nil {
			out[k] = ""
			bad = append(bad, k)
			continue
		}
		out[k] = plain
	}
	sort.Strings(bad)
	return out, bad
}

// MaskSecrets returns a copy of s with every sensitive value replaced by
// MaskValue.
func MaskSecrets(s Settings, sensitive func(key string) bool) Settings {
	out := s.Clone()
	for k, v := range out {
		if sensitive(k) {
			out[k] = MaskValue(v)
		}
	}
	return out
}
