package crypto

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

func mustCipher(t testing.TB, key []byte) *Cipher {
	t.Helper()
	c, err := NewCipher(key)
	if err != nil {
		t.Fatalf("NewCipher: %v", err)
	}
	return c
}

func TestNewCipherKeyLength(t *testing.T) {
	tests := []struct {
		name    string
		keyLen  int
		wantErr bool
	}{
		{"empty", 0, true},
		{"aes-128 length", 16, true},
		{"aes-192 length", 24, true},
		{"aes-256 length", 32, false},
		{"too long", 33, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewCipher(make([]byte, tt.keyLen))
			if (err != nil) != tt.wantErr {
				t.Fatalf("NewCipher(%d bytes) error = %v, wantErr %v", tt.keyLen, err, tt.wantErr)
			}
			if !tt.wantErr && c == nil {
				t.Fatal("NewCipher returned nil cipher without error")
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	key, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	c := mustCipher(t, key)
	tests := []struct {
		name      string
		plaintext string
	}{
		{"empty", ""},
		{"ascii password", "hunter2"},
		{"api key", "SG.abcdefghijklmnop.qrstuvwxyz0123456789"},
		{"unicode", "pässwörd 🔑 ключ"},
		{"looks like ciphertext", Prefix + "AAAA"},
		{"binary bytes", "\x00\x01\xff\xfe"},
		{"long", strings.Repeat("x", 64*1024)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc, err := c.Encrypt(tt.plaintext)
			if err != nil {
				t.Fatalf("Encrypt: %v", err)
			}
			if !strings.HasPrefix(enc, Prefix) {
				t.Fatalf("ciphertext %q lacks prefix %q", enc[:min(len(enc), 20)], Prefix)
			}
			if !c.IsEncrypted(enc) {
				t.Fatal("IsEncrypted(ciphertext) = false")
			}
			if tt.plaintext != "" && len(tt.plaintext) > 3 && strings.Contains(enc, tt.plaintext) {
				t.Fatal("ciphertext contains the plaintext")
			}
			got, err := c.Decrypt(enc)
			if err != nil {
				t.Fatalf("Decrypt: %v", err)
			}
			if got != tt.plaintext {
				t.Fatalf("Decrypt = %q, want %q", got, tt.plaintext)
			}
			// A second encryption uses a fresh nonce.
			enc2, err := c.Encrypt(tt.plaintext)
			if err != nil {
				t.Fatalf("Encrypt again: %v", err)
			}
			if enc2 == enc {
				t.Fatal("two encryptions of the same plaintext are identical (nonce reuse)")
			}
		})
	}
}

func TestDecryptWrongKey(t *testing.T) {
	a := mustCipher(t, KeyFromPassphrase("first key"))
	b := mustCipher(t, KeyFromPassphrase("second key"))
	enc, err := a.Encrypt("top secret password")
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.Decrypt(enc)
	if err == nil {
		t.Fatalf("Decrypt with the wrong key succeeded: %q", got)
	}
	if !errors.Is(err, ErrKeyChanged) {
		t.Fatalf("error %v does not wrap ErrKeyChanged", err)
	}
	if !strings.Contains(err.Error(), "encryption key changed") {
		t.Fatalf("error %q does not say the encryption key changed", err)
	}
	if strings.Contains(err.Error(), "top secret") || strings.Contains(err.Error(), enc[len(Prefix):]) {
		t.Fatalf("error %q leaks the value", err)
	}
}

func TestDecryptInvalidInput(t *testing.T) {
	c := mustCipher(t, KeyFromPassphrase("k"))
	enc, err := c.Encrypt("a secret value")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(enc[len(Prefix):])
	if err != nil {
		t.Fatal(err)
	}
	flip := func(i int) string {
		b := bytes.Clone(raw)
		b[i] ^= 0x01
		return Prefix + base64.StdEncoding.EncodeToString(b)
	}
	tests := []struct {
		name    string
		input   string
		wantErr error
	}{
		{"plaintext without prefix", "hunter2", ErrMalformed},
		{"empty", "", ErrMalformed},
		{"other version prefix", "enc:v2:" + enc[len(Prefix):], ErrMalformed},
		{"prefix only", Prefix, ErrMalformed},
		{"bad base64", Prefix + "!!!not base64!!!", ErrMalformed},
		{"truncated to nonce", Prefix + base64.StdEncoding.EncodeToString(raw[:12]), ErrMalformed},
		{"truncated below tag", Prefix + base64.StdEncoding.EncodeToString(raw[:12+15]), ErrMalformed},
		{"truncated by one byte", Prefix + base64.StdEncoding.EncodeToString(raw[:len(raw)-1]), ErrKeyChanged},
		{"truncated base64 text", enc[:len(enc)-4], ErrKeyChanged},
		{"tampered nonce", flip(0), ErrKeyChanged},
		{"tampered body", flip(14), ErrKeyChanged},
		{"tampered tag", flip(len(raw) - 1), ErrKeyChanged},
		{"extra byte", Prefix + base64.StdEncoding.EncodeToString(append(bytes.Clone(raw), 0)), ErrKeyChanged},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.Decrypt(tt.input)
			if err == nil {
				t.Fatalf("Decrypt(%q) = %q, want error", tt.input, got)
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Decrypt error = %v, want one wrapping %v", err, tt.wantErr)
			}
			if got != "" {
				t.Fatalf("Decrypt returned %q alongside an error", got)
			}
		})
	}
}

func TestIsEncrypted(t *testing.T) {
	c := mustCipher(t, KeyFromPassphrase("k"))
	tests := []struct {
		stored string
		want   bool
	}{
		{"", false},
		{"hunter2", false},
		{"enc:v1", false},
		{"ENC:V1:AAAA", false},
		{"enc:v1:", true},
		{"enc:v1:AAAA", true},
	}
	for _, tt := range tests {
		if got := c.IsEncrypted(tt.stored); got != tt.want {
			t.Errorf("IsEncrypted(%q) = %v, want %v", tt.stored, got, tt.want)
		}
		if got := IsEncrypted(tt.stored); got != tt.want {
			t.Errorf("package IsEncrypted(%q) = %v, want %v", tt.stored, got, tt.want)
		}
	}
}

// hkdfSHA256 is an independent RFC 5869 implementation for one output
// block (L <= 32), used to check the derivations.
func hkdfSHA256(ikm []byte, info string) []byte {
	ext := hmac.New(sha256.New, make([]byte, sha256.Size))
	ext.Write(ikm)
	prk := ext.Sum(nil)
	exp := hmac.New(sha256.New, prk)
	exp.Write([]byte(info))
	exp.Write([]byte{1})
	return exp.Sum(nil)
}

func TestKeyDerivation(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want []byte
	}{
		{"passphrase", KeyFromPassphrase("correct horse"), hkdfSHA256([]byte("correct horse"), passphraseLabel)},
		{"empty passphrase", KeyFromPassphrase(""), hkdfSHA256(nil, passphraseLabel)},
		{"salts", KeyFromSalts("ab", "c"), hkdfSHA256([]byte("\x00\x00\x00\x02ab\x00\x00\x00\x01c"), saltsLabel)},
		{"no salts", KeyFromSalts(), hkdfSHA256(nil, saltsLabel)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.got) != KeySize {
				t.Fatalf("key length = %d, want %d", len(tt.got), KeySize)
			}
			if !bytes.Equal(tt.got, tt.want) {
				t.Fatalf("key = %x, want %x", tt.got, tt.want)
			}
		})
	}

	distinct := []struct {
		name string
		a, b []byte
	}{
		{"different passphrases", KeyFromPassphrase("a"), KeyFromPassphrase("b")},
		{"salt split matters", KeyFromSalts("ab", "c"), KeyFromSalts("a", "bc")},
		{"salt order matters", KeyFromSalts("x", "y"), KeyFromSalts("y", "x")},
		{"passphrase vs salts", KeyFromPassphrase("same"), KeyFromSalts("same")},
	}
	for _, tt := range distinct {
		t.Run(tt.name, func(t *testing.T) {
			if bytes.Equal(tt.a, tt.b) {
				t.Fatalf("keys are equal: %x", tt.a)
			}
		})
	}
}

func TestDerivedKeysAreStable(t *testing.T) {
	// A value encrypted under a derived key decrypts under the key derived
	// again from the same input (as after a restart).
	enc, err := mustCipher(t, KeyFromSalts("LOGGED_IN_KEY value", "LOGGED_IN_SALT value")).Encrypt("pw")
	if err != nil {
		t.Fatal(err)
	}
	got, err := mustCipher(t, KeyFromSalts("LOGGED_IN_KEY value", "LOGGED_IN_SALT value")).Decrypt(enc)
	if err != nil || got != "pw" {
		t.Fatalf("Decrypt = %q, %v; want %q", got, err, "pw")
	}
	if _, err := mustCipher(t, KeyFromSalts("LOGGED_IN_KEY value", "changed salt")).Decrypt(enc); !errors.Is(err, ErrKeyChanged) {
		t.Fatalf("Decrypt after a salt change: err = %v, want ErrKeyChanged", err)
	}
}

func TestGenerateKey(t *testing.T) {
	a, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	b, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	if len(a) != KeySize || len(b) != KeySize {
		t.Fatalf("key lengths %d, %d; want %d", len(a), len(b), KeySize)
	}
	if bytes.Equal(a, b) {
		t.Fatal("two generated keys are equal")
	}
}

func FuzzDecrypt(f *testing.F) {
	c := mustCipher(f, KeyFromPassphrase("fuzz"))
	enc, err := c.Encrypt("seed")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(enc)
	f.Add("")
	f.Add(Prefix)
	f.Add("hunter2")
	f.Fuzz(func(t *testing.T, s string) {
		plain, err := c.Decrypt(s)
		if err != nil {
			if plain != "" {
				t.Fatalf("Decrypt returned %q alongside error %v", plain, err)
			}
			return
		}
		// Anything that decrypts must be a real ciphertext of this key,
		// and re-encrypting its plaintext must round-trip.
		if !c.IsEncrypted(s) {
			t.Fatalf("Decrypt accepted unprefixed input %q", s)
		}
		again, err := c.Encrypt(plain)
		if err != nil {
			t.Fatal(err)
		}
		back, err := c.Decrypt(again)
		if err != nil || back != plain {
			t.Fatalf("round trip of %q: %q, %v", plain, back, err)
		}
	})
}
