package wordpress

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// Plugin is one active plugin of the site.
type Plugin struct {
	// File is the plugin's main file relative to the plugin directory, as
	// the active_plugins option stores it ("akismet/akismet.php").
	File string `json:"file"`
	// Slug is the plugin's directory, or the file name without ".php" for
	// a single-file plugin ("hello" for "hello.php").
	Slug string `json:"slug"`
	// Name and Version are the "Plugin Name" and "Version" headers of the
	// main file, as WordPress's get_plugin_data() reads them; empty when
	// the plugin directory is unknown or the file cannot be read.
	Name    string `json:"name"`
	Version string `json:"version"`
}

// PluginDir returns the site's plugin directory as WordPress computes it:
// WP_PLUGIN_DIR, else WP_CONTENT_DIR + "/plugins", else ABSPATH +
// "wp-content/plugins". defines holds wp-config.php's constants; wpPath, when
// not empty, stands for ABSPATH (MAILSVC_WP_PATH) and wins over it. It
// returns "" when none of them is known.
func PluginDir(defines map[string]string, wpPath string) string {
	if d := defines["WP_PLUGIN_DIR"]; d != "" {
		return filepath.Clean(d)
	}
	if d := defines["WP_CONTENT_DIR"]; d != "" {
		return filepath.Join(d, "plugins")
	}
	abs := wpPath
	if abs == "" {
		abs = defines["ABSPATH"]
	}
	if abs == "" {
		return ""
	}
	return filepath.Join(abs, "wp-content", "plugins")
}

// PluginReader lists a site's active plugins.
type PluginReader struct {
	// Options reads the options table.
	Options OptionReader
	// Dir is the plugin directory ("" when unknown: names and versions
	// stay empty).
	Dir string
}

// ActivePlugins reads the active_plugins option (a PHP-serialized array of
// main files) in its order and, when Dir is known, each plugin's headers.
// A missing option means no active plugins. Entries that are not a
// relative path to a .php file inside the plugin directory are skipped,
// as WordPress's validate_plugin() would reject them.
func (p *PluginReader) ActivePlugins(ctx context.Context) ([]Plugin, error) {
	raw, found, err := p.Options.Option(ctx, "active_plugins")
	if err != nil {
		return nil, fmt.Errorf("read the active_plugins option: %w", err)
	}
	out := []Plugin{}
	if !found {
		return out, nil
	}
	arr, ok := MaybeUnserialize(raw).(*Array)
	if !ok {
		return out, nil
	}
	for i := 0; i < arr.Len(); i++ {
		_, v := arr.At(i)
		file, ok := v.(string)
		if !ok || !validPluginFile(file) {
			continue
		}
		pl := Plugin{File: file, Slug: pluginSlug(file)}
		if p.Dir != "" {
			if h, err := readPluginHeaders(filepath.Join(p.Dir, filepath.FromSlash(file))); err == nil {
				pl.Name, pl.Version = h["Plugin Name"], h["Version"]
			}
		}
		out = append(out, pl)
	}
	return out, nil
}

// validPluginFile reports whether file is a relative path to a .php file
// with no ".." segment and no backslash or drive letter (validate_file()).
func validPluginFile(file string) bool {
	if file == "" || !strings.HasSuffix(file, ".php") || strings.ContainsAny(file, "\\:\x00") || strings.HasPrefix(file, "/") {
		return false
	}
	for _, seg := range strings.Split(file, "/") {
		if seg == ".." || seg == "." || seg == "" {
			return false
		}
	}
	return true
}

// pluginSlug is the plugin's directory, or its file name without .php.
func pluginSlug(file string) string {
	if dir, _, ok := strings.Cut(file, "/"); ok {
		return dir
	}
	return strings.TrimSuffix(path.Base(file), ".php")
}

// pluginHeaderNames are the headers get_plugin_data() reads that
// ActivePlugins reports.
var pluginHeaderNames = []string{"Plugin Name", "Version"}

var pluginHeaderPatterns = func() map[string]*regexp.Regexp {
	m := map[string]*regexp.Regexp{}
	for _, name := range pluginHeaderNames {
		// get_file_data(): '/^(?:[ \t]*<?php)?[ \t\/*#@]*' . preg_quote( $regex, '/' ) . ':(.*)$/mi'
		m[name] = regexp.MustCompile(`(?mi)^(?:[ \t]*<\?php)?[ \t/*#@]*` + regexp.QuoteMeta(name) + `:(.*)$`)
	}
	return m
}()

// cleanupHeaderComment is _cleanup_header_comment(): it cuts a closing
// comment or PHP tag and what follows.
var cleanupHeaderComment = regexp.MustCompile(`\s*(?:\*/|\?>).*`)

// readPluginHeaders reads the headers of a plugin file the way
// get_file_data() does: from its first 8 KiB, carriage returns as line
// breaks, the first match of each header, trimmed.
func readPluginHeaders(file string) (map[string]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("open plugin file: %w", err)
	}
	defer f.Close()
	buf, err := io.ReadAll(io.LimitReader(f, 8*1024))
	if err != nil {
		return nil, fmt.Errorf("read plugin file: %w", err)
	}
	text := strings.ReplaceAll(string(buf), "\r", "\n")
	out := map[string]string{}
	for _, name := range pluginHeaderNames {
		m := pluginHeaderPatterns[name].FindStringSubmatch(text)
		if m == nil {
			out[name] = ""
			continue
		}
		// PHP trim() characters.
		out[name] = strings.Trim(cleanupHeaderComment.ReplaceAllString(m[1], ""), " \t\n\r\x00\x0B")
	}
	return out, nil
}
