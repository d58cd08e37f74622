package wordpress

import (
	"context"
	"slices"
	"testing"
)

// TestLogRedactPatterns reads the option the bridge writes (a serialized
// PHP list) as the service does.
func TestLogRedactPatterns(t *testing.T) {
	tests := []struct {
		name string
		opts OptionReader
		want []string
		err  bool
	}{
		{"no option", mapOptions{}, nil, false},
		{"a list", mapOptions{LogRedactPatternsOption: `a:2:{i:0;s:15:"/order-[0-9]+/i";i:1;s:10:"pin: (\d+)";}`},
			[]string{`/order-[0-9]+/i`, `pin: (\d+)`}, false},
		{"not a list", mapOptions{LogRedactPatternsOption: "garbage"}, nil, false},
		{"unreadable", failingOptions{}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := (&LogRedactPatterns{Options: tt.opts}).Patterns(context.Background())
			if (err != nil) != tt.err || !slices.Equal(got, tt.want) {
				t.Errorf("Patterns = %q, %v; want %q (error %v)", got, err, tt.want, tt.err)
			}
		})
	}
}
