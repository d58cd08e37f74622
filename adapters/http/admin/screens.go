package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"sync"
)

// moduleScreens holds the screens add-on modules registered, and
// moduleNav their navigation entries, in registration order.
var (
	moduleMu      sync.RWMutex
	moduleScreens []fs.FS
	moduleNav     []NavEntry
)

// NavEntry is a tab an add-on module adds to the screens' navigation,
// after the built-in tabs: the screen at #/{Slug}, named Title, rendered
// by the module js/{Module} (which exports render(root, args), as the
// built-in screens do). The Pro add-on's is {pro, Pro, pro.js}.
type NavEntry struct {
	Slug   string `json:"slug"`
	Title  string `json:"title"`
	Module string `json:"module"`
}

// slugPattern and modulePattern are what a NavEntry's Slug and Module
// may be: a path segment of the address's fragment, a file name in js/.
var (
	slugPattern   = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	modulePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*\.js$`)
)

// RegisterScreens adds an add-on module's screens (the Pro add-on's
// pro.js and pro-*.js) and the tabs they add to the navigation (the Pro
// tab): fsys is laid out as the built-in files are (index.html and
// app.css at its root are not expected; modules in js/, importing the
// built-in ones as ./name.js). Its files are served under Prefix beside
// the built-in ones and mapped by IndexUnder; a path the built-in files or
// an earlier module already serve keeps that file. The tabs are listed,
// in registration order, by the generated module js/nav.js (NavModule),
// which app.js reads to draw the navigation; each tab's Module must be
// one of fsys's js/ files. Call it from the module's init(), before
// Handler; a build that does not join the module serves none of its
// screens and shows none of its tabs. It panics on a nil fsys or a
// malformed tab.
func RegisterScreens(fsys fs.FS, tabs ...NavEntry) {
	if fsys == nil {
		panic("admin: RegisterScreens of a nil file system")
	}
	for _, e := range tabs {
		if !slugPattern.MatchString(e.Slug) || e.Title == "" || !modulePattern.MatchString(e.Module) {
			panic(fmt.Sprintf("admin: RegisterScreens of a malformed tab %+v", e))
		}
		if _, err := fs.Stat(fsys, "js/"+e.Module); err != nil {
			panic(fmt.Sprintf("admin: RegisterScreens of the tab %q: its module: %v", e.Slug, err))
		}
	}
	moduleMu.Lock()
	defer moduleMu.Unlock()
	moduleScreens = append(moduleScreens, fsys)
	moduleNav = append(moduleNav, tabs...)
}

// Navigation returns the tabs the registered modules add, in
// registration order, leaving out those whose Slug is in hidden.
func Navigation(hidden ...string) []NavEntry {
	moduleMu.RLock()
	defer moduleMu.RUnlock()
	out := []NavEntry{}
	for _, e := range moduleNav {
		if !slices.Contains(hidden, e.Slug) {
			out = append(out, e)
		}
	}
	return out
}

// NavModule returns the source of js/nav.js for tabs: an ES module
// whose default export is the list of tabs as JSON objects
// ({slug, title, module}).
func NavModule(tabs []NavEntry) ([]byte, error) {
	list, err := json.Marshal(tabs) // escapes <, > and &
	if err != nil {
		return nil, fmt.Errorf("admin: navigation entries: %w", err)
	}
	return []byte("// nav.js: the tabs the add-on modules registered (admin.RegisterScreens),\n" +
		"// written by the service.\nexport default " + string(list) + ";\n"), nil
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
