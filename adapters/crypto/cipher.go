// Package crypto encrypts sensitive connection settings at rest with
// AES-256-GCM. It implements core.Cipher.
//
// A ciphertext is stored as the text
//
//	enc:v1:<base64 (standard, padded) of nonce ‖ sealed>
//
// where nonce is the 12-byte GCM nonce and sealed is the GCM output
// (ciphertext followed by the 16-byte tag). The prefix names the format
// version, so IsEncrypted can tell a ciphertext from a legacy plaintext
// stored before encryption was enabled, and a later format can be added
// without ambiguity.
//
// Keys are 32 bytes. KeyFromPassphrase derives one from the
// MAIL_SVC_ENCRYPTION_KEY constant and KeyFromSalts from the site's
// WordPress salts; both use HKDF-SHA256 with a fixed context label, so the
// same input always yields the same key and the two sources never yield
// the same key for the same text.
package crypto

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/mailsvc/mailsvc/core"
)

// Prefix starts every ciphertext of the current format.
const Prefix = "enc:v1:"

// KeySize is the length in bytes of an AES-256 key.
const KeySize = 32

// Context labels of the key derivations. Changing one changes every
// derived key and makes stored secrets unreadable: never change them.
const (
	passphraseLabel = "mailsvc encryption key v1: MAIL_SVC_ENCRYPTION_KEY"
	saltsLabel      = "mailsvc encryption key v1: wordpress salts"
)

// ErrKeyChanged is returned (wrapped) by Decrypt when a well-formed
// ciphertext does not authenticate: it was encrypted with another key (the
// encryption key or the site's salts changed) or it was altered.
var ErrKeyChanged = errors.New("cannot decrypt stored secret: the encryption key changed or the value was altered")

// ErrMalformed is returned (wrapped) by Decrypt when the input is not a
// ciphertext of this package's format at all.
var ErrMalformed = errors.New("stored secret is not a valid ciphertext")

// Cipher encrypts and decrypts values with one AES-256-GCM key. It is safe
// for concurrent use.
type Cipher struct {
	aead cipher.AEAD
}

var _ core.Cipher = (*Cipher)(nil)

// NewCipher returns a Cipher for a 32-byte key.
func NewCipher(key []byte) (*Cipher, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("new cipher: key must be %d bytes, got %d", KeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("new cipher: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("new cipher: %w", err)
	}
	return &Cipher{aead: aead}, nil
}

// Encrypt seals plaintext under a fresh random nonce and returns the
// prefixed printable form, safe to store in a JSON string.
func (c *Cipher) Encrypt(plaintext string) (string, error) {
	ns := c.aead.NonceSize()
	buf := make([]byte, ns, ns+len(plaintext)+c.aead.Overhead())
	if _, err := rand.Read(buf); err != nil {
		return "", fmt.Errorf("encrypt: read nonce: %w", err)
	}
	buf = c.aead.Seal(buf, buf[:ns], []byte(plaintext), nil)
	return Prefix + base64.StdEncoding.EncodeToString(buf), nil
}

// Decrypt opens a value produced by Encrypt. It returns an error wrapping
// ErrMalformed when stored is not of this format (no prefix, bad base64,
// too short) and one wrapping ErrKeyChanged when it does not authenticate.
// It never panics. The error text never contains the input.
func (c *Cipher) Decrypt(stored string) (string, error) {
	if !strings.HasPrefix(stored, Prefix) {
		return "", fmt.Errorf("decrypt: missing %q prefix: %w", Prefix, ErrMalformed)
	}
	raw, err := base64.StdEncoding.DecodeString(stored[len(Prefix):])
	if err != nil {
		return "", fmt.Errorf("decrypt: invalid base64: %w", ErrMalformed)
	}
	ns := c.aead.NonceSize()
	if len(raw) < ns+c.aead.Overhead() {
		return "", fmt.Errorf("decrypt: ciphertext truncated (%d bytes): %w", len(raw), ErrMalformed)
	}
	plain, err := c.aead.Open(nil, raw[:ns], raw[ns:], nil)
	if err != nil {
		return "", fmt.Errorf("decrypt: %w", ErrKeyChanged)
	}
	return string(plain), nil
}

// IsEncrypted reports whether stored carries this package's ciphertext
// prefix. It does not check that the rest decrypts.
func (c *Cipher) IsEncrypted(stored string) bool {
	return IsEncrypted(stored)
}

// IsEncrypted reports whether stored carries the ciphertext prefix; it
// needs no key.
func IsEncrypted(stored string) bool {
	return strings.HasPrefix(stored, Prefix)
}

// GenerateKey returns a new random 32-byte key.
func GenerateKey() ([]byte, error) {
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("generate key: %w", err)
	}
	return key, nil
}

// KeyFromPassphrase derives the key from the MAIL_SVC_ENCRYPTION_KEY
// constant: HKDF-SHA256 with the passphrase as input keying material, no
// salt, and a fixed context label. Any non-empty text works; a long random
// one is best.
func KeyFromPassphrase(s string) []byte {
	return derive([]byte(s), passphraseLabel)
}

// KeyFromSalts derives the key from the site's WordPress salts (for
// example LOGGED_IN_KEY and LOGGED_IN_SALT, in a fixed order): each salt is
// length-prefixed so that different splits of the same text give
// different keys, then HKDF-SHA256 with a fixed context label. Changing any
// of the salts changes the key.
func KeyFromSalts(salts ...string) []byte {
	var ikm []byte
	for _, s := range salts {
		ikm = binary.BigEndian.AppendUint32(ikm, uint32(len(s)))
		ikm = append(ikm, s...)
	}
	return derive(ikm, saltsLabel)
}

func derive(ikm []byte, label string) []byte {
	key, err := hkdf.Key(sha256.New, ikm, nil, label, KeySize)
	if err != nil {
		// hkdf.Key fails only when the requested length exceeds
		// 255 hash lengths, which KeySize never does.
		panic(fmt.Sprintf("derive key: %v", err))
	}
	return key
}
