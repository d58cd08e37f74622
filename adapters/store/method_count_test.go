package store_test

import (
	"reflect"
	"testing"

	prostore "github.com/mailsvc/mailsvc/adapters/pro/store"
	"github.com/mailsvc/mailsvc/adapters/store"
)

// maxExportedMethods is the most exported methods a type of the store may
// have: past it, the methods of another concept belong in a service of
// their own (services.go).
const maxExportedMethods = 30

// TestNoStoreTypeHasMoreThan30Methods counts the exported methods, the
// promoted ones included, of the service's DB and the Pro add-on's, and
// of every service a method of either returns, so a service added later
// is counted too.
func TestNoStoreTypeHasMoreThan30Methods(t *testing.T) {
	for _, tt := range []struct {
		name         string
		db           reflect.Type
		leastService int // how many services the DB has at least
	}{
		{"store", reflect.TypeOf(&store.DB{}), 9},
		{"pro store", reflect.TypeOf(&prostore.DB{}), 4}, // Routing, Suppressions, Events, Analytics
	} {
		t.Run(tt.name, func(t *testing.T) {
			types := []reflect.Type{tt.db}
			for i := range tt.db.NumMethod() {
				m := tt.db.Method(i).Type // the receiver is its first input
				if m.NumIn() != 1 || m.NumOut() != 1 {
					continue
				}
				out := m.Out(0)
				if out.Kind() == reflect.Pointer && out.Elem().PkgPath() == tt.db.Elem().PkgPath() && out.Elem().Kind() == reflect.Struct {
					types = append(types, out)
				}
			}
			if len(types) <= tt.leastService {
				t.Fatalf("found %d services; want %d at least", len(types)-1, tt.leastService)
			}
			for _, typ := range types {
				t.Run(typ.Elem().Name(), func(t *testing.T) {
					if n := typ.NumMethod(); n > maxExportedMethods {
						t.Errorf("%s has %d exported methods, more than %d: move a concept's methods to its own service", typ, n, maxExportedMethods)
					}
				})
			}
		})
	}
}
