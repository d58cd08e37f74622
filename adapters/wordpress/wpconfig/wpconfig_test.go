package wpconfig

import (
	"github.com/mailsvc/mailsvc/internal/testenv"

	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// want is a constant's expected kind and PHP string form.
type want struct {
	kind Kind
	str  string
}

func s(v string) want  { return want{String, v} }
func i(v string) want  { return want{Int, v} }
func fl(v string) want { return want{Float, v} }
func b(v bool) want {
	if v {
		return want{Bool, "1"}
	}
	return want{Bool, ""}
}

var null = want{Null, ""}

// parseCase is one wp-config snippet. Unless noPHP is set, the same
// snippet run by the real PHP interpreter must define the same constants.
type parseCase struct {
	name     string
	src      string
	env      map[string]string
	defines  map[string]want
	prefix   string
	warnings []string // substrings, in order; nil for none
	noPHP    bool     // PHP itself fails or differs on purpose
}

var parseCases = []parseCase{
	{name: "single quotes and spacing", src: `<?php
define('A', 'one');
define( "B", 'two' );
DEFINE ( 'C' , 'it\'s a \\ back\slash \n' ) ;`,
		defines: map[string]want{"A": s("one"), "B": s("two"), "C": s(`it's a \ back\slash \n`)}},
	{name: "double-quoted escapes", src: `<?php
define('D', "tab\there\nnl \\ \" \$x \x41\x4a \101\60 \u{1F600} \u{e9} \q \xZ");`,
		defines: map[string]want{"D": s("tab\there\nnl \\ \" $x AJ A0 \U0001F600 é \\q \\xZ")}},
	{name: "integers", src: `<?php
define('DEC', 42); define('NEG', -7); define('HEX', 0x1F); define('OCT', 0755);
define('OCT8', 0o17); define('BIN', 0b1010); define('SEP', 1_000_000); define('BIG', 9223372036854775807);
define('OVER', 9223372036854775808); define('HEXSEP', 0xFF_FF);`,
		defines: map[string]want{"DEC": i("42"), "NEG": i("-7"), "HEX": i("31"), "OCT": i("493"), "OCT8": i("15"),
			"BIN": i("10"), "SEP": i("1000000"), "BIG": i("9223372036854775807"), "OVER": fl("9.2233720368548E+18"), "HEXSEP": i("65535")}},
	{name: "floats", src: `<?php
define('F1', 1.5); define('F2', .25); define('F3', 1e3); define('F4', 2.5E-7); define('F5', 1_0.5);
define('F6', 0.1 + 0.2); define('F7', 1e15); define('F8', 123456789012345.678); define('F9', -0.0001);
define('F10', 7 / 2); define('F11', 6 / 3); define('F12', 1.0);`,
		defines: map[string]want{"F1": fl("1.5"), "F2": fl("0.25"), "F3": fl("1000"), "F4": fl("2.5E-7"), "F5": fl("10.5"),
			"F6": fl("0.3"), "F7": fl("1.0E+15"), "F8": fl("1.2345678901235E+14"), "F9": fl("-0.0001"),
			"F10": fl("3.5"), "F11": i("2"), "F12": fl("1")}},
	{name: "float formatting", src: `<?php
define('G1', 1 / 3); define('G2', 2 / 3); define('G3', 0.00001); define('G4', -1.5e-10); define('G5', 99999999999999.5);
define('G6', 1e14); define('G7', 1e13); define('G8', 0.0001); define('G9', 1e400); define('G10', -1e400); define('G11', 123456.789e3);`,
		defines: map[string]want{"G1": fl("0.33333333333333"), "G2": fl("0.66666666666667"), "G3": fl("1.0E-5"), "G4": fl("-1.5E-10"),
			"G5": fl("1.0E+14"), "G6": fl("1.0E+14"), "G7": fl("10000000000000"), "G8": fl("0.0001"), "G9": fl("INF"), "G10": fl("-INF"),
			"G11": fl("123456789")}},
	{name: "booleans and null, any case", src: `<?php
define('T', true); define('T2', TRUE); define('FA', False); define('N', NULL); define('N2', null);`,
		defines: map[string]want{"T": b(true), "T2": b(true), "FA": b(false), "N": null, "N2": null}},
	{name: "comments of every kind", src: `<?php
// define('X1', 'no');
# define('X2', 'no');
/* define('X3', 'no'); */
/**
 * define('X4', 'no');
 */
define('Y', /* inline */ 'yes'); // trailing
define('Z', 'a // not a comment # nor this /* */');`,
		defines: map[string]want{"Y": s("yes"), "Z": s("a // not a comment # nor this /* */")}},
	{name: "concatenation and parentheses", src: `<?php
define('BASE', 'https://example.com');
define('URL', BASE . '/wp' . ('-' . 'admin'));
define('NUM', 'v' . 2 . '.' . 1.5);
define('SUM', (1 + 2) * 3 - 4 % 3);`,
		defines: map[string]want{"BASE": s("https://example.com"), "URL": s("https://example.com/wp-admin"), "NUM": s("v2.1.5"), "SUM": i("8")}},
	{name: "getenv with defaults", src: `<?php
define('E1', getenv('SET_VAR'));
define('E2', getenv('UNSET_VAR'));
define('E3', getenv('UNSET_VAR') ?: 'fallback');
define('E4', getenv('EMPTY_VAR') ?: 'fallback');
define('E5', getenv('SET_VAR') ?: 'fallback');
define('E6', $_ENV['SET_VAR'] ?? 'dflt');
define('E7', $_SERVER['UNSET_VAR'] ?? 'dflt');
define('E8', (int) getenv('PORT_VAR'));
define('E9', filter_var(getenv('BOOL_VAR'), FILTER_VALIDATE_BOOLEAN));
define('E10', \getenv('SET_VAR'));`,
		env: map[string]string{"SET_VAR": "hello", "EMPTY_VAR": "", "PORT_VAR": "587", "BOOL_VAR": "yes"},
		defines: map[string]want{"E1": s("hello"), "E2": b(false), "E3": s("fallback"), "E4": s("fallback"), "E5": s("hello"),
			"E6": s("hello"), "E7": s("dflt"), "E8": i("587"), "E9": b(true), "E10": s("hello")},
		noPHP: true, // $_ENV is empty under the default variables_order
	},
	{name: "getenv compared", src: `<?php
define('E1', getenv('SET_VAR'));
define('E3', getenv('UNSET_VAR') ?: 'fallback');
define('E4', getenv('EMPTY_VAR') ?: 'fallback');
define('E8', (int) getenv('PORT_VAR'));
define('E9', filter_var(getenv('BOOL_VAR'), FILTER_VALIDATE_BOOLEAN));
define('E11', getenv('UNSET_VAR') === false);`,
		env:     map[string]string{"SET_VAR": "hello", "EMPTY_VAR": "", "PORT_VAR": "587", "BOOL_VAR": "yes"},
		defines: map[string]want{"E1": s("hello"), "E3": s("fallback"), "E4": s("fallback"), "E8": i("587"), "E9": b(true), "E11": b(true)}},
	{name: "table prefix and variables", src: `<?php
$table_prefix  = 'wp' . '2_';
$host = "db.internal";
define('DB_HOST', "$host:3307");
define('DB_NAME', "{$host}-x ${host}");`,
		prefix:  "wp2_",
		defines: map[string]want{"DB_HOST": s("db.internal:3307"), "DB_NAME": s("db.internal-x db.internal")},
		noPHP:   true, // PHP 8.2 deprecates ${var}; the value is the same
	},
	{name: "if not defined wrappers", src: `<?php
define('A', 'first');
if ( ! defined( 'A' ) ) {
	define( 'A', 'second' );
}
if ( ! defined( 'B' ) ) define( 'B', 'only' );
defined('A') || define('A', 'third');
defined('C') or define('C', 'c');
if (defined('B')) { define('D', 'then'); } else { define('D', 'else'); }
if (defined('NOPE')) { define('E', 'then'); } elseif (defined('A')) { define('E', 'elseif'); } else { define('E', 'else'); }
if (defined('NOPE')): define('F', 'then'); else: define('F', 'alt-else'); endif;
if (getenv('APP_ENV') == 'dev') { define('G', 'dev'); } else if (getenv('APP_ENV') === 'prod') { define('G', 'prod'); }`,
		env:     map[string]string{"APP_ENV": "prod"},
		defines: map[string]want{"A": s("first"), "B": s("only"), "C": s("c"), "D": s("then"), "E": s("elseif"), "F": s("alt-else"), "G": s("prod")}},
	{name: "redefinition keeps the first", src: `<?php
define('A', 'first');
define('A', 'second');`,
		defines:  map[string]want{"A": s("first")},
		warnings: []string{"line 3: A is already defined on line 2; PHP keeps the first value"},
	},
	{name: "const statement and constant()", src: `<?php
const K1 = 'k', K2 = 2;
define('K3', constant('K1') . K2);`,
		defines: map[string]want{"K1": s("k"), "K2": i("2"), "K3": s("k2")}},
	{name: "unknown function is skipped with its line", src: `<?php
define('A', 'a');
define('B', some_function('x'));
define('C', 'c');`,
		defines:  map[string]want{"A": s("a"), "C": s("c")},
		warnings: []string{"line 3: function some_function() is not evaluated; statement skipped"},
		noPHP:    true,
	},
	{name: "include of another file", src: `<?php
require_once __DIR__ . '/local-config.php';
define('A', 'a');`,
		defines:  map[string]want{"A": s("a")},
		warnings: []string{"line 2: require_once of another file is not followed"},
		noPHP:    true,
	},
	{name: "unevaluable condition skips its branches", src: `<?php
if ( file_exists( '/etc/x' ) ) {
	define( 'A', 'a' );
} else {
	define( 'A', 'b' );
}
define('C', 'c');`,
		defines:  map[string]want{"C": s("c")},
		warnings: []string{"line 2: cannot evaluate the condition of this if (function file_exists() is not evaluated)"},
		noPHP:    true,
	},
	{name: "syntax error recovers at the next statement", src: `<?php
define('A', 'a');
define('B', 'b' 'c');
define('C', 'c');
define('D', 'unterminated);
`,
		defines:  map[string]want{"A": s("a"), "C": s("c")},
		warnings: []string{`line 3: expected ")", found a string`, "line 5: cannot read unterminated single-quoted string"},
		noPHP:    true,
	},
	{name: "stop at wp-settings", src: `<?php
define('A', 'a');
/* That's all, stop editing! Happy publishing. */
define('MAILSVC_LATE', 'x');
define('WP_LATE', 'y');
require_once ABSPATH . 'wp-settings.php';
define('AFTER', 'z');
define('MAILSVC_AFTER', 'z');`,
		defines: map[string]want{"A": s("a"), "MAILSVC_LATE": s("x"), "WP_LATE": s("y")},
		warnings: []string{`line 4: MAILSVC_LATE is defined below the "stop editing" line`,
			"line 7: AFTER is defined after wp-settings.php is loaded; it is not read",
			"line 8: MAILSVC_AFTER is defined after wp-settings.php is loaded"},
		noPHP: true,
	},
	{name: "close tag and inline text", src: `Some text <?php define('A', 'a') ?>
more text <?php define('B', 1 ?>`,
		defines:  map[string]want{"A": s("a")},
		warnings: []string{`line 2: expected ")", found ';'`},
		noPHP:    true,
	},
	{name: "heredoc and nowdoc", src: "<?php\n$v = 'x';\ndefine('H', <<<EOT\n  a $v \\t \"q\"\n  b\n  EOT);\ndefine('N', <<<'EOT'\nraw $v \\t\nEOT\n);",
		defines: map[string]want{"H": s("a x \t \"q\"\nb"), "N": s("raw $v \\t")}},
	{name: "casts and comparisons", src: `<?php
define('C1', (bool) '0'); define('C2', (string) false); define('C3', (int) '12abc'); define('C4', (float) '1.5');
define('C5', '10' == '1e1'); define('C6', 0 == 'a'); define('C7', null == false); define('C8', '1' === 1);
define('C9', 2 < 10); define('C10', '2' < '10'); define('C11', 'abc' < 'abd'); define('C12', !0);
define('C13', (integer) 3.99); define('C14', -PHP_INT_MAX - 1); define('C15', PHP_INT_MAX + 1);`,
		defines: map[string]want{"C1": b(false), "C2": s(""), "C3": i("12"), "C4": fl("1.5"), "C5": b(true), "C6": b(false),
			"C7": b(true), "C8": b(false), "C9": b(true), "C10": b(true), "C11": b(true), "C12": b(true), "C13": i("3"),
			"C14": i("-9223372036854775808"), "C15": fl("9.2233720368548E+18")}},
	{name: "ternary and coalesce", src: `<?php
define('T1', defined('NOPE') ? 'yes' : 'no');
define('T2', null ?? 'd');
define('T3', 0 ?: 'zero');
$x = null;
define('T4', $x ?? 'unset');
define('T5', isset($x) ? 'set' : 'not set');
define('T6', empty($x));`,
		defines: map[string]want{"T1": s("no"), "T2": s("d"), "T3": s("zero"), "T4": s("unset"), "T5": s("not set"), "T6": b(true)}},
	{name: "no open tag", src: `define('A', 'a');`,
		defines:  map[string]want{},
		warnings: []string{"line 1: no <?php open tag"},
		noPHP:    true, // PHP prints it
	},
	{name: "side-effect calls are ignored", src: `<?php
@ini_set( 'display_errors', 0 );
error_reporting(E_ALL);
define('A', 'a');`,
		defines: map[string]want{"A": s("a")},
	},
}

func TestParse(t *testing.T) {
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			f := Parse([]byte(tc.src), envOf(tc.env))
			checkDefines(t, f, tc.defines)
			if f.TablePrefix != tc.prefix {
				t.Errorf("TablePrefix = %q, want %q", f.TablePrefix, tc.prefix)
			}
			checkWarnings(t, f.Warnings, tc.warnings)
		})
	}
}

func checkDefines(t *testing.T, f *File, defs map[string]want) {
	t.Helper()
	got := map[string]want{}
	for k, v := range f.Defines {
		got[k] = want{v.Kind, v.String()}
	}
	if !reflect.DeepEqual(got, defs) {
		t.Errorf("defines:\n got %v\nwant %v", got, defs)
	}
	if len(f.Order) != len(f.Defines) {
		t.Errorf("Order has %d names, Defines %d", len(f.Order), len(f.Defines))
	}
}

func checkWarnings(t *testing.T, got []Warning, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("warnings = %v, want %d matching %q", got, len(want), want)
	}
	for n, w := range want {
		if !strings.Contains(got[n].String(), w) {
			t.Errorf("warning %d = %q, want it to contain %q", n, got[n].String(), w)
		}
	}
}

// phpDump is run by the real PHP interpreter: it includes the config and
// prints each user constant as name, type and base64 of its string form.
const phpDump = `<?php
error_reporting(0);
include $argv[1];
foreach (get_defined_constants(true)['user'] ?? [] as $k => $v) {
	echo $k, "\t", gettype($v), "\t", base64_encode((string) $v), "\n";
}
echo "\$table_prefix\t", gettype($table_prefix ?? null), "\t", base64_encode((string) ($table_prefix ?? '')), "\n";
`

var phpTypes = map[string]Kind{"string": String, "integer": Int, "double": Float, "boolean": Bool, "NULL": Null}

// TestParseAgainstPHP runs every parse case that PHP can run through the
// real interpreter and checks that it defines exactly what the reader
// read.
func TestParseAgainstPHP(t *testing.T) {
	php := testenv.PHP(t)
	dir := t.TempDir()
	dump := filepath.Join(dir, "dump.php")
	if err := os.WriteFile(dump, []byte(phpDump), 0o600); err != nil {
		t.Fatal(err)
	}
	for n, tc := range parseCases {
		if tc.noPHP {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			cfg := filepath.Join(dir, "config"+string(rune('a'+n))+".php")
			if err := os.WriteFile(cfg, []byte(tc.src), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(php, "-n", dump, cfg)
			cmd.Env = []string{"PATH=/usr/bin:/bin"}
			for k, v := range tc.env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("php: %v\n%s", err, out)
			}
			fromPHP := map[string]want{}
			prefix := ""
			for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
				parts := strings.Split(line, "\t")
				if len(parts) != 3 {
					t.Fatalf("php printed %q", line)
				}
				val, _ := base64.StdEncoding.DecodeString(parts[2])
				if parts[0] == "$table_prefix" {
					prefix = string(val)
					continue
				}
				fromPHP[parts[0]] = want{phpTypes[parts[1]], string(val)}
			}
			f := Parse([]byte(tc.src), envOf(tc.env))
			checkDefines(t, f, fromPHP)
			if f.TablePrefix != prefix {
				t.Errorf("TablePrefix = %q, PHP has %q", f.TablePrefix, prefix)
			}
		})
	}
}

func TestParseFileSamples(t *testing.T) {
	salts := []string{"AUTH_KEY", "SECURE_AUTH_KEY", "LOGGED_IN_KEY", "NONCE_KEY", "AUTH_SALT", "SECURE_AUTH_SALT", "LOGGED_IN_SALT", "NONCE_SALT"}
	tests := []struct {
		path      string
		env       map[string]string
		dsn       string
		nSalts    int
		prefix    string
		stop      int
		debug     want
		warnings  []string
		needsFile bool
		// stopByRelease replaces stop for a file of the WordPress under
		// test: the line for each release CI runs.
		stopByRelease map[string]int
	}{
		{path: "testdata/wp-config-sample.php", dsn: "wp_user:p@ss'w\"rd\\x@tcp(127.0.0.1:3307)/wordpress?charset=utf8mb4&collation=utf8mb4_unicode_ci&parseTime=true",
			nSalts: 8, prefix: "site1_", stop: 99, debug: b(false)},
		// The sample of the WordPress under test (testenv.WordPressDir);
		// 7.1's has six more lines of comment on $table_prefix.
		{path: "wp-config-sample.php", dsn: "username_here:password_here@tcp(localhost:3306)/database_name_here?charset=utf8mb4&parseTime=true",
			nSalts: 8, prefix: "wp_", stopByRelease: map[string]int{"6.1": 96, "7.1": 102}, debug: b(false), needsFile: true},
		{path: "testdata/wp-config-docker.php", dsn: "example username:example password@tcp(mysql:3306)/wordpress?charset=utf8mb4&parseTime=true",
			nSalts: 2, prefix: "wp_", stop: 53, debug: b(false)},
		{path: "testdata/wp-config-docker.php", env: map[string]string{"WORDPRESS_DB_HOST": "db:/run/mysqld/mysqld.sock", "WORDPRESS_DEBUG": "1", "WORDPRESS_TABLE_PREFIX": "dk_", "WORDPRESS_CONFIG_EXTRA": "define('X', 1);"},
			dsn: "example username:example password@unix(/run/mysqld/mysqld.sock)/wordpress?charset=utf8mb4&parseTime=true", nSalts: 2, prefix: "dk_", stop: 53, debug: b(true),
			warnings: []string{"line 44: 'eval' is not evaluated"}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			path := tt.path
			if tt.needsFile {
				path = testenv.WordPressFile(t, tt.path)
			}
			if tt.stopByRelease != nil {
				release := testenv.WordPressRelease(t)
				stop, ok := tt.stopByRelease[release]
				if !ok {
					t.Fatalf("no expected stop line of %s for WordPress %s", tt.path, release)
				}
				tt.stop = stop
			}
			f, err := ParseFile(path, envOf(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			checkWarnings(t, f.Warnings, tt.warnings)
			dsn, err := f.MySQLDSN()
			if err != nil || dsn != tt.dsn {
				t.Errorf("MySQLDSN() = %q, %v; want %q", dsn, err, tt.dsn)
			}
			if got := len(f.Salts()); got != tt.nSalts {
				t.Errorf("got %d salts, want %d", got, tt.nSalts)
			}
			for _, name := range salts[:tt.nSalts/2] {
				if _, ok := f.Salts()[name]; !ok && tt.nSalts == 8 {
					t.Errorf("salt %s missing", name)
				}
			}
			if f.TablePrefix != tt.prefix || f.StopLine != tt.stop {
				t.Errorf("prefix, stop = %q, %d; want %q, %d", f.TablePrefix, f.StopLine, tt.prefix, tt.stop)
			}
			if got := (want{f.Defines["WP_DEBUG"].Kind, f.Defines["WP_DEBUG"].String()}); got != tt.debug {
				t.Errorf("WP_DEBUG = %v, want %v", got, tt.debug)
			}
			abs, _ := filepath.Abs(filepath.Dir(path))
			if got := f.Str("ABSPATH"); got != abs+"/" {
				t.Errorf("ABSPATH = %q, want %q", got, abs+"/")
			}
		})
	}
}

func TestSampleSaltsAndConstants(t *testing.T) {
	f, err := ParseFile("testdata/wp-config-sample.php", nil)
	if err != nil {
		t.Fatal(err)
	}
	// Salts are read byte for byte, escapes included.
	if got, want := f.Salts()["AUTH_KEY"], `k#5]Y\+%x'p{N<|Qb/L^7zOu$~c-8@w`; got != want {
		t.Errorf("AUTH_KEY = %q, want %q", got, want)
	}
	got := f.ConstantStrings()
	wantSome := map[string]string{
		"MAILSVC_SMTP_PASSWORD":         "smtp-secret",
		"MAIL_SVC_DEBUG_HTTP":           "true",
		"MAIL_SVC_PRESERVE_DATA":        "false",
		"MAILSVC_AWS_SES_SMTP_PORT":     "587",
		"MAILSVC_AWS_SES_ENABLE_V2_API": "true",
		"WP_DEBUG":                      "false",
	}
	for k, v := range wantSome {
		if got[k] != v {
			t.Errorf("ConstantStrings()[%s] = %q, want %q", k, got[k], v)
		}
	}
}

func TestParseDeepNesting(t *testing.T) {
	tests := []struct {
		name, src, warning string
	}{
		{"parentheses", "<?php define('A', " + strings.Repeat("(", 100000) + "1" + strings.Repeat(")", 100000) + ");\ndefine('B', 'b');", "line 1: expression nested too deeply"},
		{"negations", "<?php define('A', " + strings.Repeat("!", 100000) + "1);\ndefine('B', 'b');", "line 1: expression nested too deeply"},
		{"blocks", "<?php " + strings.Repeat("{", 100000) + "\ndefine('B', 'b');", "line 1: statements nested too deeply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Parse([]byte(tt.src), nil)
			if len(f.Warnings) == 0 || !strings.Contains(f.Warnings[0].String(), tt.warning) {
				t.Fatalf("warnings = %v, want first to contain %q", f.Warnings, tt.warning)
			}
			if _, ok := f.Defines["A"]; ok {
				t.Errorf("A was defined from an expression nested too deeply")
			}
		})
	}
}

func TestParseDBHost(t *testing.T) {
	tests := []struct {
		in   string
		want DBHost
		err  bool
	}{
		{"localhost", DBHost{Host: "localhost"}, false},
		{"db.example.com:3307", DBHost{Host: "db.example.com", Port: 3307}, false},
		{"localhost:/var/run/mysqld/mysqld.sock", DBHost{Host: "localhost", Socket: "/var/run/mysqld/mysqld.sock"}, false},
		{"127.0.0.1:3307:/tmp/my.sock", DBHost{Host: "127.0.0.1", Port: 3307, Socket: "/tmp/my.sock"}, false},
		{":/tmp/my.sock", DBHost{Socket: "/tmp/my.sock"}, false},
		{"[::1]:3306", DBHost{Host: "::1", Port: 3306}, false},
		{"[::1]", DBHost{Host: "::1"}, false},
		{"::1", DBHost{Host: "::1"}, false},
		{"p:db:3306", DBHost{Host: "db", Port: 3306}, false},
		{"db:notaport", DBHost{}, true},
		{"db:70000", DBHost{}, true},
		{"[::1:3306", DBHost{}, true},
	}
	for _, tt := range tests {
		got, err := ParseDBHost(tt.in)
		if (err != nil) != tt.err || err == nil && got != tt.want {
			t.Errorf("ParseDBHost(%q) = %+v, %v; want %+v, err %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestMySQLDSN(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		want    string
		wantErr string
	}{
		{"ipv6 and collation", `<?php define('DB_NAME','wp'); define('DB_USER','u'); define('DB_PASSWORD','p:w@d/x?y'); define('DB_HOST','[::1]:3307'); define('DB_CHARSET','utf8'); define('DB_COLLATE','utf8_general_ci');`,
			"u:p:w@d/x?y@tcp([::1]:3307)/wp?charset=utf8mb4&collation=utf8mb4_unicode_ci&parseTime=true", ""},
		{"latin1 kept", `<?php define('DB_NAME','wp'); define('DB_USER','u'); define('DB_PASSWORD',''); define('DB_HOST','db'); define('DB_CHARSET','latin1');`,
			"u@tcp(db:3306)/wp?charset=latin1&parseTime=true", ""},
		{"missing host is localhost", `<?php define('DB_NAME','wp'); define('DB_USER','u');`,
			"u@tcp(localhost:3306)/wp?charset=utf8mb4&parseTime=true", ""},
		{"no DB_NAME", `<?php define('DB_USER','u');`, "", "DB_NAME is not defined"},
		{"bad port, password not leaked", `<?php define('DB_NAME','wp'); define('DB_PASSWORD','hunter2'); define('DB_HOST','db:99999');`, "", "invalid port"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Parse([]byte(tt.src), nil)
			got, err := f.MySQLDSN()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "hunter2") {
					t.Fatalf("MySQLDSN() error = %v, want one containing %q without the password", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("MySQLDSN() = %q, %v; want %q", got, err, tt.want)
			}
			cfg, err := mysql.ParseDSN(got)
			if err != nil {
				t.Fatalf("the driver cannot parse %q: %v", got, err)
			}
			if cfg.Passwd != f.Str("DB_PASSWORD") || cfg.DBName != f.Str("DB_NAME") {
				t.Errorf("round trip: password %q, db %q", cfg.Passwd, cfg.DBName)
			}
		})
	}
}

// TestMySQLDSNConnects connects to the local MariaDB with a DSN built from
// a wp-config.php.
func TestMySQLDSNConnects(t *testing.T) {
	f := Parse([]byte(`<?php
define( 'DB_NAME', 'mysql' );
define( 'DB_USER', getenv('TEST_DB_USER') ?: 'root' );
define( 'DB_PASSWORD', getenv('TEST_DB_PASSWORD') ?: '' );
define( 'DB_HOST', '127.0.0.1:3306' );
define( 'DB_CHARSET', 'utf8' );
`), os.LookupEnv)
	dsn, err := f.MySQLDSN()
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		testenv.Missing(t, "no MariaDB on 127.0.0.1:3306: %v", err)
	}
	var charset string
	if err := db.QueryRowContext(ctx, "SELECT @@character_set_client").Scan(&charset); err != nil {
		t.Fatal(err)
	}
	if charset != "utf8mb4" {
		t.Errorf("connection charset = %q, want utf8mb4", charset)
	}
}

func TestValueString(t *testing.T) {
	tests := []struct {
		v    Value
		want string
	}{
		{Value{Kind: Bool, Bool: true}, "1"},
		{Value{Kind: Bool}, ""},
		{Value{Kind: Null}, ""},
		{Value{Kind: Int, Int: -3}, "-3"},
		{floatVal(0.1), "0.1"},
		{floatVal(100000), "100000"},
		{floatVal(1e14), "1.0E+14"},
		{floatVal(1e13), "10000000000000"},
		{floatVal(0.0001), "0.0001"},
		{floatVal(0.00001), "1.0E-5"},
		{floatVal(-1.5e-10), "-1.5E-10"},
		{floatVal(math.Inf(1)), "INF"},
		{floatVal(math.NaN()), "NAN"},
		{floatVal(1.0 / 3), "0.33333333333333"},
		{floatVal(2.0 / 3), "0.66666666666667"},
		{floatVal(99999999999999.5), "1.0E+14"},
	}
	for _, tt := range tests {
		if got := tt.v.String(); got != tt.want {
			t.Errorf("%v.String() = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, tc := range parseCases {
		f.Add([]byte(tc.src))
	}
	env := envOf(map[string]string{"SET_VAR": "x"})
	f.Fuzz(func(t *testing.T, src []byte) {
		file := Parse(src, env)
		if len(file.Order) != len(file.Defines) {
			t.Fatalf("Order %v does not match Defines", file.Order)
		}
		seen := map[string]bool{}
		for _, n := range file.Order {
			if _, ok := file.Defines[n]; !ok || seen[n] {
				t.Fatalf("Order has %q twice or not in Defines", n)
			}
			seen[n] = true
		}
		lines := bytes.Count(src, []byte("\n")) + 1
		for _, w := range file.Warnings {
			if w.Line < 0 || w.Line > lines {
				t.Fatalf("warning line %d outside 0..%d: %v", w.Line, lines, w)
			}
		}
		for _, v := range file.Defines {
			if v.Line < 1 || v.Line > lines {
				t.Fatalf("define line %d outside 1..%d", v.Line, lines)
			}
		}
		_ = file.ConstantStrings()
		_, _ = file.MySQLDSN()
	})
}

func TestMultisite(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want Multisite
		on   bool
	}{
		{name: "single site", src: `<?php define('WP_ALLOW_MULTISITE', true); $table_prefix = 'wp_';`},
		{name: "MULTISITE false", src: `<?php define('MULTISITE', false); define('SUBDOMAIN_INSTALL', true);`},
		{name: "subdirectory network", on: true, src: `<?php
define( 'MULTISITE', true );
define( 'SUBDOMAIN_INSTALL', false );
define( 'DOMAIN_CURRENT_SITE', 'example.org' );
define( 'PATH_CURRENT_SITE', '/' );
define( 'SITE_ID_CURRENT_SITE', 1 );
define( 'BLOG_ID_CURRENT_SITE', 1 );
$table_prefix = 'wp_';`, want: Multisite{Domain: "example.org", Path: "/", NetworkID: 1, MainSiteID: 1}},
		{name: "subdomains by VHOST, own ids", on: true, src: `<?php
define( 'VHOST', 'yes' );
define( 'DOMAIN_CURRENT_SITE', 'news.example' );
define( 'PATH_CURRENT_SITE', '/wp/' );
define( 'SITE_ID_CURRENT_SITE', '2' );
define( 'BLOG_ID_CURRENT_SITE', 5 );`, want: Multisite{SubdomainInstall: true, Domain: "news.example", Path: "/wp/", NetworkID: 2, MainSiteID: 5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, on := Parse([]byte(tc.src), nil).Multisite()
			if on != tc.on || got != tc.want {
				t.Errorf("Multisite() = %+v, %v; want %+v, %v", got, on, tc.want, tc.on)
			}
		})
	}
}
