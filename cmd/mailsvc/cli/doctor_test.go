package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoctorNamesAnUnreachableDatabaseOnce checks that when the database
// does not answer, the doctor says so in the Database check only, and
// the checks that need it say they were not checked.
func TestDoctorNamesAnUnreachableDatabaseOnce(t *testing.T) {
	standaloneEnv(t)
	t.Setenv("MAILSVC_DB", "mysql:mailsvc:secret@tcp(127.0.0.1:1)/mailsvc?timeout=2s")
	out, err := runCommand(t, strings.NewReader(""), "doctor", "--service", "http://127.0.0.1:1")
	if err == nil {
		t.Fatalf("doctor with no database passed:\n%s", out)
	}
	if n := strings.Count(out, "does not answer: "); n != 1 {
		t.Errorf("the database's error is told %d times, want once:\n%s", n, out)
	}
	if !hasVerdictLine(out, "error", "Database reachable and migrated") {
		t.Errorf("no database error:\n%s", out)
	}
	for _, title := range []string{"Clock", "Queue", "Connections"} {
		if !hasVerdictLine(out, "warning", title) {
			t.Errorf("%s is not a warning:\n%s", title, out)
		}
	}
	if n := strings.Count(out, "Not checked: the database does not answer"); n != 4 {
		t.Errorf("%d checks say they were not checked, want 4 (clock, queue, connections, staging guard):\n%s", n, out)
	}
}

// hasVerdictLine reports whether out has a line starting with verdict
// whose text holds title.
func hasVerdictLine(out, verdict, title string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, verdict) && strings.Contains(line, title) {
			return true
		}
	}
	return false
}

// TestDoctorLooksWhereTheBridgeSends checks where the doctor looks for the
// service beside WordPress: wp-config.php's MAILSVC_SERVICE_URL, then the
// environment's, then MAILSVC_ADDR.
func TestDoctorLooksWhereTheBridgeSends(t *testing.T) {
	dir := t.TempDir()
	write := func(extra string) string {
		path := filepath.Join(dir, "wp-config.php")
		text := "<?php\ndefine( 'DB_NAME', 'wp' );\ndefine( 'DB_USER', 'wp' );\ndefine( 'DB_PASSWORD', 'pw' );\ndefine( 'DB_HOST', '127.0.0.1' );\n" + extra + "$table_prefix = 'wp_';\n"
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, tc := range []struct {
		name, define, env, want string
	}{
		{"wp-config.php's constant", "define( 'MAILSVC_SERVICE_URL', 'http://10.0.0.5:9000/' );\n", "http://192.0.2.1:1", "http://10.0.0.5:9000"},
		{"the environment's", "", "http://192.0.2.1:8026", "http://192.0.2.1:8026"},
		{"MAILSVC_ADDR", "", "", "http://127.0.0.1:8099"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("MAILSVC_WP_CONFIG", write(tc.define))
			t.Setenv("MAILSVC_SERVICE_URL", tc.env)
			t.Setenv("MAILSVC_ADDR", "127.0.0.1:8099")
			rt, err := readConfig(newLogger(), os.Getenv("MAILSVC_WP_CONFIG"))
			if err != nil {
				t.Fatal(err)
			}
			if got := bridgeServiceURL(rt); got != tc.want {
				t.Errorf("bridgeServiceURL = %q, want %q", got, tc.want)
			}
		})
	}
}
