package smtpsink_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/emersion/go-smtp"

	"github.com/mailsvc/mailsvc/test/fakes/smtpsink"
)

// xoauth2Client is the client side of SASL XOAUTH2.
type xoauth2Client struct{ user, token string }

func (c xoauth2Client) Start() (string, []byte, error) {
	return "XOAUTH2", []byte("user=" + c.user + "\x01auth=Bearer " + c.token + "\x01\x01"), nil
}

func (c xoauth2Client) Next([]byte) ([]byte, error) { return []byte{}, nil }

func TestSinkXOAUTH2(t *testing.T) {
	tests := []struct {
		name      string
		user, tok string
		wantCode  int // 0: accepted
	}{
		{name: "approved token", user: "box@example.com", tok: "good-token"},
		{name: "refused token", user: "box@example.com", tok: "stale-token", wantCode: 535},
		{name: "other mailbox", user: "else@example.com", tok: "good-token", wantCode: 535},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var (
				mu   sync.Mutex
				seen []string
			)
			s := smtpsink.Start(t, smtpsink.WithXOAUTH2(func(user, token string) bool {
				mu.Lock()
				defer mu.Unlock()
				seen = append(seen, user+" "+token)
				return user == "box@example.com" && token == "good-token"
			}))
			c := dial(t, s, smtpsink.TLSNone)
			if ok, mechs := c.Extension("AUTH"); !ok || !strings.Contains(mechs, "XOAUTH2") || strings.Contains(mechs, "PLAIN") {
				t.Fatalf("AUTH extension = %v %q, want XOAUTH2 only", ok, mechs)
			}
			err := c.Auth(xoauth2Client{tc.user, tc.tok})
			if tc.wantCode != 0 {
				var se *smtp.SMTPError
				if !errors.As(err, &se) || se.Code != tc.wantCode {
					t.Fatalf("Auth = %v, want %d", err, tc.wantCode)
				}
				if s.AuthFailures() != 1 || s.Auths() != 0 {
					t.Fatalf("auths %d failures %d, want 0 and 1", s.Auths(), s.AuthFailures())
				}
				if err := c.Mail("a@example.com", nil); err == nil {
					t.Fatal("MAIL accepted without AUTH")
				}
				return
			}
			if err != nil {
				t.Fatalf("Auth: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(seen) != 1 || seen[0] != tc.user+" "+tc.tok {
				t.Fatalf("validator saw %q", seen)
			}
			if err := c.SendMail("a@example.com", []string{"b@example.org"}, strings.NewReader(body)); err != nil {
				t.Fatalf("SendMail: %v", err)
			}
			got := s.AwaitOne(t)
			if got.Username != tc.user {
				t.Fatalf("Username = %q, want %q", got.Username, tc.user)
			}
		})
	}
}

func TestSinkXOAUTH2RefusesPasswordLogin(t *testing.T) {
	s := smtpsink.Start(t, smtpsink.WithXOAUTH2(func(string, string) bool { return true }))
	c := dial(t, s, smtpsink.TLSNone)
	var se *smtp.SMTPError
	if err := c.Auth(plainEmpty{}); !errors.As(err, &se) || se.Code != 504 {
		t.Fatalf("AUTH PLAIN = %v, want 504", err)
	}
}

// plainEmpty tries AUTH PLAIN with empty credentials.
type plainEmpty struct{}

func (plainEmpty) Start() (string, []byte, error) { return "PLAIN", []byte("\x00\x00"), nil }
func (plainEmpty) Next([]byte) ([]byte, error)    { return nil, errors.New("unexpected challenge") }
