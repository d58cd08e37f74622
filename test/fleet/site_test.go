package fleet

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	// The MariaDB driver, to create and drop the sites' databases.
	_ "github.com/go-sql-driver/mysql"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/wordpress"
	"github.com/mailsvc/mailsvc/core"
	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
	"github.com/mailsvc/mailsvc/test/servicetest"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// site is a WordPress site as the service reads it, without WordPress
// itself: a MariaDB database of its own with WordPress's user and option
// tables, an administrator with an application password, an SMTP
// connection to a sink of its own as the default, and a wp-config.php
// with its database settings and salts.
type site struct {
	DBName   string // the MariaDB database ("" on SQLite)
	DSN      string // mysql:... or sqlite:... as MAILSVC_DB reads it
	WPConfig string
	Home     string // http://<host>, without a trailing slash
	Host     string
	Salts    map[string]string
	Admin    string
	Password string // the administrator's application password
	DB       *store.DB
}

// randomHex returns n random bytes as hex.
func randomHex(t testing.TB, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// mariadb opens the MariaDB server without a database.
func mariadb(t testing.TB) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", "root@tcp("+wpsite.DBAddr+")/?timeout=5s")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// newSite makes a site named name (its host is name.test) whose MariaDB
// database is reached at dbAddr ("" for MariaDB itself) and whose mail
// goes to sink.
func newSite(t testing.TB, name, dbAddr string, sink *smtpsink.Sink, extra core.Settings) *site {
	t.Helper()
	s := &site{DBName: "mailsvc_fleet_" + randomHex(t, 6)}
	root := mariadb(t)
	if _, err := root.Exec("CREATE DATABASE `" + s.DBName + "`"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = root.Exec("DROP DATABASE IF EXISTS `" + s.DBName + "`") })
	if dbAddr == "" {
		dbAddr = wpsite.DBAddr
	}
	s.DSN = "mysql:root@tcp(" + wpsite.DBAddr + ")/" + s.DBName
	s.fill(t, name, sink, extra, map[string]string{"DB_NAME": s.DBName, "DB_USER": "root", "DB_PASSWORD": "", "DB_HOST": dbAddr})
	return s
}

// newSQLiteSite is newSite with the site's service tables in an SQLite
// file of its own (MAILSVC_DB in its wp-config.php): many sites without
// a MariaDB connection each.
func newSQLiteSite(t testing.TB, name string, sink *smtpsink.Sink) *site {
	t.Helper()
	s := &site{}
	s.DSN = "sqlite:" + filepath.Join(t.TempDir(), name+".db")
	s.fill(t, name, sink, nil, map[string]string{"DB_NAME": "unused", "DB_USER": "root", "DB_PASSWORD": "", "DB_HOST": wpsite.DBAddr, "MAILSVC_DB": s.DSN})
	return s
}

// fill makes the site's tables at s.DSN (WordPress's users and options,
// an administrator with an application password, the connection to
// sink) and its wp-config.php with defines and its own salts.
func (s *site) fill(t testing.TB, name string, sink *smtpsink.Sink, extra core.Settings, defines map[string]string) {
	t.Helper()
	s.Host, s.Admin, s.Salts = name+".test", "admin-"+name, map[string]string{}
	s.Home = "http://" + s.Host
	s.DB = servicetest.OpenSinkStore(t, s.DSN, sink, extra)
	ctx := context.Background()
	if err := wordpress.EnsureSchema(ctx, s.DB.Gorm(), store.DefaultPrefix, wordpress.WithSiteURL(s.Home)); err != nil {
		t.Fatal(err)
	}
	id, err := wordpress.CreateUser(ctx, s.DB.Gorm(), store.DefaultPrefix, s.Admin, s.Admin+"@example.com", "administrator")
	if err != nil {
		t.Fatal(err)
	}
	if s.Password, err = wordpress.CreateApplicationPassword(ctx, s.DB.Gorm(), store.DefaultPrefix, id, "fleet test"); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("<?php\n")
	define := func(k, v string) { fmt.Fprintf(&b, "define( '%s', %s );\n", k, wpsite.PHPString(v)) }
	for _, k := range slices.Sorted(maps.Keys(defines)) {
		define(k, defines[k])
	}
	for _, n := range wpsite.SaltNames {
		s.Salts[n] = name + "-" + n + "-" + randomHex(t, 16)
		define(n, s.Salts[n])
	}
	b.WriteString("$table_prefix = 'wp_';\n")
	s.WPConfig = filepath.Join(t.TempDir(), "wp-config.php")
	if err := os.WriteFile(s.WPConfig, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
}

// key is the site key the site's bridge sends: wp_salt('auth') is
// AUTH_KEY . AUTH_SALT.
func (s *site) key() string {
	return wordpress.SiteKey(s.Salts["AUTH_KEY"] + s.Salts["AUTH_SALT"])
}

// enqueue commits n messages for the site's default connection, subjects
// prefix-0 on.
func (s *site) enqueue(t testing.TB, prefix string, n int) {
	t.Helper()
	logs := make([]*core.Log, n)
	for i := range logs {
		logs[i] = &core.Log{Source: "test", Message: core.Message{
			From:    core.Address{Email: "shop@example.com"},
			To:      []core.Address{{Email: fmt.Sprintf("%s%d@example.com", prefix, i)}},
			Subject: fmt.Sprintf("%s-%d", prefix, i),
			Text:    "fleet test",
		}}
	}
	if err := s.DB.Logs().EnqueueLogs(context.Background(), logs); err != nil {
		t.Fatal(err)
	}
}

// dbProxy forwards TCP connections from a loopback port to MariaDB
// while it is up: a site's database that goes away and comes back.
type dbProxy struct {
	addr string
	mu   sync.Mutex
	ln   net.Listener
	open []net.Conn
}

// newDBProxy reserves a port for the proxy; it is down until up.
func newDBProxy(t testing.TB) *dbProxy {
	p := &dbProxy{addr: servicetest.FreeAddr(t)}
	t.Cleanup(p.down)
	return p
}

// up starts forwarding.
func (p *dbProxy) up(t testing.TB) {
	t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", wpsite.DBAddr)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.open = append(p.open, c, u)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(u, c); u.Close() }()
			go func() { _, _ = io.Copy(c, u); c.Close() }()
		}
	}()
}

// down stops forwarding and cuts every open connection.
func (p *dbProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.open {
		c.Close()
	}
	p.open = nil
}
