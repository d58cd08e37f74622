// Package wpconfig reads a WordPress wp-config.php without executing it.
//
// It evaluates the small subset of PHP that configuration files use:
// define() and const, string/number/boolean/null literals, getenv(),
// $_ENV/$_SERVER lookups, the Docker image's getenv_docker(), the
// operators . ?: ?? || && ! == === < > + - * / %, casts, parentheses,
// variables assigned earlier in the file, and if/elseif/else on conditions
// it can evaluate (defined(), isset(), comparisons). Anything else — a
// call it does not know, an include of another file, a condition it cannot
// evaluate — is skipped with a Warning naming its line, and reading goes
// on. Reading stops at `require_once ABSPATH . 'wp-settings.php';`:
// WordPress has booted by then, so defines after it get a warning and are
// not read.
package wpconfig

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// Warning is something the reader skipped or doubts, with its line.
type Warning struct {
	Line    int
	Message string
}

// String renders the warning as "line N: message".
func (w Warning) String() string {
	if w.Line == 0 {
		return w.Message
	}
	return fmt.Sprintf("line %d: %s", w.Line, w.Message)
}

// File is what a wp-config.php defines.
type File struct {
	// Path is the file read, "" for Parse.
	Path string
	// Defines maps each constant's name to its value; Order lists the
	// names in the order they were defined.
	Defines map[string]Value
	Order   []string
	// TablePrefix is the value of $table_prefix ("" when the file does not
	// set it), and TablePrefixLine where it was set.
	TablePrefix     string
	TablePrefixLine int
	// StopLine is the line of the require of wp-settings.php, 0 if none.
	StopLine int
	// MarkerLine is the line of the "That's all, stop editing" comment, 0
	// if none.
	MarkerLine int
	// Warnings lists what could not be read, in file order.
	Warnings []Warning
}

// ParseFile reads the wp-config.php at path. getenv resolves getenv() and
// $_ENV/$_SERVER (typically os.LookupEnv; nil for an empty environment).
// __DIR__ and __FILE__ resolve against the file's absolute path. The error
// is only for a file that cannot be read; what cannot be parsed is in
// Warnings.
func ParseFile(path string, getenv func(string) (string, bool)) (*File, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read wp-config: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	f := parse(src, abs, getenv)
	f.Path = path
	return f, nil
}

// Parse reads wp-config.php source. As with ParseFile, what cannot be
// read is in Warnings; __DIR__ and __FILE__ are unknown.
func Parse(src []byte, getenv func(string) (string, bool)) *File {
	return parse(src, "", getenv)
}

func parse(src []byte, path string, getenv func(string) (string, bool)) *File {
	f := &File{Defines: map[string]Value{}}
	lx := &lexer{src: string(src), line: 1}
	toks := lx.tokens()
	if !lx.sawOpenTag {
		f.Warnings = append(f.Warnings, Warning{Line: 1, Message: "no <?php open tag: PHP would print this file, not run it"})
		return f
	}
	in := &interp{toks: toks, file: f, getenv: getenv, path: path, vars: map[string]Value{}, marker: lx.markerLine}
	in.run()
	f.MarkerLine = lx.markerLine
	return f
}

// Lookup returns a constant's value.
func (f *File) Lookup(name string) (Value, bool) {
	v, ok := f.Defines[name]
	return v, ok
}

// Str returns a constant's PHP string form, "" when undefined.
func (f *File) Str(name string) string {
	return f.Defines[name].String()
}

// ConstantStrings returns every constant as a string for
// core.NewConstants: PHP's string form, except that booleans become
// "true" and "false" (PHP's "" for false would count as an empty,
// non-overriding constant and lose a pinned false) and null becomes "".
func (f *File) ConstantStrings() map[string]string {
	out := make(map[string]string, len(f.Defines))
	for k, v := range f.Defines {
		if v.Kind == Bool {
			out[k] = strconv.FormatBool(v.Bool)
			continue
		}
		out[k] = v.String()
	}
	return out
}

// SaltNames are the constants wp_salt() reads, byte for byte: the eight
// keys and salts of wp-config-sample.php and the legacy SECRET_KEY and
// SECRET_SALT.
var SaltNames = []string{
	"AUTH_KEY", "SECURE_AUTH_KEY", "LOGGED_IN_KEY", "NONCE_KEY",
	"AUTH_SALT", "SECURE_AUTH_SALT", "LOGGED_IN_SALT", "NONCE_SALT",
	"SECRET_KEY", "SECRET_SALT",
}

// Salts returns the defined salt constants (see SaltNames) by name.
func (f *File) Salts() map[string]string {
	out := map[string]string{}
	for _, n := range SaltNames {
		if v, ok := f.Defines[n]; ok {
			out[n] = v.String()
		}
	}
	return out
}

// DBHost is DB_HOST split as WordPress's wpdb::parse_db_host does.
type DBHost struct {
	Host   string // host name or IP, without brackets
	Port   int    // 0 when not given
	Socket string // unix socket path, "" when not given
}

// ParseDBHost splits a DB_HOST value: "host", "host:port", "host:/socket",
// "host:port:/socket", "[::1]:3306", ":/socket" and mysqli's "p:" prefix
// for persistent connections.
func ParseDBHost(s string) (DBHost, error) {
	s = strings.TrimSpace(strings.TrimPrefix(s, "p:"))
	var h DBHost
	if i := strings.Index(s, ":/"); i >= 0 {
		h.Socket, s = s[i+1:], s[:i]
	}
	host, port := s, ""
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return h, fmt.Errorf("DB_HOST %q: unclosed [", s)
		}
		host, port = s[1:end], strings.TrimPrefix(s[end+1:], ":")
	} else if strings.Count(s, ":") == 1 {
		host, port, _ = strings.Cut(s, ":")
	} else if strings.Count(s, ":") > 1 && net.ParseIP(s) == nil {
		return h, fmt.Errorf("DB_HOST %q: cannot split host and port", s)
	}
	h.Host = host
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return h, fmt.Errorf("DB_HOST %q: invalid port %q", s, port)
		}
		h.Port = n
	}
	return h, nil
}

// MySQLDSN builds a go-sql-driver/mysql DSN from DB_NAME, DB_USER,
// DB_PASSWORD, DB_HOST, DB_CHARSET and DB_COLLATE. A socket in DB_HOST
// gives a unix connection; otherwise TCP to the host (localhost included;
// default port 3306). DB_CHARSET utf8 is upgraded to utf8mb4 as WordPress
// does on servers that support it; the default is utf8mb4. The DSN has
// parseTime=true. Errors never contain the password.
func (f *File) MySQLDSN() (string, error) {
	name := f.Str("DB_NAME")
	if name == "" {
		return "", fmt.Errorf("wp-config: DB_NAME is not defined")
	}
	cfg := mysql.NewConfig()
	cfg.DBName = name
	cfg.User = f.Str("DB_USER")
	cfg.Passwd = f.Str("DB_PASSWORD")
	hostValue := f.Str("DB_HOST")
	if hostValue == "" {
		hostValue = "localhost"
	}
	h, err := ParseDBHost(hostValue)
	if err != nil {
		return "", fmt.Errorf("wp-config: %w", err)
	}
	if h.Socket != "" {
		cfg.Net, cfg.Addr = "unix", h.Socket
	} else {
		host := h.Host
		if host == "" {
			host = "localhost"
		}
		port := h.Port
		if port == 0 {
			port = 3306
		}
		cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(host, strconv.Itoa(port))
	}
	charset := strings.ToLower(f.Str("DB_CHARSET"))
	if charset == "" || charset == "utf8" {
		charset = "utf8mb4"
	}
	collation := f.Str("DB_COLLATE")
	if charset == "utf8mb4" && strings.HasPrefix(collation, "utf8_") {
		// As wpdb::determine_charset: utf8_general_ci becomes
		// utf8mb4_unicode_ci, any other utf8_X becomes utf8mb4_X.
		if collation == "utf8_general_ci" {
			collation = "utf8mb4_unicode_ci"
		} else {
			collation = "utf8mb4_" + strings.TrimPrefix(collation, "utf8_")
		}
	}
	if err := cfg.Apply(mysql.Charset(charset, collation)); err != nil {
		return "", fmt.Errorf("wp-config: DB_CHARSET: %w", err)
	}
	cfg.ParseTime = true
	return cfg.FormatDSN(), nil
}
