package wordpress

import (
	"github.com/mailsvc/mailsvc/internal/testenv"

	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/mailsvc/mailsvc/core"
)

// TestDefaultRolesMatchWordPress regenerates the roles option by running
// the populate_roles*() functions of the installed schema.php under PHP.
func TestDefaultRolesMatchWordPress(t *testing.T) {
	php := requirePHP(t)
	src, err := os.ReadFile(testenv.WordPressFile(t, "wp-admin/includes/schema.php"))
	if err != nil {
		t.Fatal(err)
	}
	// Every populate_roles*() function, verbatim.
	re := regexp.MustCompile(`(?s)\nfunction populate_roles(_\d+)?\(\) \{.*?\n\}\n`)
	funcs := re.FindAllString(string(src), -1)
	if len(funcs) < 9 {
		t.Fatalf("found %d populate_roles functions in schema.php", len(funcs))
	}
	file := filepath.Join(t.TempDir(), "roles_funcs.php")
	if err := os.WriteFile(file, []byte("<?php\n"+strings.Join(funcs, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(php, "testdata/php/populate_roles.php", file).Output()
	if err != nil {
		t.Fatalf("php: %v", err)
	}
	if string(out) != DefaultUserRoles() {
		t.Fatalf("populate_roles() gives\n%s\nembedded\n%s", out, DefaultUserRoles())
	}
	roles, ok := MaybeUnserialize(DefaultUserRoles()).(*Array)
	if !ok {
		t.Fatal("embedded roles do not unserialize")
	}
	want := map[string]int{"administrator": 61, "editor": 34, "author": 10, "contributor": 5, "subscriber": 2}
	for name, n := range want {
		def, _ := roles.Get(name)
		caps, _ := def.(*Array).Get("capabilities")
		if caps.(*Array).Len() != n {
			t.Errorf("%s has %d caps, want %d", name, caps.(*Array).Len(), n)
		}
	}
}

func TestEnsureSchemaIdempotent(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		for i := 0; i < 2; i++ {
			if err := EnsureSchema(ctx, db, "ms_", WithSiteURL("https://mail.example.com/")); err != nil {
				t.Fatalf("EnsureSchema #%d: %v", i+1, err)
			}
		}
		if err := EnsureSchema(ctx, db, "ms_", WithSiteURL("https://changed.example.com")); err != nil {
			t.Fatal(err)
		}
		src, _ := NewGormSource(db, "ms_")
		for name, want := range map[string]string{"siteurl": "https://mail.example.com", "home": "https://mail.example.com", "ms_user_roles": DefaultUserRoles()} {
			v, found, err := src.Option(ctx, name)
			if err != nil || !found || v != want {
				t.Errorf("option %s = %q, %v, %v; want %q", name, v, found, err, want)
			}
		}
		var n int64
		db.Raw("SELECT COUNT(*) FROM ms_options").Row().Scan(&n)
		if n != 3 {
			t.Errorf("%d option rows, want 3", n)
		}
		if err := EnsureSchema(ctx, db, "bad-prefix"); err == nil {
			t.Error("EnsureSchema accepted an invalid prefix")
		}
	})
}

func TestCreateUserAndApplicationPassword(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		ctx := context.Background()
		if err := EnsureSchema(ctx, db, "wp_"); err != nil {
			t.Fatal(err)
		}
		id, err := CreateUser(ctx, db, "wp_", "Jane.Doe@Example", "jane@example.com", "administrator")
		if err != nil {
			t.Fatalf("CreateUser: %v", err)
		}
		src, _ := NewGormSource(db, "wp_")
		u, err := src.UserByID(ctx, id)
		if err != nil || u == nil {
			t.Fatalf("UserByID = %v, %v", u, err)
		}
		if u.Login != "Jane.Doe@Example" || u.DisplayName != "Jane.Doe@Example" || !strings.HasPrefix(u.Pass, "$P$B") || len(u.Pass) != 34 {
			t.Fatalf("user row %+v", u)
		}
		var nicename string
		db.Raw("SELECT user_nicename FROM wp_users WHERE ID = ?", id).Row().Scan(&nicename)
		if nicename != "jane-doeexample" {
			t.Errorf("user_nicename = %q", nicename)
		}
		if got := userMeta(t, db, "wp_", id, "wp_capabilities"); got != `a:1:{s:13:"administrator";b:1;}` {
			t.Errorf("capabilities = %q", got)
		}
		if got := userMeta(t, db, "wp_", id, "wp_user_level"); got != "10" {
			t.Errorf("user_level = %q", got)
		}

		// Same nicename base gets a suffix; duplicates are refused.
		id2, err := CreateUser(ctx, db, "wp_", "jane-doe@example", "jane2@example.com", "subscriber")
		if err != nil {
			t.Fatalf("CreateUser 2: %v", err)
		}
		db.Raw("SELECT user_nicename FROM wp_users WHERE ID = ?", id2).Row().Scan(&nicename)
		if nicename != "jane-doeexample-2" {
			t.Errorf("second user_nicename = %q", nicename)
		}
		if got := userMeta(t, db, "wp_", id2, "wp_user_level"); got != "0" {
			t.Errorf("subscriber user_level = %q", got)
		}
		errs := []struct {
			login, email, role, code string
		}{
			{"JANE.DOE@EXAMPLE", "other@example.com", "editor", core.ECONFLICT},
			{"other", "JANE@example.com", "editor", core.ECONFLICT},
			{"other", "other@example.com", "ghost", core.EINVALID},
			{"bad<login>", "other@example.com", "editor", core.EINVALID},
			{"héloïse", "other@example.com", "editor", core.EINVALID},
			{"", "other@example.com", "editor", core.EINVALID},
			{strings.Repeat("x", 61), "other@example.com", "editor", core.EINVALID},
			{"other", "not-an-email", "editor", core.EINVALID},
			{"other", "other@example.com", "", core.EINVALID},
		}
		for _, e := range errs {
			if _, err := CreateUser(ctx, db, "wp_", e.login, e.email, e.role); core.ErrorCode(err) != e.code {
				t.Errorf("CreateUser(%q, %q, %q) error %v, want %s", e.login, e.email, e.role, err, e.code)
			}
		}

		if v, found, _ := src.Option(ctx, appPasswordsInUseName); found {
			t.Fatalf("using_application_passwords = %q before any password", v)
		}
		pw, err := CreateApplicationPassword(ctx, db, "wp_", id, "CLI")
		if err != nil {
			t.Fatalf("CreateApplicationPassword: %v", err)
		}
		if !regexp.MustCompile(`^[A-Za-z0-9]{24}$`).MatchString(pw) {
			t.Fatalf("password %q", pw)
		}
		pw2, err := CreateApplicationPassword(ctx, db, "wp_", id, "second")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := CreateApplicationPassword(ctx, db, "wp_", id, "CLI"); core.ErrorCode(err) != core.ECONFLICT {
			t.Errorf("duplicate name error %v", err)
		}
		if _, err := CreateApplicationPassword(ctx, db, "wp_", 9999, "x"); core.ErrorCode(err) != core.ENOTFOUND {
			t.Errorf("unknown user error %v", err)
		}
		if _, err := CreateApplicationPassword(ctx, db, "wp_", id, "  "); core.ErrorCode(err) != core.EINVALID {
			t.Errorf("empty name error %v", err)
		}
		if v, _, _ := src.Option(ctx, appPasswordsInUseName); v != "1" {
			t.Errorf("using_application_passwords = %q", v)
		}
		items, ok := MaybeUnserialize(userMeta(t, db, "wp_", id, "_application_passwords")).(*Array)
		if !ok || items.Len() != 2 {
			t.Fatalf("items = %#v", items)
		}
		for i, want := range []struct{ name, pw string }{{"CLI", pw}, {"second", pw2}} {
			k, v := items.At(i)
			item := v.(*Array)
			if k != int64(i) || !slices.Equal(item.Keys(), []any{"uuid", "app_id", "name", "password", "created", "last_used", "last_ip"}) {
				t.Fatalf("item %d keys %v", i, item.Keys())
			}
			name, _ := item.Get("name")
			hash, _ := item.Get("password")
			uuid, _ := item.Get("uuid")
			lastUsed, _ := item.Get("last_used")
			if name != want.name || !PHPassCheck(want.pw, fmt.Sprint(hash)) || lastUsed != nil ||
				!regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(uuid.(string)) {
				t.Fatalf("item %d = %v %v %v %v", i, name, hash, uuid, lastUsed)
			}
		}

		// The authenticator accepts what was written, with its capabilities.
		a := NewAuthenticator(src, Site{EnvironmentType: "local"})
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("jane.doe@example:"+ChunkPassword(pw2))))
		got, err := a.Authenticate(r, false)
		if err != nil || got == nil || got.ID != id || !got.Can("manage_options") || !slices.Equal(got.Roles, []string{"administrator"}) {
			t.Fatalf("Authenticate = %+v, %v", got, err)
		}
	})
}
