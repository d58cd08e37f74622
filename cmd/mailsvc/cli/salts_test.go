package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/adapters/wordpress/wpconfig"
)

// saltsConfig points the configuration at a wp-config.php that defines the
// given salt constants, with an SQLite database in a fresh data directory.
func saltsConfig(t *testing.T, salts map[string]string) {
	t.Helper()
	dir := standaloneEnv(t)
	var php strings.Builder
	php.WriteString("<?php\ndefine( 'DB_NAME', 'unused' );\ndefine( 'DB_USER', 'unused' );\ndefine( 'DB_PASSWORD', '' );\ndefine( 'DB_HOST', '127.0.0.1:1' );\n")
	for _, name := range wpconfig.SaltNames {
		if v, ok := salts[name]; ok {
			fmt.Fprintf(&php, "define( '%s', '%s' );\n", name, v)
		}
	}
	php.WriteString("$table_prefix = 'wp_';\n")
	path := filepath.Join(t.TempDir(), "wp-config.php")
	if err := os.WriteFile(path, []byte(php.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MAILSVC_WP_CONFIG", path)
	t.Setenv("MAILSVC_DB", "sqlite:"+filepath.Join(dir, "mailsvc.db"))
}

// serveWithSalts runs serve with saltsConfig for at most a few seconds and
// returns its error.
func serveWithSalts(t *testing.T, salts map[string]string) error {
	t.Helper()
	saltsConfig(t, salts)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := Command()
	var out strings.Builder
	cmd.SetArgs([]string{"serve", "--addr", "127.0.0.1:0"})
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	return cmd.ExecuteContext(ctx)
}

// uniqueSalts returns the eight keys and salts with distinct values.
func uniqueSalts() map[string]string {
	m := map[string]string{}
	for i, name := range wpconfig.SaltNames[:8] {
		m[name] = fmt.Sprintf("a real secret %d of sixty-four characters or so, unique to this", i)
	}
	return m
}

// TestServeRefusesPlaceholderSalts: a wp-config.php left with the salts of
// a localized wp-config-sample.php (or one of them) would key the
// encryption of stored secrets from public text; serve stops with an
// error that names the constant and the way out.
func TestServeRefusesPlaceholderSalts(t *testing.T) {
	german := "Füge hier deine Zeichenkette ein"
	t.Run("every salt the German placeholder", func(t *testing.T) {
		salts := map[string]string{}
		for _, name := range wpconfig.SaltNames[:8] {
			salts[name] = german
		}
		err := serveWithSalts(t, salts)
		if err == nil || !strings.Contains(err.Error(), "AUTH_KEY") || !strings.Contains(err.Error(), "placeholder") || !strings.Contains(err.Error(), "MAIL_SVC_ENCRYPTION_KEY") {
			t.Fatalf("serve: %v; want a refusal naming AUTH_KEY, the placeholder and MAIL_SVC_ENCRYPTION_KEY", err)
		}
	})
	for _, p := range []string{"mettez une phrase unique ici", "впишите сюда уникальную фразу", "put your unique phrase here"} {
		t.Run("one salt "+p, func(t *testing.T) {
			salts := uniqueSalts()
			salts["NONCE_SALT"] = p
			err := serveWithSalts(t, salts)
			if err == nil || !strings.Contains(err.Error(), "NONCE_SALT") || !strings.Contains(err.Error(), p) {
				t.Fatalf("serve: %v; want a refusal naming NONCE_SALT and %q", err, p)
			}
		})
	}
	t.Run("an unlisted translation left in every salt", func(t *testing.T) {
		salts := map[string]string{}
		for _, name := range wpconfig.SaltNames[:8] {
			salts[name] = "voeg hier je unieke zin in"
		}
		err := serveWithSalts(t, salts)
		if err == nil || !strings.Contains(err.Error(), "same value") {
			t.Fatalf("serve: %v; want a refusal of salts that share a value", err)
		}
	})
	// The key derivation serve uses (serve itself needs a WordPress site
	// past this point).
	cipher := func(t *testing.T, salts map[string]string) error {
		saltsConfig(t, salts)
		rt, err := readConfig(slog.New(slog.NewTextHandler(io.Discard, nil)), os.Getenv("MAILSVC_WP_CONFIG"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = rt.cipher()
		return err
	}
	t.Run("unique salts key the encryption", func(t *testing.T) {
		if err := cipher(t, uniqueSalts()); err != nil {
			t.Fatalf("cipher with unique salts: %v", err)
		}
	})
	t.Run("MAIL_SVC_ENCRYPTION_KEY keys the encryption instead", func(t *testing.T) {
		t.Setenv("MAIL_SVC_ENCRYPTION_KEY", "a passphrase kept outside wp-config.php")
		salts := map[string]string{}
		for _, name := range wpconfig.SaltNames[:8] {
			salts[name] = german
		}
		if err := cipher(t, salts); err != nil {
			t.Fatalf("cipher with MAIL_SVC_ENCRYPTION_KEY: %v", err)
		}
	})
}
