package bridge_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/wordpress"
	"github.com/mailsvc/mailsvc/adapters/wordpress/bridge"
	"github.com/mailsvc/mailsvc/test/wpsite"
	"gorm.io/driver/mysql"
	"gorm.io/gorm"
)

// TestBridgePublishesServiceFilters registers the spec's four filters
// that govern the service in a real site, lets the bridge run, and reads
// the results back the way the service does: a filter's result is
// published when it differs from the default the filter was given, and
// withdrawn when the filter goes.
func TestBridgePublishesServiceFilters(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	site := wpsite.Install(t, wpsite.Options{Prefix: "wpf_", ExtraConfig: "define( 'MAILSVC_SENSITIVE_KEYS', 'region' );\n"})
	if _, err := bridge.Install(site.ContentDir); err != nil {
		t.Fatal(err)
	}
	gdb, err := gorm.Open(mysql.Open(site.DSN), &gorm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	src, err := wordpress.NewGormSource(gdb, site.Prefix)
	if err != nil {
		t.Fatal(err)
	}
	read := func() wordpress.FilterResults {
		t.Helper()
		r, err := wordpress.ReadFilterResults(context.Background(), src)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	plugin := filepath.Join(site.ContentDir, "mu-plugins", "service-filters.php")
	load := func(code string) {
		t.Helper()
		if err := os.WriteFile(plugin, []byte("<?php\n"+code), 0o644); err != nil {
			t.Fatal(err)
		}
		site.PHP(t, `echo "a page load runs the bridge";`)
	}

	site.PHP(t, `echo "loaded";`)
	if got := read(); !reflect.DeepEqual(got, wordpress.FilterResults{}) {
		t.Fatalf("without filters the service sees %+v", got)
	}

	zero, doubled, on := int64(0), int64(180), true
	tests := []struct {
		name string
		code string
		want wordpress.FilterResults
	}{
		{"every filter changes its value", `
add_filter( 'mail_svc_rest_capability', function () { return 'manage_mail'; } );
add_filter( 'mail_svc_sensitive_keys', function ( $keys ) { $keys[] = 'client_id'; return $keys; } );
add_filter( 'mail_svc_log_retention_days', '__return_zero' );
add_filter( 'mail_svc_api_debug_response_enabled', '__return_true' );
`, wordpress.FilterResults{RESTCapability: "manage_mail", SensitiveKeys: []string{"client_id"}, LogRetentionDays: &zero, APIDebugResponseEnabled: &on}},
		{"filters given the defaults: the constant's keys, the retention setting (90 unless stored)", `
add_filter( 'mail_svc_sensitive_keys', function ( $keys ) { return 'region' === implode( ',', $keys ) ? array( 'region', 'host' ) : array( 'wrong-default' ); } );
add_filter( 'mail_svc_log_retention_days', function ( $days ) { return 2 * $days; } );
`, wordpress.FilterResults{SensitiveKeys: []string{"host"}, LogRetentionDays: &doubled}},
		{"filters returning their default publish nothing", `
add_filter( 'mail_svc_rest_capability', function ( $cap ) { return $cap; } );
add_filter( 'mail_svc_sensitive_keys', function ( $keys ) { return $keys; } );
add_filter( 'mail_svc_log_retention_days', function ( $days ) { return $days; } );
add_filter( 'mail_svc_api_debug_response_enabled', '__return_false' );
`, wordpress.FilterResults{}},
		{"a filter back after being withdrawn", `
add_filter( 'mail_svc_rest_capability', function () { return 'manage_mail'; } );
`, wordpress.FilterResults{RESTCapability: "manage_mail"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			load(tt.code)
			if got := read(); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("published %+v, want %+v", got, tt.want)
			}
		})
	}

	if err := os.Remove(plugin); err != nil {
		t.Fatal(err)
	}
	site.PHP(t, `echo "loaded";`)
	if got := read(); !reflect.DeepEqual(got, wordpress.FilterResults{}) {
		t.Fatalf("after removing the filters the service still sees %+v", got)
	}
}
