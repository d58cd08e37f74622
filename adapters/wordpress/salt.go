package wordpress

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
)

// ErrSaltUnavailable means wp_salt() would have to generate and store a new
// random salt because neither a usable constant nor the database option
// exists. WordPress creates it the first time it issues a cookie or nonce,
// so until then no credential signed with it can exist; this package never
// invents one.
var ErrSaltUnavailable = errors.New("wordpress salt not available")

// SaltPlaceholders are the values of the salt constants in
// wp-config-sample.php: WordPress's English one and the translations its
// localized wp-config-sample.php files ship (de_DE, fr_FR, es_ES, it_IT,
// pt_BR in two wordings, ru_RU); the English one comes first. wp_salt()
// treats the English one, and through gettext only the site's own
// translation, as unusable: NewSalter does the same with the English one
// (and the site's configured translations), since a cookie WordPress
// signed with another language's phrase must still verify. The key of
// stored secrets refuses every one of them (IsSaltPlaceholder, used by
// cmd/mailsvc/cli). A translation missing here is still caught there: a
// sample file repeats its phrase in all eight constants, and a value two
// constants share is refused too (DuplicatedSalts).
var SaltPlaceholders = []string{
	"put your unique phrase here",
	"Füge hier deine Zeichenkette ein",
	"mettez une phrase unique ici",
	"pon aquí una frase única",
	"Mettere la vostra frase unica qui",
	"coloque a sua frase única aqui",
	"coloque sua frase única aqui",
	"впишите сюда уникальную фразу",
}

// IsSaltPlaceholder reports whether v is one of SaltPlaceholders (compared
// without surrounding spaces and case).
func IsSaltPlaceholder(v string) bool {
	v = strings.TrimSpace(v)
	for _, p := range SaltPlaceholders {
		if strings.EqualFold(v, p) {
			return true
		}
	}
	return false
}

// DuplicatedSalts returns the values that two or more of the given salt
// constants share, as wp_salt() finds them (it ignores such a value).
func DuplicatedSalts(constants map[string]string) map[string]bool {
	dup := map[string]bool{}
	seen := map[string]bool{}
	for _, name := range saltConstantNames {
		v, ok := constants[name]
		if !ok {
			continue
		}
		if seen[v] {
			dup[v] = true
		}
		seen[v] = true
	}
	return dup
}

// saltConstantNames are the constants wp_salt() inspects for duplicates,
// in WordPress's order.
var saltConstantNames = []string{
	"AUTH_KEY", "AUTH_SALT", "SECURE_AUTH_KEY", "SECURE_AUTH_SALT",
	"LOGGED_IN_KEY", "LOGGED_IN_SALT", "NONCE_KEY", "NONCE_SALT",
	"SECRET_KEY", "SECRET_SALT",
}

// OptionReader reads one row of the options table: the raw option_value
// and whether the row exists.
type OptionReader interface {
	Option(ctx context.Context, name string) (value string, found bool, err error)
}

// Salter computes wp_salt() for a site: the salt constants of wp-config.php
// with WordPress's duplicate and placeholder rules, falling back to the
// salts WordPress stored in the options table. Results are cached; a
// missing salt is not cached, so one WordPress creates later is picked up.
type Salter struct {
	constants  map[string]string
	duplicated map[string]bool
	options    OptionReader

	mu    sync.Mutex
	cache map[string]string
}

// NewSalter returns a Salter. constants holds the salt constants that
// wp-config.php defines (AUTH_KEY ... NONCE_SALT, SECRET_KEY, SECRET_SALT;
// an absent key means "not defined"). extraPlaceholders lists localized
// variants of "put your unique phrase here" that the site's translated
// wp-config-sample.php may contain; WordPress rejects them via gettext.
func NewSalter(constants map[string]string, extraPlaceholders []string, options OptionReader) *Salter {
	dup := DuplicatedSalts(constants)
	dup[SaltPlaceholders[0]] = true
	for _, p := range extraPlaceholders {
		dup[p] = true
	}
	c := make(map[string]string, len(constants))
	for k, v := range constants {
		c[k] = v
	}
	return &Salter{constants: c, duplicated: dup, options: options, cache: map[string]string{}}
}

// usable returns the constant's value if it is defined, PHP-truthy and not
// duplicated.
func (s *Salter) usable(name string) (string, bool) {
	v, ok := s.constants[name]
	if !ok || !Truthy(v) || s.duplicated[v] {
		return "", false
	}
	return v, true
}

// storedSalt reads the option WordPress keeps a generated salt in; a
// missing or falsy option is ErrSaltUnavailable.
func (s *Salter) storedSalt(ctx context.Context, name string) (string, error) {
	if s.options == nil {
		return "", fmt.Errorf("%w: option %s (no database)", ErrSaltUnavailable, name)
	}
	raw, found, err := s.options.Option(ctx, name)
	if err != nil {
		return "", fmt.Errorf("read option %s: %w", name, err)
	}
	if !found {
		return "", fmt.Errorf("%w: option %s does not exist", ErrSaltUnavailable, name)
	}
	v := MaybeUnserialize(raw)
	if !Truthy(v) {
		return "", fmt.Errorf("%w: option %s is empty", ErrSaltUnavailable, name)
	}
	return phpString(v), nil
}

// Salt returns wp_salt(scheme) (single site: the fallback options come from
// the options table).
func (s *Salter) Salt(ctx context.Context, scheme string) (string, error) {
	s.mu.Lock()
	v, ok := s.cache[scheme]
	s.mu.Unlock()
	if ok {
		return v, nil
	}
	key, salt := "", ""
	if v, ok := s.usable("SECRET_KEY"); ok {
		key = v
	}
	if scheme == "auth" {
		if v, ok := s.usable("SECRET_SALT"); ok {
			salt = v
		}
	}
	switch scheme {
	case "auth", "secure_auth", "logged_in", "nonce":
		for _, typ := range []string{"key", "salt"} {
			cur := &key
			if typ == "salt" {
				cur = &salt
			}
			if v, ok := s.usable(strings.ToUpper(scheme + "_" + typ)); ok {
				*cur = v
			} else if !Truthy(*cur) {
				stored, err := s.storedSalt(ctx, scheme+"_"+typ)
				if err != nil {
					return "", err
				}
				*cur = stored
			}
		}
	default:
		if !Truthy(key) {
			stored, err := s.storedSalt(ctx, "secret_key")
			if err != nil {
				return "", err
			}
			key = stored
		}
		salt = hmacMD5Hex(key, scheme)
	}
	out := key + salt
	s.mu.Lock()
	s.cache[scheme] = out
	s.mu.Unlock()
	return out, nil
}

// Hash returns wp_hash(data, scheme): HMAC-MD5 of data keyed with
// wp_salt(scheme), as 32 lowercase hex characters.
func (s *Salter) Hash(ctx context.Context, data, scheme string) (string, error) {
	salt, err := s.Salt(ctx, scheme)
	if err != nil {
		return "", err
	}
	return WPHash(data, salt), nil
}

// WPHash is wp_hash() given the salt string: lowercase hex HMAC-MD5.
func WPHash(data, salt string) string {
	return hmacMD5Hex(salt, data)
}

func hmacMD5Hex(key, msg string) string {
	m := hmac.New(md5.New, []byte(key))
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}
