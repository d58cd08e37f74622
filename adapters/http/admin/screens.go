package admin

import (
	"errors"
	"io/fs"
	"slices"
	"sync"
)

// moduleScreens holds the screens add-on modules registered, in
// registration order.
var (
	moduleMu      sync.RWMutex
	moduleScreens []fs.FS
)

// RegisterScreens adds an add-on module's screens (the Pro add-on's
// pro.js and pro-*.js): fsys is laid out as the built-in files are
// (index.html and app.css at its root are not expected; modules in js/,
// importing the built-in ones as ./name.js). Its files are served under
// Prefix beside the built-in ones and mapped by IndexUnder; a path the
// built-in files or an earlier module already serve keeps that file.
// Call it from the module's init(), before Handler; a build that does not
// join the module serves none of its screens.
func RegisterScreens(fsys fs.FS) {
	if fsys == nil {
		panic("admin: RegisterScreens of a nil file system")
	}
	moduleMu.Lock()
	defer moduleMu.Unlock()
	moduleScreens = append(moduleScreens, fsys)
}

// Files returns everything the screens serve: the built-in files with the
// registered modules' screens laid over them (paths as under Prefix:
// index.html, app.css, js/app.js, ...).
func Files() fs.FS {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic("admin: embedded files missing: " + err.Error())
	}
	moduleMu.RLock()
	defer moduleMu.RUnlock()
	return layers(append([]fs.FS{sub}, moduleScreens...))
}

// layers is a read-only file system made of several, the first that has
// a path serving it; a directory lists the entries of every layer.
type layers []fs.FS

// Open implements fs.FS.
func (l layers) Open(name string) (fs.File, error) {
	var first error
	for _, f := range l {
		file, err := f.Open(name)
		if err == nil {
			return file, nil
		}
		if first == nil {
			first = err
		}
	}
	if first == nil {
		first = &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return nil, first
}

// ReadDir implements fs.ReadDirFS: the entries of name in every layer
// that has it, sorted by name, each name once.
func (l layers) ReadDir(name string) ([]fs.DirEntry, error) {
	var out []fs.DirEntry
	found := false
	for _, f := range l {
		entries, err := fs.ReadDir(f, name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		found = true
		for _, e := range entries {
			if !slices.ContainsFunc(out, func(o fs.DirEntry) bool { return o.Name() == e.Name() }) {
				out = append(out, e)
			}
		}
	}
	if !found {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	slices.SortFunc(out, func(a, b fs.DirEntry) int {
		switch {
		case a.Name() < b.Name():
			return -1
		case a.Name() > b.Name():
			return 1
		}
		return 0
	})
	return out, nil
}
