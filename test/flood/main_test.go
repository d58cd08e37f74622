// Package flood tests the flood guard through the built binary: one
// source of a site floods past its threshold over the SMTP submission
// listener while the site's other mail keeps flowing; the excess is
// held with one alert, and held mail is released (delivered once) or
// discarded (failed) by the filters of the log list.
package flood

import (
	"testing"

	"github.com/mailsvc/mailsvc/test/servicetest"
)

func TestMain(m *testing.M) { servicetest.Main(m) }
