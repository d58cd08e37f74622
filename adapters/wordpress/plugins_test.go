package wordpress

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

type failingOptions struct{}

func (failingOptions) Option(context.Context, string) (string, bool, error) {
	return "", false, errors.New("connection refused")
}

func TestPluginDir(t *testing.T) {
	tests := []struct {
		name    string
		defines map[string]string
		wpPath  string
		want    string
	}{
		{"WP_PLUGIN_DIR wins", map[string]string{"WP_PLUGIN_DIR": "/srv/p/", "WP_CONTENT_DIR": "/srv/c", "ABSPATH": "/srv/wp/"}, "/x", "/srv/p"},
		{"WP_CONTENT_DIR", map[string]string{"WP_CONTENT_DIR": "/srv/c", "ABSPATH": "/srv/wp/"}, "", "/srv/c/plugins"},
		{"ABSPATH", map[string]string{"ABSPATH": "/srv/wp/"}, "", "/srv/wp/wp-content/plugins"},
		{"MAILSVC_WP_PATH over ABSPATH", map[string]string{"ABSPATH": "/srv/wp/"}, "/var/www/html", "/var/www/html/wp-content/plugins"},
		{"unknown", map[string]string{}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PluginDir(tt.defines, tt.wpPath); got != tt.want {
				t.Errorf("PluginDir = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestActivePlugins(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"akismet/akismet.php": "<?php\n/**\n * @package Akismet\n */\n/*\nPlugin Name: Akismet Anti-spam: Spam Protection\nPlugin URI: https://akismet.com/\nVersion: 5.3.1\nRequires at least: 5.8\n*/\n",
		"hello.php":           "<?php\n/*\n * Plugin Name:   Hello Dolly   \n * Version: 1.7.2 */\n",
		"crlf/crlf.php":       "<?php\r\n/*\r\nPlugin Name: Windows Lines ?> trailing\r\nVersion: 2.0-beta\r\n*/\r\n",
		"one-line/one.php":    "<?php // Plugin Name: One Line\n# version: 0.1\n",
		"noheader/main.php":   "<?php\necho 'no headers';\n",
		"late/late.php":       "<?php\n" + strings.Repeat("// padding line\n", 600) + "/* Plugin Name: Too Late\nVersion: 9 */\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	arr := NewArray()
	for _, f := range []string{"akismet/akismet.php", "hello.php", "crlf/crlf.php", "one-line/one.php", "noheader/main.php", "late/late.php", "missing/gone.php", "../../etc.php", "/root.php", "dir/./x.php", "readme.txt"} {
		arr.Append(f)
	}
	active, err := Serialize(arr)
	if err != nil {
		t.Fatal(err)
	}
	all := []Plugin{
		{File: "akismet/akismet.php", Slug: "akismet", Name: "Akismet Anti-spam: Spam Protection", Version: "5.3.1"},
		{File: "hello.php", Slug: "hello", Name: "Hello Dolly", Version: "1.7.2"},
		{File: "crlf/crlf.php", Slug: "crlf", Name: "Windows Lines", Version: "2.0-beta"},
		{File: "one-line/one.php", Slug: "one-line", Name: "One Line", Version: "0.1"},
		{File: "noheader/main.php", Slug: "noheader"},
		{File: "late/late.php", Slug: "late"},
		{File: "missing/gone.php", Slug: "missing"},
	}
	bare := make([]Plugin, len(all))
	for i, p := range all {
		bare[i] = Plugin{File: p.File, Slug: p.Slug}
	}
	tests := []struct {
		name    string
		options OptionReader
		dir     string
		want    []Plugin
		wantErr bool
	}{
		{name: "headers read from the plugin directory", options: mapOptions{"active_plugins": active}, dir: dir, want: all},
		{name: "plugin directory unknown", options: mapOptions{"active_plugins": active}, want: bare},
		{name: "no option", options: mapOptions{}, dir: dir, want: []Plugin{}},
		{name: "empty array", options: mapOptions{"active_plugins": "a:0:{}"}, dir: dir, want: []Plugin{}},
		{name: "not an array", options: mapOptions{"active_plugins": "s:9:\"hello.php\";"}, dir: dir, want: []Plugin{}},
		{name: "database error", options: failingOptions{}, dir: dir, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := (&PluginReader{Options: tt.options, Dir: tt.dir}).ActivePlugins(context.Background())
			if tt.wantErr {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
