package testdb

import (
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/internal/testenv"
)

// Server is a private MariaDB server with its own data directory and
// port, for tests that stop and restart the database under a running
// service (the shared server on 3306 must never be restarted).
type Server struct {
	t    testing.TB
	dir  string
	port int
	cmd  *exec.Cmd
	done chan struct{}
}

// PrivateServer installs a fresh data directory and starts mariadbd on a
// free loopback port; it is stopped when the test ends. Without the
// MariaDB server binaries it calls testenv.Missing.
func PrivateServer(t testing.TB) *Server {
	t.Helper()
	install, err := exec.LookPath("mariadb-install-db")
	if err != nil {
		testenv.Missing(t, "mariadb-install-db is not installed (Debian package mariadb-server)")
	}
	if _, err := os.Stat(mariadbd()); err != nil {
		testenv.Missing(t, "mariadbd is not installed (Debian package mariadb-server)")
	}
	s := &Server{t: t, dir: t.TempDir()}
	out, err := exec.Command(install, "--no-defaults", "--datadir="+filepath.Join(s.dir, "data"),
		"--auth-root-authentication-method=normal", "--user=root", "--skip-test-db").CombinedOutput()
	if err != nil {
		t.Fatalf("testdb: mariadb-install-db: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	s.Start()
	t.Cleanup(s.Stop)
	return s
}

// mariadbd returns the server binary's path.
func mariadbd() string {
	if p, err := exec.LookPath("mariadbd"); err == nil {
		return p
	}
	return "/usr/sbin/mariadbd"
}

// Start starts the server on its data directory and waits until it
// answers (up to 30 s).
func (s *Server) Start() {
	s.t.Helper()
	s.cmd = exec.Command(mariadbd(), "--no-defaults", "--datadir="+filepath.Join(s.dir, "data"),
		"--port="+strconv.Itoa(s.port), "--bind-address=127.0.0.1", "--socket="+filepath.Join(s.dir, "sock"),
		"--user=root", "--pid-file="+filepath.Join(s.dir, "pid"), "--log-error="+filepath.Join(s.dir, "error.log"))
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("testdb: start mariadbd: %v", err)
	}
	s.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(s.cmd, s.done)
	db, err := sql.Open("mysql", s.rootDSN(""))
	if err != nil {
		s.t.Fatal(err)
	}
	defer db.Close()
	deadline := time.Now().Add(30 * time.Second)
	for db.Ping() != nil {
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(s.dir, "error.log"))
			s.t.Fatalf("testdb: private mariadbd did not answer within 30s\n%s", log)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Stop shuts the server down cleanly (SIGTERM) and waits for it.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(60 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// Database creates a database and returns its DSN in the form the store
// opens (mysql:...).
func (s *Server) Database(name string) string {
	s.t.Helper()
	db, err := sql.Open("mysql", s.rootDSN(""))
	if err != nil {
		s.t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE DATABASE `" + name + "` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"); err != nil {
		s.t.Fatalf("testdb: create database %s: %v", name, err)
	}
	return "mysql:" + s.rootDSN(name)
}

func (s *Server) rootDSN(db string) string {
	return fmt.Sprintf("root@tcp(127.0.0.1:%d)/%s?parseTime=true", s.port, db)
}
