package testenv

import "testing"

func TestCompareVersions(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"6.1.9", "6.8", -1},
		{"7.1.4", "6.8", 1},
		{"6.8", "6.8.0", 0},
		{"7.1-RC1", "7.1", 0},
		{"7.10", "7.9", 1},
		{"6.1.9", "6.1.10", -1},
	} {
		if got := CompareVersions(tt.a, tt.b); got != tt.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestWordPressDir(t *testing.T) {
	t.Setenv(WordPressDirEnv, "")
	if got := WordPressDir(); got != DefaultWordPressDir {
		t.Errorf("unset: %q, want %q", got, DefaultWordPressDir)
	}
	t.Setenv(WordPressDirEnv, "/opt/wordpress-7.1")
	if got := WordPressDir(); got != "/opt/wordpress-7.1/" {
		t.Errorf("set: %q, want a trailing slash", got)
	}
}
