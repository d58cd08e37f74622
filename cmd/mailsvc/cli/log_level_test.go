package cli

import (
	"log/slog"
	"testing"
)

func TestLogLevel(t *testing.T) {
	tests := []struct {
		in   string
		want slog.Level
	}{
		{"", slog.LevelInfo},
		{"debug", slog.LevelDebug},
		{"DEBUG", slog.LevelDebug},
		{" warn ", slog.LevelWarn},
		{"error", slog.LevelError},
		{"info", slog.LevelInfo},
		{"loud", slog.LevelInfo},
	}
	for _, tt := range tests {
		if got := logLevel(tt.in); got != tt.want {
			t.Errorf("logLevel(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
