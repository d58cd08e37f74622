package migrationsite

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/nacl/secretbox"

	"github.com/mailsvc/mailsvc/app/migration"
)

// FluentSMTP's last-resort key and salt when wp-config.php defines
// neither its own constants nor LOGGED_IN_KEY/LOGGED_IN_SALT.
const (
	fluentFallbackKey  = "this-is-a-fallback-key-but-not-secure"
	fluentFallbackSalt = "this-is-a-fallback-salt-but-not-secure"
)

// Decrypt implements migration.Site. Every failure is
// migration.ErrUndecryptable, with no part of the value in it.
func (s *Site) Decrypt(ctx context.Context, scheme migration.Scheme, value string) (string, error) {
	if value == "" {
		return "", migration.ErrUndecryptable
	}
	var (
		out string
		err error
	)
	switch scheme {
	case migration.SchemeFluentSMTP:
		out, err = s.fluentSMTP(value)
	case migration.SchemeWPMailSMTP:
		out, err = s.secretbox(ctx, value, "WPMS_CRYPTO_KEY", "wp_mail_smtp_mail_key")
	case migration.SchemeEasyWPSMTP:
		out, err = s.secretbox(ctx, value, "EASY_WP_SMTP_CRYPTO_KEY", "easy_wp_smtp_mail_key")
	case migration.SchemeEasyWPSMTPv1:
		out, err = s.easyV1(ctx, value)
	case migration.SchemeBase64:
		var b []byte
		b, err = base64.StdEncoding.DecodeString(strings.TrimSpace(value))
		out = string(b)
	case migration.SchemeBase64Unpadded:
		var b []byte
		b, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(strings.TrimSpace(value), "="))
		out = string(b)
	default:
		return "", fmt.Errorf("unknown secret scheme %q: %w", scheme, migration.ErrUndecryptable)
	}
	if err != nil {
		return "", fmt.Errorf("%s secret: %w", scheme, migration.ErrUndecryptable)
	}
	return out, nil
}

// constantOr returns the first non-empty constant, else def.
func (s *Site) constantOr(def string, names ...string) string {
	for _, n := range names {
		if v, ok := s.constants[n]; ok && v != "" {
			return v
		}
	}
	return def
}

// fluentSMTP opens fluentMailEncryptDecrypt's output:
// base64(iv ‖ base64(AES-256-CTR(plain ‖ salt))), the key string's bytes
// NUL-padded or cut to 32 as PHP's OpenSSL does.
func (s *Site) fluentSMTP(value string) (string, error) {
	key := s.constantOr(fluentFallbackKey, "FLUENTMAIL_ENCRYPT_KEY")
	salt := s.constantOr(fluentFallbackSalt, "FLUENTMAIL_ENCRYPT_SALT")
	if _, own := s.constants["FLUENTMAIL_ENCRYPT_KEY"]; !own {
		key = s.constantOr(fluentFallbackKey, "LOGGED_IN_KEY")
	}
	if _, own := s.constants["FLUENTMAIL_ENCRYPT_SALT"]; !own {
		salt = s.constantOr(fluentFallbackSalt, "LOGGED_IN_SALT")
	}
	raw, err := base64.StdEncoding.DecodeString(value)
	if err != nil || len(raw) <= aes.BlockSize {
		return "", errors.New("not FluentSMTP's format")
	}
	ct, err := base64.StdEncoding.DecodeString(string(raw[aes.BlockSize:]))
	if err != nil {
		return "", errors.New("not FluentSMTP's format")
	}
	plain, err := ctr(phpKey(key), raw[:aes.BlockSize], ct)
	if err != nil {
		return "", err
	}
	if !strings.HasSuffix(plain, salt) {
		return "", errors.New("wrong key")
	}
	return strings.TrimSuffix(plain, salt), nil
}

// phpKey is what OpenSSL in PHP does with a key string for a 256-bit
// cipher: cut to 32 bytes or padded with NULs.
func phpKey(k string) []byte {
	b := make([]byte, 32)
	copy(b, k)
	return b
}

func ctr(key, iv, ct []byte) (string, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return "", err
	}
	out := make([]byte, len(ct))
	cipher.NewCTR(block, iv).XORKeyStream(out, ct)
	return string(out), nil
}

// secretbox opens WP Mail SMTP's (and Easy WP SMTP v2's) Crypto::encrypt
// output, base64(nonce ‖ box), with the raw key constant or the base64
// key option.
func (s *Site) secretbox(ctx context.Context, value, constant, option string) (string, error) {
	var key []byte
	if v, ok := s.constants[constant]; ok && v != "" {
		key = []byte(v)
	} else {
		opt, found, err := s.options.Option(ctx, option)
		if err != nil {
			return "", err
		}
		if !found {
			return "", errors.New("no key")
		}
		if key, err = base64.StdEncoding.DecodeString(strings.TrimSpace(opt)); err != nil {
			return "", errors.New("key option is not base64")
		}
	}
	if len(key) != 32 {
		return "", errors.New("key is not 32 bytes")
	}
	raw, err := base64.StdEncoding.DecodeString(value)
	if err != nil || len(raw) < 24+secretbox.Overhead {
		return "", errors.New("not a sealed box")
	}
	var k [32]byte
	var nonce [24]byte
	copy(k[:], key)
	copy(nonce[:], raw[:24])
	plain, ok := secretbox.Open(nil, raw[24:], &nonce, &k)
	if !ok {
		return "", errors.New("box does not open")
	}
	return string(plain), nil
}

// easyV1 opens Easy WP SMTP 1.x's Cryptor output: base64(iv ‖
// AES-256-CTR(plain)) keyed by SHA-256 of the option swpsmtp_enc_key.
func (s *Site) easyV1(ctx context.Context, value string) (string, error) {
	opt, found, err := s.options.Option(ctx, "swpsmtp_enc_key")
	if err != nil {
		return "", err
	}
	if !found || opt == "" {
		return "", errors.New("no key")
	}
	raw, err := base64.StdEncoding.DecodeString(value)
	if err != nil || len(raw) <= aes.BlockSize {
		return "", errors.New("not Easy WP SMTP's format")
	}
	key := sha256.Sum256([]byte(opt))
	return ctr(key[:], raw[:aes.BlockSize], raw[aes.BlockSize:])
}
