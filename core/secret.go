package core

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
