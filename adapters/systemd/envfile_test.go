package systemd

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseEnv(t *testing.T) {
	for _, tc := range []struct {
		name     string
		text     string
		want     []EnvLine
		problems []int // lines of the problems
	}{
		{"empty", "", nil, nil},
		{"comments and blanks", "# a\n ; b\n\n\t\n", nil, nil},
		{"plain", "A=1\nB=two words  \n", []EnvLine{{"A", "1", 1}, {"B", "two words", 2}}, nil},
		{"spaces around key and before value", "  A =  x\n", []EnvLine{{"A", "x", 1}}, nil},
		{"empty value", "A=\nB=", []EnvLine{{"A", "", 1}, {"B", "", 2}}, nil},
		{"no final newline", "A=1", []EnvLine{{"A", "1", 1}}, nil},
		{"crlf", "A=1\r\nB=\"2\"\r\n", []EnvLine{{"A", "1", 1}, {"B", "2", 2}}, nil},
		{"double quotes", `A="a b # c"` + "\n", []EnvLine{{"A", "a b # c", 1}}, nil},
		{"double quote escapes", `A="q\"b\\s\$d\` + "`" + `n\x"`, []EnvLine{{"A", "q\"b\\s$d`n\\x", 1}}, nil},
		{"double quotes span lines", "A=\"one\ntwo\"\nB=3\n", []EnvLine{{"A", "one\ntwo", 1}, {"B", "3", 3}}, nil},
		{"double quote continuation", "A=\"one \\\ntwo\"\n", []EnvLine{{"A", "one two", 1}}, nil},
		{"single quotes literal", `A='a\"b $c'` + "\n", []EnvLine{{"A", `a\"b $c`, 1}}, nil},
		{"text after the closing quote ignored", `A="x" y` + "\nB=1", []EnvLine{{"A", "x", 1}, {"B", "1", 2}}, nil},
		{"unquoted backslash", `A=a\ b\\c` + "\n", []EnvLine{{"A", `a b\c`, 1}}, nil},
		{"unquoted continuation", "A=one \\\ntwo\nB=1\n", []EnvLine{{"A", "one two", 1}, {"B", "1", 3}}, nil},
		{"hash inside an unquoted value is kept", "A=x#y\n", []EnvLine{{"A", "x#y", 1}}, nil},
		{"equals in the value", "MAILSVC_DB=mysql:u:p@tcp(h)/d?a=b\n", []EnvLine{{"MAILSVC_DB", "mysql:u:p@tcp(h)/d?a=b", 1}}, nil},
		{"no equals", "JUNK\nA=1\n", []EnvLine{{"A", "1", 2}}, []int{1}},
		{"bad name", "1A=x\nA-B=y\nexport C=z\nD=ok\n", []EnvLine{{"D", "ok", 4}}, []int{1, 2, 3}},
		{"unclosed quote", "A=1\nB=\"open\nC=2\n", []EnvLine{{"A", "1", 1}}, []int{2}},
		{"repeated key kept in order", "A=1\nA=2\n", []EnvLine{{"A", "1", 1}, {"A", "2", 2}}, nil},
		{"the package's file", string(EnvFile()), []EnvLine{{"MAILSVC_ADDR", "127.0.0.1:8025", 25}, {"MAILSVC_TRUSTED_PROXIES", "127.0.0.1", 28}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, problems := ParseEnv(tc.text)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ParseEnv(%q) = %+v, want %+v", tc.text, got, tc.want)
			}
			var lines []int
			for _, p := range problems {
				lines = append(lines, p.Line)
			}
			if !reflect.DeepEqual(lines, tc.problems) {
				t.Errorf("problems on lines %v (%v), want %v", lines, problems, tc.problems)
			}
		})
	}
}

// TestParseEnvReadsWhatInstallWrites checks that a value written by
// EnvFileFor (quoted when it must be) reads back as it was.
func TestParseEnvReadsWhatInstallWrites(t *testing.T) {
	for _, path := range []string{"/var/www/html/wp-config.php", "/srv/my site/wp-config.php", `/srv/a"b$c\d/wp-config.php`} {
		lines, problems := ParseEnv(string(EnvFileFor(path)))
		got := map[string]string{}
		for _, l := range lines {
			got[l.Key] = l.Value
		}
		if got[wpConfigName] != path || len(problems) > 0 {
			t.Errorf("EnvFileFor(%q) reads back as %q (problems %v)", path, got[wpConfigName], problems)
		}
	}
}

func TestLoadEnv(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mailsvc.env")
	if err := os.WriteFile(file, []byte("MAILSVC_WP_CONFIG=/srv/wp-config.php\nMAILSVC_ADDR=127.0.0.1:9000\nMAILSVC_ADDR=127.0.0.1:9001\nbroken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(vars map[string]string) (func(string) (string, bool), func(string, string) error) {
		return func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
			func(k, v string) error { vars[k] = v; return nil }
	}

	t.Run("fills what the environment lacks", func(t *testing.T) {
		vars := map[string]string{EnvFileName: file, "MAILSVC_ADDR": "0.0.0.0:1"}
		path, set, problems, err := LoadEnv(env(vars))
		if err != nil || path != file {
			t.Fatalf("LoadEnv = %q, %v", path, err)
		}
		if !reflect.DeepEqual(set, []string{"MAILSVC_WP_CONFIG"}) || vars["MAILSVC_WP_CONFIG"] != "/srv/wp-config.php" {
			t.Errorf("set %v, environment %v", set, vars)
		}
		if vars["MAILSVC_ADDR"] != "0.0.0.0:1" {
			t.Errorf("the environment's MAILSVC_ADDR was replaced by %q", vars["MAILSVC_ADDR"])
		}
		if len(problems) != 1 || problems[0].Line != 4 {
			t.Errorf("problems = %v, want line 4", problems)
		}
	})
	t.Run("the last assignment wins", func(t *testing.T) {
		vars := map[string]string{EnvFileName: file}
		if _, _, _, err := LoadEnv(env(vars)); err != nil || vars["MAILSVC_ADDR"] != "127.0.0.1:9001" {
			t.Errorf("MAILSVC_ADDR = %q, %v", vars["MAILSVC_ADDR"], err)
		}
	})
	t.Run("empty MAILSVC_ENV_FILE reads none", func(t *testing.T) {
		vars := map[string]string{EnvFileName: ""}
		path, set, _, err := LoadEnv(env(vars))
		if path != "" || set != nil || err != nil || len(vars) != 1 {
			t.Errorf("LoadEnv = %q %v %v, environment %v", path, set, err, vars)
		}
	})
	t.Run("a missing file is none", func(t *testing.T) {
		vars := map[string]string{EnvFileName: filepath.Join(dir, "none.env")}
		if path, set, _, err := LoadEnv(env(vars)); path != "" || set != nil || err != nil {
			t.Errorf("LoadEnv = %q %v %v", path, set, err)
		}
	})
	t.Run("an unreadable file says sudo", func(t *testing.T) {
		locked := filepath.Join(dir, "locked.env")
		defer func(f func(string) ([]byte, error)) { readFile = f }(readFile)
		readFile = func(name string) ([]byte, error) {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
		}
		vars := map[string]string{EnvFileName: locked}
		_, _, _, err := LoadEnv(env(vars))
		if !errors.Is(err, ErrEnvUnreadable) || !strings.Contains(err.Error(), "sudo") || !strings.Contains(err.Error(), locked) {
			t.Errorf("LoadEnv = %v, want ErrEnvUnreadable naming the file and sudo", err)
		}
	})
}

// FuzzParseEnv checks that any text parses without a panic into valid
// names, that a value without a newline written as envValue writes it
// reads back the same, and that lines are in order.
func FuzzParseEnv(f *testing.F) {
	f.Add(string(EnvFile()), "plain")
	f.Add("A=\"x\\\"y\"\n#c\nB='z'\n", `a "quoted" $value\`)
	f.Add("A=one \\\ntwo\n", "")
	f.Fuzz(func(t *testing.T, text, value string) {
		lines, _ := ParseEnv(text)
		last := 0
		for _, l := range lines {
			if !validEnvName(l.Key) || l.Line < last {
				t.Fatalf("ParseEnv(%q) gave %+v", text, l)
			}
			last = l.Line
		}
		if strings.ContainsAny(value, "\n\r\x00") || strings.TrimSpace(value) != value || value != strings.ToValidUTF8(value, "") {
			return
		}
		got, problems := ParseEnv("K=" + envValue(value) + "\n")
		if len(got) != 1 || got[0].Value != value || len(problems) > 0 {
			t.Fatalf("K=%s reads back as %+v (%v), want %q", envValue(value), got, problems, value)
		}
	})
}
