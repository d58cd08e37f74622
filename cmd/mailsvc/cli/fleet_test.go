package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestFleetSites checks how the sites of a fleet are found: the --site
// flags, else MAILSVC_SITES, with glob patterns expanded and a site
// given twice served once.
func TestFleetSites(t *testing.T) {
	root := t.TempDir()
	var configs []string
	for _, d := range []string{"a", "b", "c"} {
		p := filepath.Join(root, d, "wp-config.php")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("<?php\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		configs = append(configs, p)
	}
	glob := filepath.Join(root, "*", "wp-config.php")
	for _, tc := range []struct {
		name    string
		flags   []string
		env     string
		want    []string
		wantErr string
	}{
		{"none: no fleet", nil, "", nil, ""},
		{"the flags", []string{configs[1], configs[0]}, "", []string{configs[1], configs[0]}, ""},
		{"the flags win over the environment", []string{configs[2]}, configs[0], []string{configs[2]}, ""},
		{"the environment's list", nil, configs[0] + " , " + configs[2] + ",", []string{configs[0], configs[2]}, ""},
		{"a pattern, sorted", nil, glob, configs, ""},
		{"a site given twice is served once", []string{configs[0], glob}, "", configs, ""},
		{"a pattern that matches nothing", nil, filepath.Join(root, "*", "nothing.php"), nil, "matches no wp-config.php"},
		{"a bad pattern", []string{filepath.Join(root, "[")}, "", nil, "syntax error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("MAILSVC_SITES", tc.env)
			got, err := fleetSites(tc.flags)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("fleetSites = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestLoadFleetRefusesSharedSettings checks that a fleet refuses what
// the environment would give every site alike (a database, a key, a
// listener), and two sites with the same salts.
func TestLoadFleetRefusesSharedSettings(t *testing.T) {
	write := func(name, salt string) string {
		p := filepath.Join(t.TempDir(), "wp-config.php")
		src := "<?php\ndefine( 'DB_NAME', '" + name + "' );\ndefine( 'DB_USER', 'root' );\n"
		for _, s := range encryptionSaltNames[:8] {
			src += "define( '" + s + "', '" + salt + "-" + s + "' );\n"
		}
		if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b, twin := write("a", "salt-a"), write("b", "salt-b"), write("twin", "salt-a")
	for _, tc := range []struct {
		name    string
		env     map[string]string
		paths   []string
		wantErr string
	}{
		{"two sites", nil, []string{a, b}, ""},
		{"one database for all", map[string]string{"MAILSVC_DB": "sqlite:/tmp/x.db"}, []string{a, b}, "MAILSVC_DB is set in the environment"},
		{"one listener for all", map[string]string{"MAILSVC_SMTP_LISTEN": "127.0.0.1:2525"}, []string{a, b}, "MAILSVC_SMTP_LISTEN"},
		{"one key for all", map[string]string{"MAIL_SVC_ENCRYPTION_KEY": "k"}, []string{a, b}, "MAIL_SVC_ENCRYPTION_KEY"},
		{"two sites with the same salts", nil, []string{a, twin}, "have the same salts"},
		{"a wp-config.php that is not there", nil, []string{a, filepath.Join(t.TempDir(), "wp-config.php")}, "wp-config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range fleetSiteEnvironment {
				t.Setenv(k, "")
			}
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			members, err := loadFleet(t.Context(), tc.paths, newLogger())
			if tc.wantErr == "" {
				if err != nil || len(members) != len(tc.paths) {
					t.Fatalf("loadFleet: %d sites, %v", len(members), err)
				}
				if members[0].Key() == "" || members[0].Key() == members[1].Key() {
					t.Errorf("site keys %q and %q: want two, known at once", members[0].Key(), members[1].Key())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err %v, want %q", err, tc.wantErr)
			}
		})
	}
}
