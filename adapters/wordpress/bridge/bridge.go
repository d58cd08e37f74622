// Package bridge ships the wp_mail() bridge: a WordPress must-use plugin
// (the loader mailsvc-bridge.php and its folder mailsvc-bridge/, embedded
// in the binary) that replaces WordPress's
// wp_mail() and queues every message as one row of {prefix}mailsvc_logs in
// the site's own database, where the service's workers deliver it.
//
// The plugin writes the row in the store's encoding (adapters/store: the
// message column is the JSON of storedMessage, attachments as base64), so
// the store reads a bridge-written row like any other queued log.
package bridge

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
)

// FileName is the name of the must-use plugin inside mu-plugins/: the
// loader that WordPress loads, which requires the files of DirName.
const FileName = "mailsvc-bridge.php"

// DirName is the folder beside FileName in mu-plugins/ that holds the
// bridge's files, one per concern (WordPress loads only the PHP files at
// the top of mu-plugins/, so nothing in it runs without the loader).
const DirName = "mailsvc-bridge"

// Source is the PHP source of the must-use plugin's loader, FileName.
//
//go:embed mailsvc-bridge.php
var Source []byte

// folder holds DirName's files as this build ships them.
//
//go:embed mailsvc-bridge
var folder embed.FS

// Files returns every file of the bridge as this build ships it: the
// loader and the files of DirName, by their slash-separated path relative
// to mu-plugins/ ("mailsvc-bridge.php", "mailsvc-bridge/queue.php", ...).
func Files() map[string][]byte {
	files := map[string][]byte{FileName: Source}
	err := fs.WalkDir(folder, DirName, func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := folder.ReadFile(name)
		files[name] = b
		return err
	})
	if err != nil {
		panic("bridge: the embedded folder cannot be read: " + err.Error()) // the build embedded it
	}
	return files
}

// Path returns where the bridge's loader lives for the content directory
// contentDir (WordPress's WP_CONTENT_DIR): <contentDir>/mu-plugins/mailsvc-bridge.php.
func Path(contentDir string) string {
	return filepath.Join(contentDir, "mu-plugins", FileName)
}

// DirPath returns where the bridge's folder lives for the content
// directory contentDir: <contentDir>/mu-plugins/mailsvc-bridge.
func DirPath(contentDir string) string {
	return filepath.Join(contentDir, "mu-plugins", DirName)
}

// Install writes the bridge into contentDir/mu-plugins (created when
// missing) and returns the loader's path. Each file is written under a
// temporary name and renamed into place, so WordPress never loads half a
// file; the folder's files come first and the loader last, so a loader
// never requires a file that is not there yet. An existing bridge is
// replaced by this build's, and files of its folder that this build does
// not ship are removed once the new loader is in place.
func Install(contentDir string) (string, error) {
	if st, err := os.Stat(contentDir); err != nil {
		return "", fmt.Errorf("install bridge: content directory: %w", err)
	} else if !st.IsDir() {
		return "", fmt.Errorf("install bridge: content directory %s is not a directory", contentDir)
	}
	dir := filepath.Join(contentDir, "mu-plugins")
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", fmt.Errorf("install bridge: create %s: %w", dir, err)
		}
		// The folder is ours: uninstall removes it when it is left empty.
		if err := os.WriteFile(filepath.Join(dir, CreatedMarker), []byte("mu-plugins/ was created by mailsvc wp install; mailsvc uninstall removes it when nothing else is in it.\n"), 0o644); err != nil {
			return "", fmt.Errorf("install bridge: %w", err)
		}
	} else if err != nil {
		return "", fmt.Errorf("install bridge: %w", err)
	}
	files := Files()
	names := make([]string, 0, len(files))
	for name := range files {
		if name != FileName {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range append(names, FileName) {
		if err := writeFile(filepath.Join(dir, filepath.FromSlash(name)), files[name]); err != nil {
			return "", fmt.Errorf("install bridge: %w", err)
		}
	}
	if err := removeStale(dir, files); err != nil {
		return "", fmt.Errorf("install bridge: %w", err)
	}
	return Path(contentDir), nil
}

// writeFile writes b to path through a temporary file in the same folder
// renamed into place, creating the folder when missing.
func writeFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".mailsvc-bridge-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("chmod %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return os.Rename(tmp.Name(), path)
}

// removeStale removes from the bridge's folder under muPlugins the files
// that are not among files (an earlier version's), and the folders they
// leave empty.
func removeStale(muPlugins string, files map[string][]byte) error {
	var dirs []string
	err := filepath.WalkDir(filepath.Join(muPlugins, DirName), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(muPlugins, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, path)
		} else if _, ok := files[filepath.ToSlash(rel)]; !ok {
			return os.Remove(path)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("remove an earlier version's files: %w", err)
	}
	for i := len(dirs) - 1; i >= 0; i-- { // deepest first
		if entries, err := os.ReadDir(dirs[i]); err == nil && len(entries) == 0 {
			if err := os.Remove(dirs[i]); err != nil {
				return fmt.Errorf("remove an earlier version's folder: %w", err)
			}
		}
	}
	return nil
}

// Remove deletes the bridge, its loader and its folder, from
// contentDir/mu-plugins: the loader first, so that WordPress never loads
// a loader without its files. It reports whether any of them was there;
// a missing bridge is not an error.
func Remove(contentDir string) (bool, error) {
	err := os.Remove(Path(contentDir))
	removed := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("remove bridge: %w", err)
	}
	if _, err := os.Stat(DirPath(contentDir)); err == nil {
		removed = true
	}
	if err := os.RemoveAll(DirPath(contentDir)); err != nil {
		return removed, fmt.Errorf("remove bridge: %w", err)
	}
	return removed, nil
}

// CreatedMarker is the file Install leaves in a mu-plugins/ folder it
// created (WordPress loads only the .php files there); RemoveCreatedDir
// removes such a folder once it holds nothing else.
const CreatedMarker = ".mailsvc-created"

// RemoveCreatedDir removes contentDir/mu-plugins when Install created it
// (CreatedMarker is in it) and it holds nothing but the marker; a folder
// that existed before, or that holds anything else, stays. It reports
// whether it removed the folder.
func RemoveCreatedDir(contentDir string) (bool, error) {
	dir := filepath.Join(contentDir, "mu-plugins")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("remove mu-plugins: %w", err)
	}
	if len(entries) != 1 || entries[0].Name() != CreatedMarker {
		return false, nil
	}
	if err := os.Remove(filepath.Join(dir, CreatedMarker)); err != nil {
		return false, fmt.Errorf("remove mu-plugins: %w", err)
	}
	if err := os.Remove(dir); err != nil {
		return false, fmt.Errorf("remove mu-plugins: %w", err)
	}
	return true, nil
}

// versionHeader matches the plugin header's Version line.
var versionHeader = regexp.MustCompile(`(?m)^\s*\*\s*Version:\s*(\S+)`)

// Version returns the Version header of a bridge file's source, "" when
// it has none.
func Version(src []byte) string {
	if m := versionHeader.FindSubmatch(src); m != nil {
		return string(m[1])
	}
	return ""
}

// Current reports whether the bridge installed in contentDir/mu-plugins
// is byte for byte this build's: the loader and every file of its folder.
func Current(contentDir string) (bool, error) {
	dir := filepath.Join(contentDir, "mu-plugins")
	for name, want := range Files() {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		} else if err != nil {
			return false, fmt.Errorf("read bridge: %w", err)
		}
		if !bytes.Equal(got, want) {
			return false, nil
		}
	}
	return true, nil
}

// Installed reads the loader of the bridge installed in
// contentDir/mu-plugins; found is false when there is none.
func Installed(contentDir string) (src []byte, found bool, err error) {
	src, err = os.ReadFile(Path(contentDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read bridge: %w", err)
	}
	return src, true, nil
}
