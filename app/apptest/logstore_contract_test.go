package apptest_test

import (
	"testing"

	"github.com/mailsvc/mailsvc/adapters/store/storetest"
	"github.com/mailsvc/mailsvc/app/apptest"
)

// TestLogStoreContract runs the store's log and queue contract against the
// in-memory log store, so the app tests built on it see what SQLite and
// MariaDB give.
func TestLogStoreContract(t *testing.T) {
	storetest.Run(t, func(*testing.T) storetest.Store {
		return storetest.Store{Logs: apptest.NewLogStore()}
	})
}
