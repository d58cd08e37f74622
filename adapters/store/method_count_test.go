package store_test

import (
	"reflect"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/store"
)

// maxExportedMethods is the most exported methods a type of the store may
// have: past it, the methods of another concept belong in a service of
// their own (services.go).
const maxExportedMethods = 30

// TestNoStoreTypeHasMoreThan30Methods counts the exported methods, the
// promoted ones included, of DB and of every service a DB method returns,
// so a service added later is counted too.
func TestNoStoreTypeHasMoreThan30Methods(t *testing.T) {
	db := reflect.TypeOf(&store.DB{})
	types := []reflect.Type{db}
	for i := range db.NumMethod() {
		m := db.Method(i).Type // the receiver is its first input
		if m.NumIn() != 1 || m.NumOut() != 1 {
			continue
		}
		out := m.Out(0)
		if out.Kind() == reflect.Pointer && out.Elem().PkgPath() == db.Elem().PkgPath() && out.Elem().Kind() == reflect.Struct {
			types = append(types, out)
		}
	}
	if len(types) < 10 {
		t.Fatalf("found %d types; want DB and its services", len(types))
	}
	for _, typ := range types {
		t.Run(typ.Elem().Name(), func(t *testing.T) {
			if n := typ.NumMethod(); n > maxExportedMethods {
				t.Errorf("%s has %d exported methods, more than %d: move a concept's methods to its own service", typ, n, maxExportedMethods)
			}
		})
	}
}
