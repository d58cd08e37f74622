package store_test

import (
	"reflect"
	"testing"

	prostore "github.com/mailsvc/mailsvc/adapters/pro/store"
	"github.com/mailsvc/mailsvc/adapters/store"
)

// TestNoProStoreServiceHasMoreThan30Methods counts the exported methods
// of every service a Pro DB method returns (the service's own
// TestNoStoreTypeHasMoreThan30Methods counts the base store's), and the
// methods the Pro DB adds to the store.DB it embeds.
func TestNoProStoreServiceHasMoreThan30Methods(t *testing.T) {
	const most = 30
	db := reflect.TypeOf(&prostore.DB{})
	base := reflect.TypeOf(&store.DB{})
	if added := db.NumMethod() - base.NumMethod(); added > most {
		t.Errorf("the Pro DB adds %d exported methods, more than %d", added, most)
	}
	var services int
	for i := range db.NumMethod() {
		m := db.Method(i)
		if _, inherited := base.MethodByName(m.Name); inherited || m.Type.NumIn() != 1 || m.Type.NumOut() != 1 {
			continue
		}
		out := m.Type.Out(0)
		if out.Kind() != reflect.Pointer || out.Elem().PkgPath() != db.Elem().PkgPath() {
			continue
		}
		services++
		t.Run(out.Elem().Name(), func(t *testing.T) {
			if n := out.NumMethod(); n > most {
				t.Errorf("%s has %d exported methods, more than %d: move a concept's methods to its own service", out, n, most)
			}
		})
	}
	if services < 4 {
		t.Fatalf("found %d services; want Routing, Suppressions, Events and Analytics at least", services)
	}
}
