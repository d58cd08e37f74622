// Package admin tests the admin screens in a real browser: Debian's
// chromium, headless, driven by chromedp, against the built binary with a
// real SMTP sink, and inside wp-admin beside a real WordPress site.
package admin

import (
	"testing"

	"github.com/mailsvc/mailsvc/test/servicetest"
)

func TestMain(m *testing.M) { servicetest.Main(m) }
