package store_test

import (
	"slices"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/store/storetest"
	"github.com/mailsvc/mailsvc/internal/testdb"
)

// suite runs the Pro tables' contract tests against one database; each
// subtest uses its own table prefix.
type suite struct {
	dsn string
	// prefix returns a table prefix no other subtest of this run uses.
	prefix func() string
}

// newSuite returns the suite of the database dsn.
func newSuite(dsn string) *suite { return &suite{dsn: dsn, prefix: storetest.Prefixes("p%02d_")} }

// run runs every contract test of the Pro tables against dsn.
func run(t *testing.T, dsn string) {
	s := newSuite(dsn)
	for _, tt := range slices.Concat(s.routingTests(), s.suppressionTests(), s.eventTests(), s.analyticsTests()) {
		t.Run(tt.name, tt.fn)
	}
}

func TestSQLiteContract(t *testing.T) { run(t, testdb.SQLite(t)) }

func TestMySQLContract(t *testing.T) { run(t, testdb.MySQL(t)) }

// open opens and migrates the database under prefix, with the Pro tables.
func (s *suite) open(t *testing.T, prefix string) *proDB {
	t.Helper()
	return newProDB(storetest.Open(t, s.dsn, prefix))
}
