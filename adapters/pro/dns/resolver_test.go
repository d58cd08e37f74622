package dns

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mailsvc/mailsvc/app/pro/domaincheck"
	"github.com/mailsvc/mailsvc/test/fakes/dnsfake"
)

func TestResolverAgainstALocalServer(t *testing.T) {
	srv := dnsfake.Start(t,
		`example.com. 300 IN TXT "v=spf1 include:_spf.google.com" " ~all"`,
		`example.com. 300 IN TXT "google-site-verification=abc"`,
		`example.com. 300 IN MX 20 mx2.example.com.`,
		`example.com. 300 IN MX 10 mx1.example.com.`,
		`s1._domainkey.example.com. 300 IN CNAME s1.domainkey.u1.wl.sendgrid.net.`,
		`null.example. 300 IN MX 0 .`,
	)
	srv.Fail("broken.example")
	r, err := New(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	txt, err := r.TXT(ctx, "example.com")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"v=spf1 include:_spf.google.com ~all", "google-site-verification=abc"}; !reflect.DeepEqual(txt, want) {
		t.Errorf("TXT = %q, want %q (strings of a record joined)", txt, want)
	}
	mx, err := r.MX(ctx, "Example.COM.")
	if err != nil {
		t.Fatal(err)
	}
	if want := []domaincheck.MXRecord{{Preference: 20, Host: "mx2.example.com"}, {Preference: 10, Host: "mx1.example.com"}}; !reflect.DeepEqual(mx, want) {
		t.Errorf("MX = %v, want %v", mx, want)
	}
	if mx, _ := r.MX(ctx, "null.example"); len(mx) != 1 || mx[0].Host != "." {
		t.Errorf("null MX = %v, want one record with host .", mx)
	}
	cname, err := r.CNAME(ctx, "s1._domainkey.example.com")
	if err != nil || cname != "s1.domainkey.u1.wl.sendgrid.net" {
		t.Errorf("CNAME = %q, %v", cname, err)
	}
	if cname, err := r.CNAME(ctx, "s2._domainkey.example.com"); err != nil || cname != "" {
		t.Errorf("CNAME of a missing name = %q, %v; want empty and no error", cname, err)
	}
	if txt, err := r.TXT(ctx, "nothing.example"); err != nil || len(txt) != 0 {
		t.Errorf("TXT of NXDOMAIN = %q, %v; want none and no error", txt, err)
	}
	if _, err := r.TXT(ctx, "broken.example"); !errors.Is(err, ErrServer) {
		t.Errorf("TXT of a SERVFAIL name: err = %v, want ErrServer", err)
	}
}

func TestNewServerForms(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "resolv.conf")
	if err := os.WriteFile(conf, []byte("search lan\nnameserver 192.0.2.53\nnameserver 192.0.2.54\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := SystemServer(conf); err != nil || got != "192.0.2.53:53" {
		t.Errorf("SystemServer = %q, %v; want the first nameserver", got, err)
	}
	empty := filepath.Join(dir, "empty.conf")
	_ = os.WriteFile(empty, []byte("search lan\n"), 0o600)
	if _, err := SystemServer(empty); err == nil {
		t.Error("SystemServer of a file without nameserver: no error")
	}
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"127.0.0.1:5353", "127.0.0.1:5353", true},
		{"10.0.0.2", "10.0.0.2:53", true},
		{"::1", "[::1]:53", true},
		{"[::1]:53", "[::1]:53", true},
		{"dns.example", "dns.example:53", true},
		{"http://x/", "", false},
	}
	for _, tt := range tests {
		r, err := New(tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("New(%q) err = %v, want ok %v", tt.in, err, tt.ok)
			continue
		}
		if tt.ok && r.Server != tt.want {
			t.Errorf("New(%q).Server = %q, want %q", tt.in, r.Server, tt.want)
		}
	}
}
