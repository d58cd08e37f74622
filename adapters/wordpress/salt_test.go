package wordpress

import (
	"github.com/mailsvc/mailsvc/internal/testenv"

	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// mapOptions is an OptionReader over a map.
type mapOptions map[string]string

func (m mapOptions) Option(_ context.Context, name string) (string, bool, error) {
	v, ok := m[name]
	return v, ok, nil
}

var standardSalts = map[string]string{
	"AUTH_KEY": "auth-key-0123456789", "AUTH_SALT": "auth-salt-0123456789",
	"SECURE_AUTH_KEY": "secure-auth-key-0123456789", "SECURE_AUTH_SALT": "secure-auth-salt-0123456789",
	"LOGGED_IN_KEY": "logged-in-key-0123456789", "LOGGED_IN_SALT": "logged-in-salt-0123456789",
	"NONCE_KEY": "nonce-key-0123456789", "NONCE_SALT": "nonce-salt-0123456789",
}

type saltCase struct {
	name      string
	constants map[string]string
	options   map[string]string
	// want maps scheme to the expected salt; "" means ErrSaltUnavailable.
	want map[string]string
}

// Expected values are from WordPress's own wp_salt() (research §12.1) or
// follow from it; TestSaltAgainstPHP re-derives all of them with PHP.
var saltCases = []saltCase{
	{
		name:      "standard constants",
		constants: standardSalts,
		want: map[string]string{
			"logged_in": "logged-in-key-0123456789logged-in-salt-0123456789",
			"nonce":     "nonce-key-0123456789nonce-salt-0123456789",
			"auth":      "auth-key-0123456789auth-salt-0123456789",
			"custom":    "", // needs option secret_key
		},
	},
	{
		name:      "debian setup-mysql: SECRET_KEY only",
		constants: map[string]string{"SECRET_KEY": "debian-secret-key-ABCDEFGHIJKLMNOPQRSTUVWXYZ"},
		options:   map[string]string{"logged_in_salt": "db-logged-in-salt", "nonce_salt": "db-nonce-salt", "logged_in_key": "db-logged-in-key"},
		want: map[string]string{
			"logged_in": "debian-secret-key-ABCDEFGHIJKLMNOPQRSTUVWXYZdb-logged-in-salt",
			"nonce":     "debian-secret-key-ABCDEFGHIJKLMNOPQRSTUVWXYZdb-nonce-salt",
			"auth":      "",
			"custom":    "debian-secret-key-ABCDEFGHIJKLMNOPQRSTUVWXYZ" + hmacMD5Hex("debian-secret-key-ABCDEFGHIJKLMNOPQRSTUVWXYZ", "custom"),
		},
	},
	{
		name: "placeholder and duplicate constants fall back to options",
		constants: map[string]string{
			"LOGGED_IN_KEY": "put your unique phrase here", "LOGGED_IN_SALT": "real-logged-in-salt",
			"NONCE_KEY": "same-value", "NONCE_SALT": "same-value",
		},
		options: map[string]string{"logged_in_key": "db-logged-in-key", "nonce_key": "db-nonce-key", "nonce_salt": "db-nonce-salt"},
		want: map[string]string{
			"logged_in": "db-logged-in-keyreal-logged-in-salt",
			"nonce":     "db-nonce-keydb-nonce-salt",
		},
	},
	{
		// An English site's gettext leaves the German placeholder a salt:
		// wp_salt() uses it, so the Salter does (the key of stored secrets
		// refuses it, cmd/mailsvc/cli).
		name: "a localized placeholder on an English site is a salt, as in WordPress",
		constants: map[string]string{
			"LOGGED_IN_KEY": "Füge hier deine Zeichenkette ein", "LOGGED_IN_SALT": "real-logged-in-salt",
		},
		options: map[string]string{"logged_in_key": "db-logged-in-key"},
		want:    map[string]string{"logged_in": "Füge hier deine Zeichenkette einreal-logged-in-salt"},
	},
	{
		name:      "no constants, no options: never invented",
		constants: map[string]string{},
		want:      map[string]string{"logged_in": "", "nonce": "", "custom": ""},
	},
	{
		name:      "SECRET_SALT is used for auth only; falsy constant \"0\" ignored",
		constants: map[string]string{"SECRET_KEY": "sk", "SECRET_SALT": "ss", "NONCE_KEY": "0"},
		options:   map[string]string{"nonce_salt": "ns", "logged_in_salt": "ls"},
		want: map[string]string{
			"auth":      "skss",
			"nonce":     "skns",
			"logged_in": "skls",
		},
	},
	{
		name:      "empty or \"0\" option is missing",
		constants: map[string]string{"SECRET_KEY": "sk"},
		options:   map[string]string{"nonce_salt": "0", "logged_in_salt": ""},
		want:      map[string]string{"nonce": "", "logged_in": ""},
	},
	{
		name:      "option secret_key for other schemes",
		constants: map[string]string{},
		options:   map[string]string{"secret_key": "opt-secret"},
		want:      map[string]string{"custom": "opt-secret" + hmacMD5Hex("opt-secret", "custom")},
	},
}

func TestSalt(t *testing.T) {
	for _, tc := range saltCases {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSalter(tc.constants, nil, mapOptions(tc.options))
			for scheme, want := range tc.want {
				got, err := s.Salt(context.Background(), scheme)
				if want == "" {
					if !errors.Is(err, ErrSaltUnavailable) {
						t.Errorf("Salt(%s) = %q, %v; want ErrSaltUnavailable", scheme, got, err)
					}
					continue
				}
				if err != nil || got != want {
					t.Errorf("Salt(%s) = %q, %v; want %q", scheme, got, err, want)
				}
			}
		})
	}
}

func TestWPHashVector(t *testing.T) {
	s := NewSalter(standardSalts, nil, nil)
	got, err := s.Hash(context.Background(), "hello", "logged_in")
	if err != nil {
		t.Fatal(err)
	}
	if got != "46476bebb9a8b5b84aacb7b0d9f3e91f" {
		t.Fatalf("wp_hash = %q", got)
	}
}

func TestLocalizedPlaceholder(t *testing.T) {
	s := NewSalter(map[string]string{"NONCE_KEY": "geben Sie hier Ihre Zeichenkette ein", "NONCE_SALT": "n"},
		[]string{"geben Sie hier Ihre Zeichenkette ein"}, mapOptions{"nonce_key": "db"})
	got, err := s.Salt(context.Background(), "nonce")
	if err != nil || got != "dbn" {
		t.Fatalf("Salt = %q, %v; want dbn", got, err)
	}
}

// A salt that is missing is not cached: once WordPress stores it, it is used.
func TestMissingSaltNotCached(t *testing.T) {
	opts := mapOptions{}
	s := NewSalter(map[string]string{"SECRET_KEY": "k"}, nil, opts)
	if _, err := s.Salt(context.Background(), "nonce"); !errors.Is(err, ErrSaltUnavailable) {
		t.Fatalf("err = %v", err)
	}
	opts["nonce_salt"] = "later"
	if got, err := s.Salt(context.Background(), "nonce"); err != nil || got != "klater" {
		t.Fatalf("Salt = %q, %v", got, err)
	}
}

// TestSaltAgainstPHP runs WordPress's own wp_salt()/wp_hash() from the
// installed pluggable.php on every case and compares.
func TestSaltAgainstPHP(t *testing.T) {
	php := requirePHP(t)
	pluggable := testenv.WordPressFile(t, "wp-includes/pluggable.php")
	for _, tc := range saltCases {
		t.Run(tc.name, func(t *testing.T) {
			var schemes []string
			var hashes [][2]string
			for s := range tc.want {
				schemes = append(schemes, s)
				hashes = append(hashes, [2]string{"data|" + s, s})
			}
			opts := tc.options
			if opts == nil {
				opts = map[string]string{}
			}
			in, _ := json.Marshal(map[string]any{"constants": tc.constants, "options": opts, "schemes": schemes, "hash": hashes})
			cmd := exec.Command(php, "testdata/php/wp_salt.php", pluggable)
			cmd.Stdin = strings.NewReader(string(in))
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("php: %v", err)
			}
			var res struct {
				Salts  map[string]*string
				Hashes []*string
			}
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatalf("php output %q: %v", out, err)
			}
			s := NewSalter(tc.constants, nil, mapOptions(tc.options))
			for i, scheme := range schemes {
				got, err := s.Salt(context.Background(), scheme)
				want := res.Salts[scheme]
				if want == nil {
					if !errors.Is(err, ErrSaltUnavailable) {
						t.Errorf("Salt(%s) = %q, %v; PHP would generate a new salt", scheme, got, err)
					}
					continue
				}
				if err != nil || got != *want {
					t.Errorf("Salt(%s) = %q, %v; PHP %q", scheme, got, err, *want)
				}
				h, err := s.Hash(context.Background(), hashes[i][0], scheme)
				if err != nil || res.Hashes[i] == nil || h != *res.Hashes[i] {
					t.Errorf("Hash(%s) = %q, %v; PHP %v", scheme, h, err, res.Hashes[i])
				}
			}
		})
	}
}
