package store_test

import (
	"reflect"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/store"
)

func TestCountScratch(t *testing.T) {
	db := &store.DB{}
	for _, v := range []any{db, db.Logs(), db.SearchIndex(), db.Connections(), db.Rollups(), db.Schema(), db.Installation(), db.HostHooks()} {
		t.Log(reflect.TypeOf(v), reflect.TypeOf(v).NumMethod())
	}
}
