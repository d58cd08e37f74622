package core

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// prefixCipher "encrypts" by prefixing; values with the wrong prefix fail.
type prefixCipher struct{ prefix string }

func (c prefixCipher) Encrypt(p string) (string, error) { return "enc:" + c.prefix + ":" + p, nil }
func (c prefixCipher) Decrypt(s string) (string, error) {
	if !strings.HasPrefix(s, "enc:"+c.prefix+":") {
		return "", errors.New("wrong key")
	}
	return strings.TrimPrefix(s, "enc:"+c.prefix+":"), nil
}
func (c prefixCipher) IsEncrypted(s string) bool { return strings.HasPrefix(s, "enc:") }

func TestSecretSettings(t *testing.T) {
	secret := func(k string) bool { return k == "password" || k == "token" }
	plain := Settings{"host": "h", "password": "p", "token": "", "port": int64(25)}
	c := prefixCipher{"k1"}

	enc, err := EncryptSecrets(c, plain, secret)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Settings{"host": "h", "password": "enc:k1:p", "token": "", "port": int64(25)}); !reflect.DeepEqual(enc, want) {
		t.Fatalf("encrypted %v, want %v", enc, want)
	}
	if plain["password"] != "p" {
		t.Fatal("EncryptSecrets changed its input")
	}
	dec, bad := DecryptSecrets(c, enc, secret)
	if !reflect.DeepEqual(dec, plain) || bad != nil {
		t.Fatalf("decrypted %v (bad %v), want %v", dec, bad, plain)
	}
	// Another key: the secret is blanked and named, the rest survives.
	dec, bad = DecryptSecrets(prefixCipher{"k2"}, Settings{"password": "enc:k1:p", "token": "enc:k1:t", "host": "h"}, secret)
	if want := (Settings{"password": "", "token": "", "host": "h"}); !reflect.DeepEqual(dec, want) || !reflect.DeepEqual(bad, []string{"password", "token"}) {
		t.Fatalf("with the wrong key: %v, bad %v", dec, bad)
	}
	// A plaintext stored before encryption was on is read as it is.
	if dec, _ := DecryptSecrets(c, Settings{"password": "legacy"}, secret); dec["password"] != "legacy" {
		t.Fatalf("legacy plaintext: %v", dec)
	}
	if dec, _ := DecryptSecrets(c, nil, secret); dec == nil {
		t.Fatal("DecryptSecrets of nil settings returned nil")
	}
	if got := MaskSecrets(plain, secret); !reflect.DeepEqual(got, Settings{"host": "h", "password": Mask, "token": "", "port": int64(25)}) {
		t.Fatalf("masked %v", got)
	}
	if got, err := EncryptSecrets(nil, plain, secret); err != nil || !reflect.DeepEqual(got, plain) {
		t.Fatalf("without a cipher: %v %v", got, err)
	}
}
