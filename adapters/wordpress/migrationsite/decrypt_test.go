package migrationsite

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/app/migration"
)

// php runs code with the PHP CLI and returns its output.
func php(t *testing.T, code string) string {
	t.Helper()
	bin, err := exec.LookPath("php")
	if err != nil {
		t.Skip("php is not installed")
	}
	out, err := exec.Command(bin, "-r", code).CombinedOutput()
	if err != nil {
		t.Fatalf("php: %v: %s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// fluentEncrypt is fluentMailEncryptDecrypt's encrypt branch.
const fluentEncrypt = `function enc($v, $key, $salt) {
  $iv = openssl_random_pseudo_bytes(openssl_cipher_iv_length('aes-256-ctr'));
  $raw = openssl_encrypt($v . $salt, 'aes-256-ctr', $key, 0, $iv);
  return base64_encode($iv . $raw);
}`

func TestDecryptSchemes(t *testing.T) {
	if _, err := exec.LookPath("php"); err != nil {
		t.Skip("php is not installed")
	}
	fluent := php(t, fluentEncrypt+` echo enc('p@ss wörd', 'logged-in-key-longer-than-thirty-two-bytes!!', 'the-salt');`)
	fluentOwn := php(t, fluentEncrypt+` echo enc('api-key', 'own-key', 'own-salt');`)
	site := &Site{constants: map[string]string{"LOGGED_IN_KEY": "logged-in-key-longer-than-thirty-two-bytes!!", "LOGGED_IN_SALT": "the-salt"}, options: nil}
	own := &Site{constants: map[string]string{"LOGGED_IN_KEY": "x", "LOGGED_IN_SALT": "y", "FLUENTMAIL_ENCRYPT_KEY": "own-key", "FLUENTMAIL_ENCRYPT_SALT": "own-salt"}}
	wrong := &Site{constants: map[string]string{"LOGGED_IN_KEY": "other", "LOGGED_IN_SALT": "the-salt"}}
	for _, tc := range []struct {
		name   string
		site   *Site
		scheme migration.Scheme
		in     string
		want   string
	}{
		{"fluentsmtp with wp salts", site, migration.SchemeFluentSMTP, fluent, "p@ss wörd"},
		{"fluentsmtp with its own constants", own, migration.SchemeFluentSMTP, fluentOwn, "api-key"},
		{"fluentsmtp wrong key", wrong, migration.SchemeFluentSMTP, fluent, ""},
		{"base64", site, migration.SchemeBase64, "c2VjcmV0", "secret"},
		{"base64 unpadded", site, migration.SchemeBase64Unpadded, "c2VjcmV0MQ", "secret1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.site.Decrypt(context.Background(), tc.scheme, tc.in)
			if tc.want == "" {
				if !errors.Is(err, migration.ErrUndecryptable) || strings.Contains(err.Error(), tc.in) {
					t.Fatalf("got %q, %v; want ErrUndecryptable without the value", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	// secretbox with the raw WPMS_CRYPTO_KEY constant, as Crypto.php uses it.
	const rawKey = "0123456789abcdef0123456789abcdef"
	sealed := php(t, `$n = random_bytes(SODIUM_CRYPTO_SECRETBOX_NONCEBYTES);
echo base64_encode($n . sodium_crypto_secretbox('smtp-secret', $n, '`+rawKey+`'));`)
	s := &Site{constants: map[string]string{"WPMS_CRYPTO_KEY": rawKey}}
	if got, err := s.Decrypt(context.Background(), migration.SchemeWPMailSMTP, sealed); err != nil || got != "smtp-secret" {
		t.Fatalf("secretbox: %q, %v", got, err)
	}
	bad := &Site{constants: map[string]string{"WPMS_CRYPTO_KEY": "fedcba9876543210fedcba9876543210"}}
	if _, err := bad.Decrypt(context.Background(), migration.SchemeWPMailSMTP, sealed); !errors.Is(err, migration.ErrUndecryptable) {
		t.Fatalf("secretbox with the wrong key: %v", err)
	}
}
