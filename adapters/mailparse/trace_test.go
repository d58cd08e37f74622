package mailparse

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/net/idna"

	"github.com/mailsvc/mailsvc/core"
)

func TestTraceField(t *testing.T) {
	date := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		trace Trace
		want  string
	}{
		{"listener, one recipient", Trace{Helo: "client.example", ClientHost: "client.example", ClientIP: "192.0.2.7", By: "mx.example.org", Comment: "mailsvc", With: "ESMTPSA", ID: "ABC", For: "ann@bücher.example", Date: date},
			"Received: from client.example (client.example [192.0.2.7])\r\n\tby mx.example.org (mailsvc) with ESMTPSA id ABC\r\n\tfor <ann@xn--bcher-kva.example>; Fri, 27 Nov 2026 08:00:00 +0000\r\n"},
		{"listener, no reverse name, a HELO with spaces", Trace{Helo: "bad name;", ClientIP: "::1", By: "mx", With: "ESMTPA", ID: "X", Date: date},
			"Received: from badname ([::1])\r\n\tby mx with ESMTPA id X; Fri, 27 Nov 2026 08:00:00 +0000\r\n"},
		{"sendmail", Trace{By: "web1", Comment: "mailsvc sendmail, from userid 33", With: "local", ID: "Q", Date: date},
			"Received: by web1 (mailsvc sendmail, from userid 33) with local id Q; Fri, 27 Nov 2026 08:00:00 +0000\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.trace.Field(); got != tt.want {
				t.Errorf("Field()\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
	msg := &core.Message{RawHeader: "Subject: x\r\n"}
	AddTrace(msg, tests[2].trace)
	if msg.RawHeader != tests[2].want+"Subject: x\r\n" {
		t.Errorf("AddTrace: %q", msg.RawHeader)
	}
	if id := NewTraceID(); len(id) != 12 || strings.ToUpper(id) != id {
		t.Errorf("NewTraceID() = %q", id)
	}
}

// A header block cut short by the capture limit is not kept; one that
// ends within it is, its lines ended by CRLF.
func TestHeaderBlock(t *testing.T) {
	if got := headerBlock([]byte("A: 1\nB: 2\n\nbody"), 100); got != "A: 1\r\nB: 2\r\n" {
		t.Errorf("headerBlock = %q", got)
	}
	if got := headerBlock([]byte("A: 1\r\nB: 2"), 100); got != "A: 1\r\nB: 2\r\n" {
		t.Errorf("a header-only message: %q", got)
	}
	if got := headerBlock([]byte("A: 1\r\nB: 22222"), 14); got != "" {
		t.Errorf("a block cut short: %q, want none", got)
	}
}

// TestASCIIDomainLowerLDH: a domain of lower-case letters, digits,
// hyphens and dots, which asciiDomain leaves without asking idna, is what
// idna's lookup gives or refuses, so the address is the same either way.
func TestASCIIDomainLowerLDH(t *testing.T) {
	for _, d := range []string{"example.com", "a.b.c", "xn--bcher-kva.example", "xn--zz.example", "-a.com", "a-.com",
		"ab--cd.com", "a..b", "axn--b.com", "xn--a.xn--", "", ".", "a.b.", "123.45.67.89", strings.Repeat("a", 70) + ".com", "xn--.com"} {
		want := "u@" + d
		if out, err := idna.Lookup.ToASCII(d); err == nil {
			want = "u@" + out
		}
		if got := asciiDomain("u@" + d); got != want {
			t.Errorf("asciiDomain(u@%s) = %q, idna gives %q", d, got, want)
		}
	}
}
