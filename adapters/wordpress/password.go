package wordpress

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/bcrypt"
	"golang.org/x/crypto/blake2b"
)

// itoa64 is phpass's alphabet for its portable hashes.
const itoa64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// maxPasswordBytes is the longest password phpass and WordPress 6.8 accept.
const maxPasswordBytes = 4096

// phpassEncode64 is phpass's encode64: little-endian 24-bit groups emitted
// six bits at a time, least significant first; a last group of one or two
// bytes gives two or three characters.
func phpassEncode64(in []byte) string {
	var b strings.Builder
	for i := 0; i < len(in); i += 3 {
		group := in[i:min(i+3, len(in))]
		var v uint
		for k, c := range group {
			v |= uint(c) << (8 * k)
		}
		for k := range len(group) + 1 {
			b.WriteByte(itoa64[(v>>(6*k))&0x3f])
		}
	}
	return b.String()
}

// phpassCryptPrivate is phpass's crypt_private: it returns the portable
// hash of password with the setting taken from the stored hash, or "" when
// the setting is not a valid $P$/$H$ setting (phpass then falls back to
// crypt()).
func phpassCryptPrivate(password, setting string) string {
	if len(setting) < 12 || (setting[:3] != "$P$" && setting[:3] != "$H$") {
		return ""
	}
	countLog2 := strings.IndexByte(itoa64, setting[3])
	if countLog2 < 7 || countLog2 > 30 {
		return ""
	}
	count := 1 << countLog2
	salt := setting[4:12]
	h := md5.Sum([]byte(salt + password))
	buf := make([]byte, 0, md5.Size+len(password))
	for ; count > 0; count-- {
		buf = append(buf[:0], h[:]...)
		buf = append(buf, password...)
		h = md5.Sum(buf)
	}
	return setting[:12] + phpassEncode64(h[:])
}

// PHPassCheck is phpass's CheckPassword in portable mode, as WordPress
// uses it: $P$/$H$ portable hashes, and through the crypt() fallback the
// bcrypt formats $2a$, $2b$ and $2y$. Other crypt(3) formats are not
// supported and fail.
func PHPassCheck(password, stored string) bool {
	if len(password) > maxPasswordBytes {
		return false
	}
	if h := phpassCryptPrivate(password, stored); h != "" {
		return subtle.ConstantTimeCompare([]byte(h), []byte(stored)) == 1
	}
	return bcryptCheck(password, stored)
}

// PHPassHash returns a phpass portable hash ($P$) of password with the
// given 6-byte salt input and log2 iteration count (WordPress uses 8, which
// phpass stores as 13, 'B'). It exists for tests and for writing 6.1-style
// hashes.
func PHPassHash(password string, saltInput [6]byte, countLog2 int) (string, error) {
	if countLog2 < 4 || countLog2 > 31 {
		return "", fmt.Errorf("phpass: iteration count log2 %d out of range", countLog2)
	}
	setting := "$P$" + string(itoa64[min(countLog2+5, 30)]) + phpassEncode64(saltInput[:])
	h := phpassCryptPrivate(password, setting)
	if h == "" {
		return "", errors.New("phpass: invalid setting")
	}
	return h, nil
}

// isBcryptHash reports whether h has a bcrypt prefix PHP's crypt() accepts.
func isBcryptHash(h string) bool {
	return strings.HasPrefix(h, "$2y$") || strings.HasPrefix(h, "$2a$") || strings.HasPrefix(h, "$2b$")
}

// bcryptCheck verifies a bcrypt hash as PHP's crypt()/password_verify do.
// Like PHP it uses only the first 72 bytes of the password.
func bcryptCheck(password, hash string) bool {
	if !isBcryptHash(hash) {
		return false
	}
	p := []byte(password)
	if len(p) > 72 {
		p = p[:72]
	}
	return bcrypt.CompareHashAndPassword([]byte(hash), p) == nil
}

// wpPrehash is WordPress 6.8's bcrypt pre-hash:
// base64(HMAC-SHA384(key "wp-sha384", password)).
func wpPrehash(password string) string {
	m := hmac.New(sha512.New384, []byte("wp-sha384"))
	m.Write([]byte(password))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// HashPassword is WordPress 6.8's wp_hash_password() with the default
// bcrypt algorithm: "$wp" + bcrypt($2y$, cost) of the pre-hash of
// trim(password). cost 0 means bcrypt.DefaultCost (10, as PHP 8.2).
func HashPassword(password string, cost int) (string, error) {
	if len(password) > maxPasswordBytes {
		return "*", nil
	}
	if cost == 0 {
		cost = bcrypt.DefaultCost
	}
	h, err := bcrypt.GenerateFromPassword([]byte(wpPrehash(phpTrim(password))), cost)
	if err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	// x/crypto writes $2a$; PHP's password_hash writes $2y$. The algorithm
	// is identical, and WordPress compares with password_verify, which
	// accepts both; emit $2y$ so the stored value matches what PHP writes.
	return "$wp$2y$" + string(h[4:]), nil
}

// CheckPassword is wp_check_password() covering both WordPress 6.1 and
// 6.8+ formats: an md5 hex hash (32 bytes or fewer), "$wp" + bcrypt of the
// 6.8 pre-hash, phpass $P$/$H$, and plain bcrypt. Passwords longer than
// 4096 bytes fail.
func CheckPassword(password, hash string) bool {
	if len(hash) <= 32 {
		sum := md5.Sum([]byte(password))
		return subtle.ConstantTimeCompare([]byte(hex.EncodeToString(sum[:])), []byte(hash)) == 1
	}
	if len(password) > maxPasswordBytes {
		return false
	}
	if strings.HasPrefix(hash, "$wp") {
		return bcryptCheck(wpPrehash(password), hash[3:])
	}
	return PHPassCheck(password, hash)
}

// fastHashKey is the BLAKE2b key of wp_fast_hash (WordPress 6.8+).
const fastHashKey = "wp_fast_hash_6.8+"

// FastHash is WordPress 6.8's wp_fast_hash(): "$generic$" followed by the
// unpadded URL-safe base64 of keyed BLAKE2b-240 of message.
func FastHash(message string) string {
	h, err := blake2b.New(30, []byte(fastHashKey))
	if err != nil {
		panic(fmt.Sprintf("blake2b: %v", err)) // fixed, valid size and key
	}
	h.Write([]byte(message))
	return "$generic$" + base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

// VerifyFastHash is wp_verify_fast_hash(): $generic$ hashes are compared
// with FastHash; anything else goes to phpass's CheckPassword ($P$ and
// bcrypt), exactly as WordPress 6.8 does.
func VerifyFastHash(message, hash string) bool {
	if !strings.HasPrefix(hash, "$generic$") {
		return PHPassCheck(message, hash)
	}
	return subtle.ConstantTimeCompare([]byte(FastHash(message)), []byte(hash)) == 1
}

// CheckApplicationPasswordHash verifies a normalised application password
// against one stored item hash in any format a WordPress 6.1 or 6.8+ site
// may hold: $generic$ (6.8+), phpass $P$/$H$ and bcrypt (both), and md5 of
// 32 bytes or fewer (6.1's wp_check_password; core never writes it).
func CheckApplicationPasswordHash(password, hash string) bool {
	switch {
	case strings.HasPrefix(hash, "$generic$"):
		return VerifyFastHash(password, hash)
	case len(hash) <= 32:
		return CheckPassword(password, hash)
	default:
		return PHPassCheck(password, hash)
	}
}

// NormalizeApplicationPassword deletes every byte that is not an ASCII
// letter or digit, as wp_authenticate_application_password() does, so the
// chunked form "abcd efgh ..." equals the plain one.
func NormalizeApplicationPassword(pw string) string {
	b := make([]byte, 0, len(pw))
	for i := 0; i < len(pw); i++ {
		c := pw[i]
		if (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') {
			b = append(b, c)
		}
	}
	return string(b)
}

// ChunkPassword is WordPress's chunk_password(): groups of four separated
// by spaces, as an application password is shown once after creation.
func ChunkPassword(pw string) string {
	var parts []string
	for len(pw) > 4 {
		parts = append(parts, pw[:4])
		pw = pw[4:]
	}
	parts = append(parts, pw)
	return strings.Join(parts, " ")
}

// phpSubstr is PHP 8's substr() for a non-negative or negative start and
// a length (length < 0 means "to the end").
func phpSubstr(s string, start, length int) string {
	n := len(s)
	if start < 0 {
		start = max(n+start, 0)
	}
	if start > n {
		return ""
	}
	s = s[start:]
	if length >= 0 && length < len(s) {
		s = s[:length]
	}
	return s
}

// PassFrag61 is the cookie's pass_frag in WordPress 6.1: bytes 8..11 of
// user_pass whatever the hash format.
func PassFrag61(userPass string) string {
	return phpSubstr(userPass, 8, 4)
}

// PassFrag68 is the cookie's pass_frag in WordPress 6.8+: bytes 8..11 for
// $P$ and $2y$ hashes, the last four bytes for everything else ($wp$...,
// md5, argon2).
func PassFrag68(userPass string) string {
	if strings.HasPrefix(userPass, "$P$") || strings.HasPrefix(userPass, "$2y$") {
		return phpSubstr(userPass, 8, 4)
	}
	return phpSubstr(userPass, -4, -1)
}

// passFrags returns the distinct pass_frag candidates for user_pass: the
// 6.8+ rule first, then the 6.1 rule when it differs. The validator accepts
// a cookie signed with either, so it needs no WordPress version setting;
// the two differ only for hash formats where one version cannot have
// issued the cookie (a 6.1 site has no $wp$ hashes and rehashes md5 at
// login), so accepting both admits no cookie that neither would.
func passFrags(userPass string) []string {
	a, b := PassFrag68(userPass), PassFrag61(userPass)
	if a == b {
		return []string{a}
	}
	return []string{a, b}
}

// randomAlnum returns n random characters from [A-Za-z0-9], like
// wp_generate_password(n, false).
func randomAlnum(n int) (string, error) {
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	out := make([]byte, n)
	buf := make([]byte, 1)
	for i := 0; i < n; {
		if _, err := rand.Read(buf); err != nil {
			return "", fmt.Errorf("random: %w", err)
		}
		// 248 = 4*62: rejecting larger bytes keeps the choice uniform.
		if buf[0] >= 248 {
			continue
		}
		out[i] = chars[int(buf[0])%len(chars)]
		i++
	}
	return string(out), nil
}

// PortableHash returns a phpass portable hash ($P$B, 8192 rounds) of
// password with a random salt: the format WordPress wrote before 6.8 for
// user and application passwords. Every WordPress version from 2.5 to 7.x
// verifies it (6.8+ through its phpass fallback), so it is what mailsvc
// writes when it creates credentials in WordPress's tables.
func PortableHash(password string) (string, error) {
	var salt [6]byte
	if _, err := rand.Read(salt[:]); err != nil {
		return "", fmt.Errorf("portable hash salt: %w", err)
	}
	return PHPassHash(password, salt, 8)
}
