package wordpress

import (
	"github.com/mailsvc/mailsvc/internal/testenv"

	"os/exec"
	"strings"
	"testing"
)

// Vectors computed with WordPress's own class-phpass.php and pluggable.php
// (6.1.9 and 6.8.8) under PHP 8.2; see the research notes §12.4–12.5.
func TestCheckPasswordVectors(t *testing.T) {
	tests := []struct {
		name, password, hash string
		want                 bool
	}{
		{"openwall phpass vector", "test12345", "$P$9IQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0", true},
		{"passlib phpass vector", "thisisalongertestPW", "$P$912345678LIjjb6PhecupozNBmDndU0", true},
		{"wordpress phpass", "123456", "$P$BVaXtDXwf/ceSVp8VpLKx8bS2Y4O5F/", true},
		{"wordpress phpass, fixed salt", "password", "$P$B12345678Eg2z6eqcenWjcSosVt4mZ.", true},
		{"phpass wrong password", "123457", "$P$BVaXtDXwf/ceSVp8VpLKx8bS2Y4O5F/", false},
		{"6.8 $wp bcrypt", "password", "$wp$2y$10$abcdefghijklmnopqrstuumEoo.ju1cwQjKzeYRkDL5edk3VdeiFy", true},
		{"6.8 $wp bcrypt wrong", "Password", "$wp$2y$10$abcdefghijklmnopqrstuumEoo.ju1cwQjKzeYRkDL5edk3VdeiFy", false},
		{"plain bcrypt", "password", "$2y$10$abcdefghijklmnopqrstuu5Lo0g67CiD3M4RpN1BmBb4Crp5w7dbK", true},
		{"plain bcrypt is not $wp", "password", "$wp$2y$10$abcdefghijklmnopqrstuu5Lo0g67CiD3M4RpN1BmBb4Crp5w7dbK", false},
		{"md5", "password", "5f4dcc3b5aa765d61d8327deb882cf99", true},
		{"md5 wrong", "passwore", "5f4dcc3b5aa765d61d8327deb882cf99", false},
		{"empty hash", "", "", false},
		{"star hash", "x", "*", false},
		{"phpass count too low", "x", "$P$0IQRaTwmfeRo7ud9Fh4E2PdI0S3r.L0", false},
		{"too long password", strings.Repeat("a", 4097), "$P$BVaXtDXwf/ceSVp8VpLKx8bS2Y4O5F/", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := CheckPassword(tc.password, tc.hash); got != tc.want {
				t.Fatalf("CheckPassword(%q, %q) = %v, want %v", tc.password, tc.hash, got, tc.want)
			}
		})
	}
}

func TestPrehashVector(t *testing.T) {
	const want = "ZEIBxmCIjkyF8MNbMmsrJOPmp2/ioyAvd90BaIOY1lr6z3gfcWZusfjOv0kWasvS"
	if got := wpPrehash("password"); got != want {
		t.Fatalf("pre-hash = %q, want %q", got, want)
	}
}

func TestFastHashVectors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"abcdefghijklmnopqrstuvwx", "$generic$ZLGy4f-xaDioDcoHII2Yz6GofsboINn0UnN4kA6m"},
		{"MASwJxW0SRuiUKfcVL7GV8sG", "$generic$_3YS35VfSiIlq63HfEvA-CitG28kJ3QHYbOIS6JQ"},
		{"", "$generic$XJQGK2eUryTa4vHbU0bDv1Ml3wGPwaC1ATczq0o_"},
	}
	for _, tc := range tests {
		if got := FastHash(tc.in); got != tc.want {
			t.Errorf("FastHash(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if !VerifyFastHash(tc.in, tc.want) {
			t.Errorf("VerifyFastHash(%q, %q) = false", tc.in, tc.want)
		}
		if VerifyFastHash(tc.in+"x", tc.want) {
			t.Errorf("VerifyFastHash accepted a wrong message for %q", tc.want)
		}
	}
}

func TestVerifyFastHashFallbacks(t *testing.T) {
	tests := []struct {
		name, msg, hash string
		want            bool
	}{
		{"phpass", "123456", "$P$BVaXtDXwf/ceSVp8VpLKx8bS2Y4O5F/", true},
		{"bcrypt", "password", "$2y$10$abcdefghijklmnopqrstuu5Lo0g67CiD3M4RpN1BmBb4Crp5w7dbK", true},
		{"md5 is not accepted by wp_verify_fast_hash", "password", "5f4dcc3b5aa765d61d8327deb882cf99", false},
		{"$wp is not accepted by wp_verify_fast_hash", "password", "$wp$2y$10$abcdefghijklmnopqrstuumEoo.ju1cwQjKzeYRkDL5edk3VdeiFy", false},
	}
	for _, tc := range tests {
		if got := VerifyFastHash(tc.msg, tc.hash); got != tc.want {
			t.Errorf("%s: VerifyFastHash = %v, want %v", tc.name, got, tc.want)
		}
	}
	// Application-password checks accept every format either version may
	// have stored, including md5 (6.1's wp_check_password).
	for _, tc := range tests[:3] {
		if !CheckApplicationPasswordHash(tc.msg, tc.hash) {
			t.Errorf("%s: CheckApplicationPasswordHash = false", tc.name)
		}
	}
}

func TestNormalizeAndChunk(t *testing.T) {
	tests := []struct{ in, want string }{
		{"abcd efgh ijkl mnop qrst uvwx", "abcdefghijklmnopqrstuvwx"},
		{"abcd efgh-ijkl mnop qrst uvwx", "abcdefghijklmnopqrstuvwx"},
		{" AbC1\t_é-2 ", "AbC12"},
	}
	for _, tc := range tests {
		if got := NormalizeApplicationPassword(tc.in); got != tc.want {
			t.Errorf("Normalize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := ChunkPassword("abcdefghijklmnopqrstuvwx"); got != "abcd efgh ijkl mnop qrst uvwx" {
		t.Errorf("ChunkPassword = %q", got)
	}
}

func TestPassFrag(t *testing.T) {
	tests := []struct{ pass, v61, v68 string }{
		{"$P$BVaXtDXwf/ceSVp8VpLKx8bS2Y4O5F/", "DXwf", "DXwf"},
		{"$wp$2y$10$abcdefghijklmnopqrstuumEoo.ju1cwQjKzeYRkDL5edk3VdeiFy", "0$ab", "eiFy"},
		{"$2y$10$abcdefghijklmnopqrstuu5Lo0g67CiD3M4RpN1BmBb4Crp5w7dbK", "bcde", "bcde"},
		{"5f4dcc3b5aa765d61d8327deb882cf99", "5aa7", "cf99"},
		{"*", "", "*"},
		{"", "", ""},
		{"$argon2id$v=19$m=65536,t=4,p=1$abc$xyz1", "d$v=", "xyz1"},
	}
	for _, tc := range tests {
		if got := PassFrag61(tc.pass); got != tc.v61 {
			t.Errorf("PassFrag61(%q) = %q, want %q", tc.pass, got, tc.v61)
		}
		if got := PassFrag68(tc.pass); got != tc.v68 {
			t.Errorf("PassFrag68(%q) = %q, want %q", tc.pass, got, tc.v68)
		}
	}
}

func TestHashPasswordRoundTrip(t *testing.T) {
	h, err := HashPassword("  s3cret pass\n", 4)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$wp$2y$04$") || len(h) != 63 {
		t.Fatalf("HashPassword = %q, want $wp$2y$04$ and 63 bytes", h)
	}
	// wp_hash_password trims, wp_check_password does not (wp_authenticate
	// trims before).
	if !CheckPassword("s3cret pass", h) {
		t.Fatal("CheckPassword rejected the trimmed password")
	}
	if CheckPassword("s3cret pas", h) {
		t.Fatal("CheckPassword accepted a wrong password")
	}
	if h, _ := HashPassword(strings.Repeat("x", 4097), 4); h != "*" {
		t.Fatalf("over-long password hash = %q, want *", h)
	}
}

func TestPHPassHash(t *testing.T) {
	// crypt_private('password', '$P$B12345678') — the salt input whose
	// encode64 is "12345678".
	salt := [6]byte{}
	// Decode "12345678" back to its 6 bytes: encode64 is bijective here.
	for i, c := range []byte("12345678") {
		v := strings.IndexByte(itoa64, c)
		bit := i * 6
		for b := 0; b < 6; b++ {
			if v&(1<<b) != 0 {
				salt[(bit+b)/8] |= 1 << ((bit + b) % 8)
			}
		}
	}
	h, err := PHPassHash("password", salt, 8)
	if err != nil {
		t.Fatal(err)
	}
	if h != "$P$B12345678Eg2z6eqcenWjcSosVt4mZ." {
		t.Fatalf("PHPassHash = %q", h)
	}
}

// TestPasswordsAgainstPHP cross-checks with PHP and WordPress's own
// class-phpass.php: hashes PHP makes verify in Go, and hashes Go makes
// verify in PHP.
func TestPasswordsAgainstPHP(t *testing.T) {
	php := requirePHP(t)
	phpass := testenv.WordPressFile(t, "wp-includes/class-phpass.php")
	passwords := []string{"password", "correct horse battery staple", "héloïse-ñ", "a", strings.Repeat("long", 30)}
	for _, pw := range passwords {
		script := `require '` + phpass + `';
$pw = stream_get_contents(STDIN);
$h = new PasswordHash(8, true);
$pre = base64_encode(hash_hmac('sha384', trim($pw), 'wp-sha384', true));
echo $h->HashPassword($pw), "\n";
echo '$wp' . password_hash($pre, PASSWORD_BCRYPT, ['cost' => 4]), "\n";
echo password_hash($pw, PASSWORD_BCRYPT, ['cost' => 4]), "\n";
echo '$generic$' . sodium_bin2base64(sodium_crypto_generichash($pw, 'wp_fast_hash_6.8+', 30), SODIUM_BASE64_VARIANT_URLSAFE_NO_PADDING), "\n";
echo $pre, "\n";`
		cmd := exec.Command(php, "-r", script)
		cmd.Stdin = strings.NewReader(pw)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("php: %v", err)
		}
		lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
		if len(lines) != 5 {
			t.Fatalf("php output %q", out)
		}
		phpassHash, wpHash, bcryptHash, fastHash, pre := lines[0], lines[1], lines[2], lines[3], lines[4]
		if !strings.HasPrefix(phpassHash, "$P$B") || !CheckPassword(pw, phpassHash) || CheckPassword(pw+"x", phpassHash) {
			t.Errorf("%q: phpass hash %q from PHP not verified correctly", pw, phpassHash)
		}
		if !CheckPassword(pw, wpHash) || CheckPassword(pw+"x", wpHash) {
			t.Errorf("%q: $wp hash %q from PHP not verified correctly", pw, wpHash)
		}
		if !CheckPassword(pw, bcryptHash) || !VerifyFastHash(pw, bcryptHash) {
			t.Errorf("%q: bcrypt hash %q from PHP not verified", pw, bcryptHash)
		}
		if got := FastHash(pw); got != fastHash {
			t.Errorf("%q: FastHash = %q, PHP %q", pw, got, fastHash)
		}
		if got := wpPrehash(phpTrim(pw)); got != pre {
			t.Errorf("%q: pre-hash = %q, PHP %q", pw, got, pre)
		}

		goHash, err := HashPassword(pw, 4)
		if err != nil {
			t.Fatal(err)
		}
		verify := exec.Command(php, "-r", `$in = explode("\n", stream_get_contents(STDIN), 2);
$pre = base64_encode(hash_hmac('sha384', trim($in[1]), 'wp-sha384', true));
echo password_verify($pre, substr($in[0], 3)) ? "ok" : "no";`)
		verify.Stdin = strings.NewReader(goHash + "\n" + pw)
		res, err := verify.Output()
		if err != nil {
			t.Fatalf("php verify: %v", err)
		}
		if string(res) != "ok" {
			t.Errorf("%q: PHP rejected Go's $wp hash %q", pw, goHash)
		}
	}
}
