package core

import "testing"

func TestParseLogSearch(t *testing.T) {
	tests := []struct {
		term string
		want LogSearch
	}{
		{"", LogSearch{}},
		{" Ann@Example.com ", LogSearch{Address: "ann@example.com"}},
		{"@Acme.COM", LogSearch{Domain: "acme.com"}},
		{"@acme.com.", LogSearch{Domain: "acme.com"}},
		{"@", LogSearch{Words: "@"}},
		{"@bad..domain", LogSearch{Words: "@bad..domain"}},
		{"user5000@", LogSearch{Prefix: "user5000@"}},
		{"user5000", LogSearch{Fragment: "user5000", Words: "user5000"}},
		{"example79.test", LogSearch{Fragment: "example79.test", Domain: "example79.test", Words: "example79.test"}},
		{"john.smith", LogSearch{Fragment: "john.smith", Domain: "john.smith", Words: "john.smith"}},
		{"ab", LogSearch{Words: "ab"}},
		{"abc", LogSearch{Fragment: "abc", Words: "abc"}},
		{"invoice may", LogSearch{Words: "invoice may"}},
		{"a@b@c", LogSearch{Words: "a@b@c"}},
	}
	for _, tt := range tests {
		if got := ParseLogSearch(tt.term); got != tt.want {
			t.Errorf("ParseLogSearch(%q) = %+v, want %+v", tt.term, got, tt.want)
		}
	}
	if (LogSearch{Words: "x"}).ByAddressPart() || !(LogSearch{Prefix: "a@"}).ByAddressPart() {
		t.Error("ByAddressPart")
	}
}
