// Package bridge ships the wp_mail() bridge: a WordPress must-use plugin
// (mailsvc-bridge.php, embedded in the binary) that replaces WordPress's
// wp_mail() and queues every message as one row of {prefix}mailsvc_logs in
// the site's own database, where the service's workers deliver it.
//
// The plugin writes the row in the store's encoding (adapters/store: the
// message column is the JSON of storedMessage, attachments as base64), so
// the store reads a bridge-written row like any other queued log.
package bridge

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
)

// FileName is the name of the must-use plugin inside mu-plugins/.
const FileName = "mailsvc-bridge.php"

// Source is the PHP source of the must-use plugin.
//
//go:embed mailsvc-bridge.php
var Source []byte

// Parts are the files the bridge loads from its folder beside it
// (mu-plugins/mailsvc-bridge/), by path under mu-plugins/.
var Parts = map[string][]byte{
	"mailsvc-bridge/attention.php": attentionSource,
}

//go:embed mailsvc-bridge/attention.php
var attentionSource []byte

// Path returns where the bridge lives for the content directory
// contentDir (WordPress's WP_CONTENT_DIR): <contentDir>/mu-plugins/mailsvc-bridge.php.
func Path(contentDir string) string {
	return filepath.Join(contentDir, "mu-plugins", FileName)
}

// Install writes the bridge into contentDir/mu-plugins (created when
// missing) and returns the file's path. The file is written under a
// temporary name and renamed into place, so WordPress never loads half a
// file; an existing bridge is replaced by this build's.
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
	tmp, err := os.CreateTemp(dir, ".mailsvc-bridge-*.tmp")
	if err != nil {
		return "", fmt.Errorf("install bridge: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := tmp.Write(Source); err != nil {
		tmp.Close()
		return "", fmt.Errorf("install bridge: write: %w", err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return "", fmt.Errorf("install bridge: chmod: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("install bridge: write: %w", err)
	}
	// The parts first: the bridge that requires them is renamed into
	// place last.
	for name, src := range Parts {
		if err := writeFile(filepath.Join(dir, name), src); err != nil {
			return "", fmt.Errorf("install bridge: %w", err)
		}
	}
	path := Path(contentDir)
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("install bridge: %w", err)
	}
	return path, nil
}

// writeFile writes src to path (its folder created when missing) under a
// temporary name renamed into place.
func writeFile(path string, src []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".mailsvc-part-*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := tmp.Write(src); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Remove deletes the bridge from contentDir/mu-plugins. It reports
// whether a file was there; a missing file is not an error.
func Remove(contentDir string) (bool, error) {
	for name := range Parts {
		if err := os.Remove(filepath.Join(contentDir, "mu-plugins", name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("remove bridge: %w", err)
		}
	}
	// Its folder, once empty (another file in it stays, and so does it).
	_ = os.Remove(filepath.Join(contentDir, "mu-plugins", "mailsvc-bridge"))
	err := os.Remove(Path(contentDir))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("remove bridge: %w", err)
	}
	return true, nil
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

// Installed reads the bridge installed in contentDir/mu-plugins; found is
// false when there is none.
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
