package cli

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/core"
)

// errorAsWanted checks err against a case's wanted error: with want set,
// err must contain it, and errorAsWanted reports true (the case is done);
// with want "", err must be nil.
func errorAsWanted(t *testing.T, err error, want string) bool {
	t.Helper()
	if want != "" {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("error %v, want one containing %q", err, want)
		}
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	return false
}

func TestParseSendmailArgs(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    sendmailOptions
		wantErr string
	}{
		{name: "PHP default", args: []string{"-t", "-i"}, want: sendmailOptions{fromHeaders: true, ignoreDots: true}},
		{name: "combined -ti and -oi", args: []string{"-ti", "-oi"}, want: sendmailOptions{fromHeaders: true, ignoreDots: true}},
		{name: "sender and name separate", args: []string{"-f", "cron@example.org", "-F", "Cron Daemon", "a@example.org"},
			want: sendmailOptions{sender: "cron@example.org", fullName: "Cron Daemon", recipients: []string{"a@example.org"}}},
		{name: "sender and name attached, -r", args: []string{"-rbounce@example.org", "-FSite", "a@example.org", "b@example.org"},
			want: sendmailOptions{sender: "bounce@example.org", fullName: "Site", recipients: []string{"a@example.org", "b@example.org"}}},
		{name: "no-op flags", args: []string{"-odi", "-oem", "-oee", "-bm", "-v", "-U", "-oQ/var/spool", "-B", "8BITMIME", "-N", "never", "-Rhdrs", "-O", "DeliveryMode=b", "a@example.org"},
			want: sendmailOptions{recipients: []string{"a@example.org"}}},
		{name: "double dash ends options", args: []string{"-i", "--", "-odd@example.org"}, want: sendmailOptions{ignoreDots: true, recipients: []string{"-odd@example.org"}}},
		{name: "help", args: []string{"--help"}, want: sendmailOptions{help: true}},
		{name: "missing -f value", args: []string{"-t", "-f"}, wantErr: "requires a value"},
		{name: "unsupported mode", args: []string{"-bs"}, wantErr: "not supported"},
		{name: "queue run", args: []string{"-q"}, wantErr: "unknown option -q"},
		{name: "unknown letter in a group", args: []string{"-tx"}, wantErr: "unknown option -tx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseSendmailArgs(tt.args)
			if errorAsWanted(t, err, tt.wantErr) {
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestReadSendmailInput(t *testing.T) {
	tests := []struct {
		name       string
		in         string
		ignoreDots bool
		max        int64
		want       string
		wantErr    string
	}{
		{name: "lone dot ends input", in: "Subject: a\n\nline\n.\nafter\n", want: "Subject: a\n\nline\n"},
		{name: "lone dot with CRLF ends input", in: "Subject: a\r\n\r\nline\r\n.\r\nafter\r\n", want: "Subject: a\r\n\r\nline\r\n"},
		{name: "-i keeps the dot and what follows", in: "Subject: a\n\nline\n.\nafter\n", ignoreDots: true, want: "Subject: a\n\nline\n.\nafter\n"},
		{name: "dots inside lines are data", in: "Subject: a\n\n..\n.x\n", want: "Subject: a\n\n..\n.x\n"},
		{name: "no final newline", in: "Subject: a\n\nlast", want: "Subject: a\n\nlast"},
		{name: "too large", in: strings.Repeat("x", 101), max: 100, wantErr: "larger than 100 bytes"},
		{name: "too large with -i", in: strings.Repeat("x", 101), ignoreDots: true, max: 100, wantErr: "larger than 100 bytes"},
		{name: "exactly the limit", in: strings.Repeat("x", 100), ignoreDots: true, max: 100, want: strings.Repeat("x", 100)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			max := tt.max
			if max == 0 {
				max = 1 << 20
			}
			got, err := readSendmailInput(strings.NewReader(tt.in), tt.ignoreDots, max)
			if errorAsWanted(t, err, tt.wantErr) {
				return
			}
			if string(got) != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestBuildSendmailMessage(t *testing.T) {
	const msg = "From: Site <site@example.org>\nTo: Al <al@example.org>\nCc: cy@example.org\nBcc: hidden@example.org\nSubject: s\n\nbody\n"
	const noFrom = "To: al@example.org\nSubject: s\n\nbody\n"
	addrs := func(list ...string) []core.Address {
		var out []core.Address
		for _, s := range list {
			a, _ := core.ParseAddress(s)
			out = append(out, a)
		}
		return out
	}
	tests := []struct {
		name          string
		args          []string
		in            string
		wantFrom      core.Address
		wantTo        []core.Address
		wantCc        []core.Address
		wantBcc       []core.Address
		wantCode      int
		wantErrSubstr string
	}{
		{name: "-t takes To, Cc and Bcc", args: []string{"-t"}, in: msg, wantFrom: core.Address{Name: "Site", Email: "site@example.org"},
			wantTo: addrs("Al <al@example.org>"), wantCc: addrs("cy@example.org"), wantBcc: addrs("hidden@example.org")},
		{name: "-t adds argument recipients as Bcc", args: []string{"-t", "extra@example.org"}, in: msg, wantFrom: core.Address{Name: "Site", Email: "site@example.org"},
			wantTo: addrs("Al <al@example.org>"), wantCc: addrs("cy@example.org"), wantBcc: addrs("hidden@example.org", "extra@example.org")},
		{name: "arguments only: the envelope wins", args: []string{"al@example.org, other@example.org"}, in: msg, wantFrom: core.Address{Name: "Site", Email: "site@example.org"},
			wantTo: addrs("Al <al@example.org>"), wantBcc: addrs("other@example.org")},
		{name: "-f and -F fill a missing From", args: []string{"-f", "cron@example.org", "-F", "Cron", "al@example.org"}, in: noFrom,
			wantFrom: core.Address{Name: "Cron", Email: "cron@example.org"}, wantTo: addrs("al@example.org")},
		{name: "-f does not replace a From header", args: []string{"-t", "-f", "cron@example.org"}, in: msg, wantFrom: core.Address{Name: "Site", Email: "site@example.org"},
			wantTo: addrs("Al <al@example.org>"), wantCc: addrs("cy@example.org"), wantBcc: addrs("hidden@example.org")},
		{name: "no recipients", args: nil, in: msg, wantCode: exitUsage, wantErrSubstr: "no recipients"},
		{name: "-t without recipient headers", args: []string{"-t"}, in: "Subject: s\n\nx\n", wantCode: exitDataErr, wantErrSubstr: "no recipient addresses"},
		{name: "bad recipient argument", args: []string{"not an address"}, in: msg, wantCode: exitUsage, wantErrSubstr: "not a valid address"},
		{name: "bad -f", args: []string{"-f", "nope", "a@example.org"}, in: msg, wantCode: exitUsage, wantErrSubstr: "-f"},
		{name: "unreadable message", args: []string{"-t"}, in: "To: a@example.org\nContent-Type: multipart/mixed\n\nx", wantCode: exitDataErr, wantErrSubstr: "no boundary"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseSendmailArgs(tt.args)
			if err != nil {
				t.Fatal(err)
			}
			m, err := buildSendmailMessage(o, strings.NewReader(tt.in))
			if tt.wantCode != 0 {
				var se *sendmailError
				if !errors.As(err, &se) || se.code != tt.wantCode || !strings.Contains(err.Error(), tt.wantErrSubstr) {
					t.Fatalf("error %v, want exit %d with %q", err, tt.wantCode, tt.wantErrSubstr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.From != tt.wantFrom || !reflect.DeepEqual(m.To, tt.wantTo) || !reflect.DeepEqual(m.Cc, tt.wantCc) || !reflect.DeepEqual(m.Bcc, tt.wantBcc) {
				t.Errorf("got From %v To %v Cc %v Bcc %v; want From %v To %v Cc %v Bcc %v", m.From, m.To, m.Cc, m.Bcc, tt.wantFrom, tt.wantTo, tt.wantCc, tt.wantBcc)
			}
			for _, h := range m.Headers {
				if strings.EqualFold(h.Name, "Bcc") {
					t.Errorf("Bcc header kept: %v", h)
				}
			}
		})
	}
}
