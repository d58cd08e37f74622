package fakeapi_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/test/fakes/fakeapi"
)

// TestParseRecipients: each field's strings parsed into its list, none
// for an empty field, and a bad mailbox refused under its field's name.
func TestParseRecipients(t *testing.T) {
	tests := []struct {
		to, cc, bcc []string
		wantTo      []fakeapi.Address
		wantBcc     []fakeapi.Address
		wantRefusal string
	}{
		{to: []string{`"Ann" <ann@example.com>`, "bob@example.com, cy@example.com"}, bcc: []string{"dee@example.com"},
			wantTo:  []fakeapi.Address{{Name: "Ann", Email: "ann@example.com"}, {Email: "bob@example.com"}, {Email: "cy@example.com"}},
			wantBcc: []fakeapi.Address{{Email: "dee@example.com"}}},
		{to: []string{"ann@example.com"}, cc: []string{"not a mailbox"}, wantRefusal: "cc"},
	}
	for _, tc := range tests {
		var m fakeapi.Mail
		r := fakeapi.ParseRecipients(&m, tc.to, tc.cc, tc.bcc)
		if tc.wantRefusal != "" {
			if r == nil || !strings.Contains(r.Message, tc.wantRefusal) {
				t.Errorf("%v: no refusal, want one of %s", tc.cc, tc.wantRefusal)
			}
			continue
		}
		if r != nil || !reflect.DeepEqual(m.To, tc.wantTo) || m.Cc != nil || !reflect.DeepEqual(m.Bcc, tc.wantBcc) {
			t.Errorf("%v %v %v: %+v %v, want to %+v bcc %+v", tc.to, tc.cc, tc.bcc, m, r, tc.wantTo, tc.wantBcc)
		}
	}
}

// TestSetEnvelope: sender, recipients and the one Reply-To converted,
// no Reply-To when the provider's is absent.
func TestSetEnvelope(t *testing.T) {
	type wire struct{ N, E string }
	conv := func(a wire) fakeapi.Address { return fakeapi.Address{Name: a.N, Email: a.E} }
	reply := wire{E: "r@example.com"}
	tests := []struct {
		replyTo *wire
		want    []fakeapi.Address
	}{
		{&reply, []fakeapi.Address{{Email: "r@example.com"}}},
		{nil, nil},
	}
	for _, tc := range tests {
		var m fakeapi.Mail
		fakeapi.SetEnvelope(&m, conv, wire{"Site", "site@example.com"}, []wire{{E: "a@example.com"}}, nil, []wire{{E: "b@example.com"}}, tc.replyTo)
		if m.From != (fakeapi.Address{Name: "Site", Email: "site@example.com"}) || len(m.To) != 1 || len(m.Cc) != 0 || len(m.Bcc) != 1 ||
			m.Bcc[0].Email != "b@example.com" || !reflect.DeepEqual(m.ReplyTo, tc.want) {
			t.Errorf("reply-to %v: %+v", tc.replyTo, m)
		}
	}
}
