package wordpress

import (
	"context"
	"testing"
	"time"
)

func TestStartOfWeek(t *testing.T) {
	tests := []struct {
		name    string
		options mapOptions
		want    time.Weekday
	}{
		{"Sunday", mapOptions{"start_of_week": "0"}, time.Sunday},
		{"Monday", mapOptions{"start_of_week": "1"}, time.Monday},
		{"Saturday, with spaces", mapOptions{"start_of_week": " 6 "}, time.Saturday},
		{"missing: Monday", mapOptions{}, time.Monday},
		{"empty: Monday", mapOptions{"start_of_week": ""}, time.Monday},
		{"out of range: Monday", mapOptions{"start_of_week": "7"}, time.Monday},
		{"negative: Monday", mapOptions{"start_of_week": "-1"}, time.Monday},
		{"not a number: Monday", mapOptions{"start_of_week": "sunday"}, time.Monday},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := StartOfWeek(context.Background(), tt.options)
			if err != nil || got != tt.want {
				t.Errorf("StartOfWeek = %s, %v; want %s", got, err, tt.want)
			}
		})
	}
	if _, err := StartOfWeek(context.Background(), failingOptions{}); err == nil {
		t.Error("a failed read gave no error")
	}
}
