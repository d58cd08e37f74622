// Package deb writes Debian binary packages (.deb) with the standard
// library only: an ar archive of debian-binary ("2.0"), control.tar.gz
// (control, conffiles, md5sums and the maintainer scripts) and
// data.tar.gz (the files, owned by root), as dpkg-deb builds them.
package deb

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/md5"
	"fmt"
	"io"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// File is one file the package installs.
type File struct {
	Path     string // absolute, e.g. /usr/bin/mailsvc
	Data     []byte // its content
	Mode     int64  // permission bits, e.g. 0o755
	Conffile bool   // listed in conffiles: dpkg keeps the administrator's changes
}

// Package describes a binary package. Name, Version, Architecture,
// Maintainer and Description are required; Description's first line is
// the synopsis, the others the extended description.
type Package struct {
	Name         string
	Version      string
	Architecture string // Debian's name: amd64, arm64, ...
	Maintainer   string
	Description  string
	Section      string
	Priority     string
	Homepage     string
	Depends      []string
	Files        []File
	// Scripts are the maintainer scripts by name: preinst, postinst,
	// prerm, postrm.
	Scripts map[string]string
	// ModTime is the time stamped on every archive member (a fixed time
	// makes the package reproducible).
	ModTime time.Time
}

// Write writes the package as a .deb archive to w.
func (p *Package) Write(w io.Writer) error {
	if err := p.validate(); err != nil {
		return err
	}
	data, size, err := p.dataTar()
	if err != nil {
		return fmt.Errorf("data.tar.gz of %s: %w", p.Name, err)
	}
	control, err := p.controlTar(size)
	if err != nil {
		return fmt.Errorf("control.tar.gz of %s: %w", p.Name, err)
	}
	if _, err := io.WriteString(w, "!<arch>\n"); err != nil {
		return fmt.Errorf("write %s: %w", p.Name, err)
	}
	for _, m := range []struct {
		name string
		data []byte
	}{{"debian-binary", []byte("2.0\n")}, {"control.tar.gz", control}, {"data.tar.gz", data}} {
		if err := p.arMember(w, m.name, m.data); err != nil {
			return fmt.Errorf("write %s: %w", p.Name, err)
		}
	}
	return nil
}

func (p *Package) validate() error {
	for field, v := range map[string]string{"Name": p.Name, "Version": p.Version, "Architecture": p.Architecture,
		"Maintainer": p.Maintainer, "Description": p.Description} {
		if strings.TrimSpace(v) == "" {
			return fmt.Errorf("package %q: %s is required", p.Name, field)
		}
	}
	if !validVersion(p.Version) {
		return fmt.Errorf("package %s: version %q does not start with a digit or holds characters Debian does not allow", p.Name, p.Version)
	}
	for _, f := range p.Files {
		if !path.IsAbs(f.Path) || path.Clean(f.Path) != f.Path {
			return fmt.Errorf("package %s: file path %q is not a clean absolute path", p.Name, f.Path)
		}
	}
	for name := range p.Scripts {
		switch name {
		case "preinst", "postinst", "prerm", "postrm":
		default:
			return fmt.Errorf("package %s: %q is not a maintainer script", p.Name, name)
		}
	}
	return nil
}

// validVersion reports whether v is a Debian version dpkg accepts: a
// digit first, then letters, digits and . + ~ - only.
func validVersion(v string) bool {
	if v == "" || v[0] < '0' || v[0] > '9' {
		return false
	}
	return strings.Trim(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.+~-") == ""
}

// arMember writes one member of a common-format ar archive: a 60-byte
// header, the data and a newline pad to an even length.
func (p *Package) arMember(w io.Writer, name string, data []byte) error {
	header := fmt.Sprintf("%-16s%-12d%-6d%-6d%-8s%-10d`\n", name, p.ModTime.Unix(), 0, 0, "100644", len(data))
	if _, err := io.WriteString(w, header); err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		return err
	}
	if len(data)%2 == 1 {
		_, err := io.WriteString(w, "\n")
		return err
	}
	return nil
}

// tarball builds a gzip-compressed tar archive.
type tarball struct {
	buf     bytes.Buffer
	gz      *gzip.Writer
	tw      *tar.Writer
	modTime time.Time
	dirs    map[string]bool
}

func newTarball(modTime time.Time) *tarball {
	t := &tarball{modTime: modTime, dirs: map[string]bool{}}
	t.gz, _ = gzip.NewWriterLevel(&t.buf, gzip.BestCompression)
	t.tw = tar.NewWriter(t.gz)
	return t
}

// dir adds a directory and, first, its parents, each once.
func (t *tarball) dir(name string) error {
	if name == "." || t.dirs[name] {
		return nil
	}
	if err := t.dir(path.Dir(name)); err != nil {
		return err
	}
	t.dirs[name] = true
	return t.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "./" + name + "/", Mode: 0o755,
		Uname: "root", Gname: "root", ModTime: t.modTime, Format: tar.FormatGNU})
}

// file adds a regular file (name relative, without "./").
func (t *tarball) file(name string, data []byte, mode int64) error {
	if err := t.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "./" + name, Mode: mode, Size: int64(len(data)),
		Uname: "root", Gname: "root", ModTime: t.modTime, Format: tar.FormatGNU}); err != nil {
		return err
	}
	_, err := t.tw.Write(data)
	return err
}

func (t *tarball) close() ([]byte, error) {
	if err := t.tw.Close(); err != nil {
		return nil, err
	}
	if err := t.gz.Close(); err != nil {
		return nil, err
	}
	return t.buf.Bytes(), nil
}

// dataTar returns data.tar.gz and the installed size in KiB.
func (p *Package) dataTar() ([]byte, int64, error) {
	t := newTarball(p.ModTime)
	if err := t.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "./", Mode: 0o755,
		Uname: "root", Gname: "root", ModTime: p.ModTime, Format: tar.FormatGNU}); err != nil {
		return nil, 0, err
	}
	var size int64
	for _, f := range p.sortedFiles() {
		rel := strings.TrimPrefix(f.Path, "/")
		if err := t.dir(path.Dir(rel)); err != nil {
			return nil, 0, err
		}
		if err := t.file(rel, f.Data, f.Mode); err != nil {
			return nil, 0, err
		}
		size += (int64(len(f.Data)) + 1023) / 1024
	}
	size += int64(len(t.dirs)) // a directory counts as 1 KiB, as dpkg-gencontrol has it
	data, err := t.close()
	return data, size, err
}

func (p *Package) sortedFiles() []File {
	files := append([]File(nil), p.Files...)
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files
}

// controlTar returns control.tar.gz.
func (p *Package) controlTar(installedSize int64) ([]byte, error) {
	t := newTarball(p.ModTime)
	if err := t.tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "./", Mode: 0o755,
		Uname: "root", Gname: "root", ModTime: p.ModTime, Format: tar.FormatGNU}); err != nil {
		return nil, err
	}
	if err := t.file("control", p.control(installedSize), 0o644); err != nil {
		return nil, err
	}
	var conffiles, md5sums strings.Builder
	for _, f := range p.sortedFiles() {
		if f.Conffile {
			conffiles.WriteString(f.Path + "\n")
		}
		fmt.Fprintf(&md5sums, "%x  %s\n", md5.Sum(f.Data), strings.TrimPrefix(f.Path, "/"))
	}
	if conffiles.Len() > 0 {
		if err := t.file("conffiles", []byte(conffiles.String()), 0o644); err != nil {
			return nil, err
		}
	}
	if err := t.file("md5sums", []byte(md5sums.String()), 0o644); err != nil {
		return nil, err
	}
	names := make([]string, 0, len(p.Scripts))
	for name := range p.Scripts {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := t.file(name, []byte(p.Scripts[name]), 0o755); err != nil {
			return nil, err
		}
	}
	return t.close()
}

// control returns the control file: one field a line, the extended
// description indented by one space with "." for an empty line.
func (p *Package) control(installedSize int64) []byte {
	var b strings.Builder
	field := func(name, value string) {
		if value != "" {
			fmt.Fprintf(&b, "%s: %s\n", name, value)
		}
	}
	field("Package", p.Name)
	field("Version", p.Version)
	field("Architecture", p.Architecture)
	field("Maintainer", p.Maintainer)
	field("Installed-Size", strconv.FormatInt(installedSize, 10))
	field("Depends", strings.Join(p.Depends, ", "))
	field("Section", p.Section)
	field("Priority", p.Priority)
	field("Homepage", p.Homepage)
	synopsis, long, _ := strings.Cut(strings.TrimSpace(p.Description), "\n")
	field("Description", synopsis)
	for _, line := range strings.Split(long, "\n") {
		if long == "" {
			break
		}
		if strings.TrimSpace(line) == "" {
			line = "."
		}
		b.WriteString(" " + line + "\n")
	}
	return []byte(b.String())
}
