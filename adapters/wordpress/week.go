package wordpress

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// StartOfWeek returns the first day of the site's week, the option
// start_of_week (0 is Sunday … 6 Saturday, as get_weekstartday() reads
// it); Monday, WordPress's default, when it is missing or not a day.
func StartOfWeek(ctx context.Context, options OptionReader) (time.Weekday, error) {
	v, found, err := options.Option(ctx, "start_of_week")
	if err != nil {
		return 0, fmt.Errorf("read the site's start of week: %w", err)
	}
	if !found {
		return time.Monday, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 || n > 6 {
		return time.Monday, nil
	}
	return time.Weekday(n), nil
}
