package core

import (
	"regexp"
	"testing"
)

// TestNewMessageID: 32 lower-case base32 characters at the sender's
// domain (lower-cased), or at mailsvc.localhost; never the same twice.
func TestNewMessageID(t *testing.T) {
	for _, tc := range []struct {
		sender string
		want   string
	}{
		{"shop@Example.COM", `^[a-z2-7]{32}@example\.com$`},
		{"shop@example.com", `^[a-z2-7]{32}@example\.com$`},
		{"nobody", `^[a-z2-7]{32}@mailsvc\.localhost$`},
		{"a@b@[127.0.0.1]", `^[a-z2-7]{32}@mailsvc\.localhost$`},
	} {
		id, err := NewMessageID(tc.sender)
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(tc.want).MatchString(id) {
			t.Errorf("NewMessageID(%q) = %q, want %s", tc.sender, id, tc.want)
		}
		if again, _ := NewMessageID(tc.sender); again == id {
			t.Errorf("NewMessageID(%q) gave %q twice", tc.sender, id)
		}
	}
}
