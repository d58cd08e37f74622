package wiretap_test

import (
	"bufio"
	"encoding/base64"
	"net"
	"net/url"
	"testing"

	"github.com/mailsvc/mailsvc/test/fakes/wiretap"
)

// echo starts a TCP server that answers each line with "ok".
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					if _, err := c.Write([]byte("ok\n")); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func TestTapRecordsWhatGoesThrough(t *testing.T) {
	tp := wiretap.Start(t, echo(t))
	c, err := net.Dial("tcp", tp.Addr())
	if err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(c)
	for _, line := range []string{
		"AUTH PLAIN " + base64.StdEncoding.EncodeToString([]byte("\x00mailer\x00plain-secret")),
		"client_secret=" + url.QueryEscape("form secret&more"),
		"Authorization: Bearer header-secret",
	} {
		if _, err := c.Write([]byte(line + "\r\n")); err != nil {
			t.Fatal(err)
		}
		if answer, err := rd.ReadString('\n'); err != nil || answer != "ok\n" {
			t.Fatalf("answer %q, %v: the tap does not pass the connection on", answer, err)
		}
	}
	c.Close()
	tests := []struct {
		secret string
		want   bool
	}{
		{"plain-secret", true}, {"form secret&more", true}, {"header-secret", true},
		{"never-sent", false}, {"", false},
	}
	for _, tt := range tests {
		if got := tp.Carries(tt.secret); got != tt.want {
			t.Errorf("Carries(%q) = %v, want %v", tt.secret, got, tt.want)
		}
	}
	if tp.Connections() != 1 {
		t.Errorf("%d connections, want 1", tp.Connections())
	}
}
