package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/store"
	"github.com/mailsvc/mailsvc/adapters/wordpress"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// TestGoWrittenUsersAcceptedByWordPress proves that what `mailsvc users
// add` writes is WordPress's own format: a real WordPress reading the same
// tables accepts the user, its role and its application password.
func TestGoWrittenUsersAcceptedByWordPress(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	site := wpsite.Install(t, wpsite.Options{})
	ctx := context.Background()
	db, err := store.Open(ctx, "mysql:"+site.DSN, site.Prefix, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	id, err := wordpress.CreateUser(ctx, db.Gorm(), site.Prefix, "gowriter", "gowriter@example.com", "administrator")
	if err != nil {
		t.Fatal(err)
	}
	pw, err := wordpress.CreateApplicationPassword(ctx, db.Gorm(), site.Prefix, id, "from go")
	if err != nil {
		t.Fatal(err)
	}
	out := site.PHP(t, fmt.Sprintf(`$_SERVER['HTTPS'] = 'on';
define( 'REST_REQUEST', true );
$u = wp_authenticate_application_password( null, 'gowriter', %s );
if ( is_wp_error( $u ) ) { echo 'error:' . $u->get_error_code(); exit; }
if ( ! $u instanceof WP_User ) { echo 'none'; exit; }
echo $u->ID . ' ' . implode( ',', $u->roles ) . ' ' . ( user_can( $u, 'manage_options' ) ? 'manage_options' : 'no-cap' );`, wpsite.PHPString(pw)))
	want := fmt.Sprintf("%d administrator manage_options", id)
	if strings.TrimSpace(out) != want {
		t.Fatalf("WordPress says %q for the Go-written user, want %q", out, want)
	}
}
