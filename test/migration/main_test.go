// Package migration proves the import from other SMTP plugins end to end:
// a real WordPress site whose options and log tables were written by PHP
// exactly as each plugin writes them, the built mailsvc serving that site,
// and the scan, dry run, import, re-import and log chunks through its REST
// API and `mailsvc import`.
package migration

import (
	"testing"

	"github.com/mailsvc/mailsvc/test/servicetest"
)

func TestMain(m *testing.M) { servicetest.Main(m) }
