package testdb

import (
	"database/sql"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

func TestMySQLCreatesAndDropsDatabase(t *testing.T) {
	var dsn string
	t.Run("use", func(t *testing.T) {
		dsn = MySQL(t)
		if !strings.HasPrefix(dsn, "mysql:") {
			t.Fatalf("DSN %q lacks the mysql: prefix", dsn)
		}
		db, err := sql.Open("mysql", DriverDSN(dsn))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var name string
		if err := db.QueryRow("SELECT DATABASE()").Scan(&name); err != nil {
			t.Fatalf("query the new database: %v", err)
		}
		if !strings.HasPrefix(name, "mailsvc_test_") {
			t.Fatalf("database name %q lacks mailsvc_test_ prefix", name)
		}
		if _, err := db.Exec("CREATE TABLE t (id INT)"); err != nil {
			t.Fatalf("create table in the new database: %v", err)
		}
	})
	if dsn == "" {
		t.Skip("MariaDB not available")
	}
	cfg, err := serverConfig()
	if err != nil {
		t.Fatal(err)
	}
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	name := DriverDSN(dsn)[strings.LastIndex(DriverDSN(dsn), "/")+1:]
	if i := strings.IndexByte(name, '?'); i >= 0 {
		name = name[:i]
	}
	var n int
	if err := admin.QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("database %s still exists after the test ended", name)
	}
}

func TestDriverDSN(t *testing.T) {
	tests := []struct{ in, want string }{
		{"mysql:root:@tcp(127.0.0.1:3306)/x", "root:@tcp(127.0.0.1:3306)/x"},
		{"root:@tcp(127.0.0.1:3306)/x", "root:@tcp(127.0.0.1:3306)/x"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := DriverDSN(tt.in); got != tt.want {
			t.Errorf("DriverDSN(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSQLiteDSN(t *testing.T) {
	a, b := SQLite(t), SQLite(t)
	if !strings.HasPrefix(a, "sqlite:") || !strings.HasSuffix(a, ".db") {
		t.Fatalf("SQLite DSN %q is not sqlite:<path>.db", a)
	}
	if a == b {
		t.Fatalf("two SQLite DSNs are the same: %q", a)
	}
}

// recordingTB stands in for a test so that MySQL's Skip and Fatal can be
// observed; both end the calling goroutine, as the real ones do.
type recordingTB struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (r *recordingTB) Helper()        {}
func (r *recordingTB) Cleanup(func()) {}
func (r *recordingTB) Skip(args ...any) {
	r.skipped, r.msg = true, fmt.Sprint(args...)
	runtime.Goexit()
}
func (r *recordingTB) Skipf(format string, args ...any) {
	r.skipped, r.msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (r *recordingTB) Fatal(args ...any) {
	r.failed, r.msg = true, fmt.Sprint(args...)
	runtime.Goexit()
}
func (r *recordingTB) Fatalf(format string, args ...any) {
	r.failed, r.msg = true, fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func TestMySQLUnreachable(t *testing.T) {
	// Port 1 on loopback refuses connections.
	t.Setenv("MAILSVC_TEST_MYSQL", "root:sekretpw@tcp(127.0.0.1:1)/")
	tests := []struct {
		name     string
		ci       string
		wantSkip bool
	}{
		{"skips locally", "", true},
		{"fails in CI", "true", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("CI", tt.ci) // MySQL treats an empty CI as unset
			rec := &recordingTB{TB: t}
			var dsn string
			done := make(chan struct{})
			go func() {
				defer close(done)
				dsn = MySQL(rec)
			}()
			<-done
			if dsn != "" {
				t.Fatalf("MySQL returned %q for an unreachable server", dsn)
			}
			if rec.skipped != tt.wantSkip || rec.failed == tt.wantSkip {
				t.Fatalf("skipped=%v failed=%v, want skipped=%v", rec.skipped, rec.failed, tt.wantSkip)
			}
			if !strings.Contains(rec.msg, "MariaDB not reachable at 127.0.0.1:1") {
				t.Fatalf("message %q does not name the server", rec.msg)
			}
			if strings.Contains(rec.msg, "sekretpw") {
				t.Fatalf("message %q leaks the password", rec.msg)
			}
		})
	}
}
