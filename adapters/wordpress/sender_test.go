package wordpress

import "testing"

func TestDefaultSender(t *testing.T) {
	for _, tt := range []struct{ home, want string }{
		{"https://www.Example.com", "wordpress@example.com"},
		{"https://shop.example.org/blog/", "wordpress@shop.example.org"},
		{"http://127.0.0.1:8080", "wordpress@127.0.0.1"},
		{"http://localhost", "wordpress@localhost"},
		{"https://wwwexample.com", "wordpress@wwwexample.com"},
		{"", ""},
		{"not a url", ""},
	} {
		if got := DefaultSender("wordpress", tt.home); got != tt.want {
			t.Errorf("DefaultSender(%q) = %q, want %q", tt.home, got, tt.want)
		}
	}
}
