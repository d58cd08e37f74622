package cli

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/mailsvc/mailsvc/adapters/crypto"
	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/wordpress"
	"github.com/mailsvc/mailsvc/adapters/wordpress/wpconfig"
	"github.com/mailsvc/mailsvc/core"
)

// runtime is what every command needs: the configuration read once at
// boot and the open database.
type runtime struct {
	log     *slog.Logger
	consts  *core.Constants
	wp      *wpconfig.File // nil in standalone mode
	db      *store.DB
	dataDir string
	prefix  string
	// prefixFromWP is set when prefix is wp-config.php's $table_prefix.
	prefixFromWP bool
	// wpConfigPath is MAILSVC_WP_CONFIG ("" standalone).
	wpConfigPath string
	// dsn is the database in use: MAILSVC_DB, else the one wp-config.php
	// names, else the SQLite file in the data directory.
	dsn string
	// filters is the site's published filters, read once for every part
	// that applies them (siteFilters).
	filters *wordpress.PublishedFilters
}

// standalone reports whether the service runs without WordPress, on
// WordPress-shaped tables of its own.
func (rt *runtime) standalone() bool { return rt.wp == nil }

// boot reads the configuration (wp-config.php when MAILSVC_WP_CONFIG is
// set, then the environment), opens the database and migrates it.
func boot(ctx context.Context, log *slog.Logger) (*runtime, error) {
	return bootWith(ctx, log, os.Getenv("MAILSVC_WP_CONFIG"), store.Open)
}

// bootReadOnly is boot for the commands that only look: the database is
// opened as it is (store.OpenExisting), never migrated, nothing created.
// rt.db.SchemaVersion says whether the service is installed there; an
// SQLite file that does not exist is store.ErrNotInstalled.
func bootReadOnly(ctx context.Context, log *slog.Logger) (*runtime, error) {
	return bootWith(ctx, log, os.Getenv("MAILSVC_WP_CONFIG"), store.OpenExisting)
}

// bootWith is boot for the wp-config.php at wpConfig ("" standalone),
// with the given way to open the database.
func bootWith(ctx context.Context, log *slog.Logger, wpConfig string, open func(context.Context, string, string, *slog.Logger) (*store.DB, error)) (*runtime, error) {
	rt, err := readConfig(log, wpConfig)
	if err != nil {
		return nil, err
	}
	db, err := open(ctx, rt.dsn, rt.prefix, log)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", core.MaskDSN(rt.dsn), err)
	}
	rt.db = db
	return rt, nil
}

// readConfig reads the configuration of the site whose wp-config.php is
// at path ("" standalone: the environment alone) and works out the
// database and the table prefix in use, without opening anything. It
// reads the environment but never writes it, so the runtimes of several
// sites coexist in one process.
func readConfig(log *slog.Logger, path string) (*runtime, error) {
	rt := &runtime{log: log}
	var defines map[string]string
	if path != "" {
		f, err := wpconfig.ParseFile(path, os.LookupEnv)
		if err != nil {
			return nil, fmt.Errorf("read wp-config %s: %w", path, err)
		}
		for _, w := range f.Warnings {
			log.Warn("wp-config.php could not be fully read", "path", path, "line", w.Line, "problem", w.Message)
		}
		rt.wp, rt.wpConfigPath = f, path
		defines = f.ConstantStrings()
	}
	consts, warnings := core.NewConstants(defines, os.LookupEnv)
	for _, w := range warnings {
		log.Warn("configuration", "problem", w)
	}
	rt.consts = consts

	rt.dataDir = consts.String("MAILSVC_DATA_DIR")
	rt.prefix = consts.String("MAILSVC_TABLE_PREFIX")
	if _, _, set := consts.Lookup("MAILSVC_TABLE_PREFIX"); !set && rt.wp != nil && rt.wp.TablePrefix != "" {
		rt.prefix = rt.wp.TablePrefix
		rt.prefixFromWP = true
	}
	dsn := consts.String("MAILSVC_DB")
	if _, _, set := consts.Lookup("MAILSVC_DB"); !set {
		if rt.wp != nil {
			mysqlDSN, err := rt.wp.MySQLDSN()
			if err != nil {
				return nil, fmt.Errorf("database settings of %s: %w", rt.wpConfigPath, err)
			}
			dsn = "mysql:" + mysqlDSN
		} else {
			dsn = "sqlite:" + filepath.Join(rt.dataDir, "mailsvc.db")
		}
	}
	rt.dsn = dsn
	return rt, nil
}

// cipher returns the cipher for secrets at rest: keyed by
// MAIL_SVC_ENCRYPTION_KEY when defined, else derived from the salts of
// wp-config.php, else (standalone) a key generated once and kept in the
// data directory. A salt constant that holds a placeholder is an error:
// the key would come from public text.
func (rt *runtime) cipher() (*crypto.Cipher, error) {
	if v, _, ok := rt.consts.Lookup("MAIL_SVC_ENCRYPTION_KEY"); ok {
		return crypto.NewCipher(crypto.KeyFromPassphrase(v))
	}
	salts, err := rt.salts()
	if err != nil {
		return nil, err
	}
	if len(salts) > 0 {
		return crypto.NewCipher(crypto.KeyFromSalts(salts...))
	}
	key, err := loadOrCreateKey(filepath.Join(rt.dataDir, "encryption.key"))
	if err != nil {
		return nil, err
	}
	return crypto.NewCipher(key)
}

// encryptionSaltNames are the salt constants that key the encryption of
// secrets at rest, in the order they are used.
var encryptionSaltNames = []string{"AUTH_KEY", "SECURE_AUTH_KEY", "LOGGED_IN_KEY", "NONCE_KEY", "AUTH_SALT", "SECURE_AUTH_SALT", "LOGGED_IN_SALT", "NONCE_SALT", "SECRET_KEY"}

// salts returns the salt constants of wp-config.php that key the
// encryption, in a fixed order; empty ones are left out. A constant that
// holds a placeholder of wp-config-sample.php (English or localized,
// wordpress.SaltPlaceholders) or the same value as another salt constant
// (what a translated sample file leaves in all eight) is an error naming
// it.
func (rt *runtime) salts() ([]string, error) {
	if rt.wp == nil {
		return nil, nil
	}
	dup := wordpress.DuplicatedSalts(rt.wp.Salts())
	var out []string
	for _, name := range encryptionSaltNames {
		v, ok := rt.wp.Defines[name]
		if !ok {
			continue
		}
		s := v.String()
		switch {
		case s == "":
			continue
		case wordpress.IsSaltPlaceholder(s):
			return nil, fmt.Errorf("wp-config.php %s: %s still holds the placeholder %q of wp-config-sample.php, public text that would key the encryption of stored secrets: replace the keys and salts with ones from https://api.wordpress.org/secret-key/1.1/salt/, or define MAIL_SVC_ENCRYPTION_KEY",
				rt.wpConfigPath, name, s)
		case dup[s]:
			return nil, fmt.Errorf("wp-config.php %s: %s holds the same value as another key or salt, which WordPress ignores (a placeholder of wp-config-sample.php is left in all of them): give each key and salt its own value from https://api.wordpress.org/secret-key/1.1/salt/, or define MAIL_SVC_ENCRYPTION_KEY",
				rt.wpConfigPath, name)
		}
		out = append(out, s)
	}
	return out, nil
}

// saltConstants returns every salt constant wp-config.php defines, for
// WordPress's own wp_salt() rules.
func (rt *runtime) saltConstants() map[string]string {
	if rt.wp == nil {
		return map[string]string{}
	}
	return rt.wp.Salts()
}

// loadOrCreateKey reads a hex key file, creating it with a new random key
// (mode 0600) the first time.
func loadOrCreateKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		key, err := hex.DecodeString(strings.TrimSpace(string(b)))
		if err != nil || len(key) != 32 {
			return nil, fmt.Errorf("encryption key file %s is corrupt", path)
		}
		return key, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read encryption key: %w", err)
	}
	key, err := crypto.GenerateKey()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return loadOrCreateKey(path) // another process created it first
	} else if err != nil {
		return nil, fmt.Errorf("create encryption key: %w", err)
	}
	defer f.Close()
	if _, err := f.WriteString(hex.EncodeToString(key) + "\n"); err != nil {
		return nil, fmt.Errorf("write encryption key: %w", err)
	}
	return key, f.Sync()
}
