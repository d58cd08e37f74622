package deb_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/internal/deb"
	"github.com/mailsvc/mailsvc/internal/testenv"
)

func samplePackage() *deb.Package {
	return &deb.Package{
		Name:         "sample",
		Version:      "1.2.3+git.abc",
		Architecture: "amd64",
		Maintainer:   "Sample maintainers <sample@example.invalid>",
		Description:  "a sample package\nIt installs a program and its settings.\n\nThat is all.",
		Section:      "mail",
		Priority:     "optional",
		Depends:      []string{"adduser"},
		Files: []deb.File{
			{Path: "/usr/bin/sample", Data: []byte("#!/bin/sh\necho sample\n"), Mode: 0o755},
			{Path: "/etc/sample/sample.env", Data: []byte("A=1\n"), Mode: 0o640, Conffile: true},
		},
		Scripts: map[string]string{"postinst": "#!/bin/sh\nexit 0\n"},
		ModTime: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	}
}

// arMembers splits an ar archive into its members' names.
func arMembers(t *testing.T, data []byte) []string {
	t.Helper()
	if !bytes.HasPrefix(data, []byte("!<arch>\n")) {
		t.Fatalf("no ar magic: %q", data[:min(len(data), 8)])
	}
	var names []string
	rest := data[8:]
	for len(rest) > 0 {
		if len(rest) < 60 || string(rest[58:60]) != "`\n" {
			t.Fatalf("bad ar header at %d", len(data)-len(rest))
		}
		var size int
		for _, c := range strings.TrimSpace(string(rest[48:58])) {
			size = size*10 + int(c-'0')
		}
		names = append(names, strings.TrimSpace(string(rest[:16])))
		rest = rest[60+size+size%2:]
	}
	return names
}

func TestWrite(t *testing.T) {
	var buf bytes.Buffer
	if err := samplePackage().Write(&buf); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(arMembers(t, buf.Bytes()), " "); got != "debian-binary control.tar.gz data.tar.gz" {
		t.Fatalf("ar members = %s", got)
	}
	var again bytes.Buffer
	if err := samplePackage().Write(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("two builds of the same package differ")
	}

	dpkgDeb, err := exec.LookPath("dpkg-deb")
	if err != nil {
		testenv.Missing(t, "dpkg-deb is not installed: the archive is not checked by dpkg here")
	}
	dir := t.TempDir()
	pkg := filepath.Join(dir, "sample.deb")
	if err := os.WriteFile(pkg, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dpkg := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(dpkgDeb, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("dpkg-deb %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	fields := dpkg("--field", pkg, "Package", "Version", "Architecture", "Depends", "Installed-Size")
	for _, want := range []string{"Package: sample\n", "Version: 1.2.3+git.abc\n", "Architecture: amd64\n", "Depends: adduser\n", "Installed-Size: 6\n"} {
		if !strings.Contains(fields, want) {
			t.Errorf("control lacks %q:\n%s", want, fields)
		}
	}
	if got, want := dpkg("--info", pkg, "conffiles"), "/etc/sample/sample.env\n"; got != want {
		t.Errorf("conffiles = %q, want %q", got, want)
	}
	if got := dpkg("--info", pkg, "md5sums"); !strings.Contains(got, "  usr/bin/sample\n") || !strings.Contains(got, "  etc/sample/sample.env\n") {
		t.Errorf("md5sums:\n%s", got)
	}
	if got := dpkg("--info", pkg, "control"); !strings.Contains(got, "Description: a sample package\n It installs a program and its settings.\n .\n That is all.\n") {
		t.Errorf("description:\n%s", got)
	}
	contents := dpkg("--contents", pkg)
	for _, want := range []string{"-rwxr-xr-x root/root", "./usr/bin/sample", "-rw-r----- root/root", "./etc/sample/sample.env", "drwxr-xr-x root/root", "./usr/bin/\n"} {
		if !strings.Contains(contents, want) {
			t.Errorf("contents lack %q:\n%s", want, contents)
		}
	}
	root := filepath.Join(dir, "root")
	dpkg("--extract", pkg, root)
	got, err := os.ReadFile(filepath.Join(root, "usr/bin/sample"))
	if err != nil || string(got) != "#!/bin/sh\necho sample\n" {
		t.Errorf("extracted program = %q, %v", got, err)
	}
	control := filepath.Join(dir, "control")
	dpkg("--control", pkg, control)
	if fi, err := os.Stat(filepath.Join(control, "postinst")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("postinst: %v %v, want mode 0755", fi, err)
	}
}

func TestWriteRefuses(t *testing.T) {
	tests := []struct {
		name   string
		change func(*deb.Package)
		want   string
	}{
		{"no name", func(p *deb.Package) { p.Name = "" }, "Name is required"},
		{"no maintainer", func(p *deb.Package) { p.Maintainer = " " }, "Maintainer is required"},
		{"version with a letter first", func(p *deb.Package) { p.Version = "dev" }, `version "dev"`},
		{"version with a space", func(p *deb.Package) { p.Version = "1.0 beta" }, `version "1.0 beta"`},
		{"relative path", func(p *deb.Package) { p.Files[0].Path = "usr/bin/sample" }, "not a clean absolute path"},
		{"unclean path", func(p *deb.Package) { p.Files[0].Path = "/usr/../bin/sample" }, "not a clean absolute path"},
		{"unknown script", func(p *deb.Package) { p.Scripts["config"] = "#!/bin/sh\n" }, `"config" is not a maintainer script`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := samplePackage()
			tt.change(p)
			var buf bytes.Buffer
			err := p.Write(&buf)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Write error = %v, want %q", err, tt.want)
			}
			if buf.Len() != 0 {
				t.Errorf("a refused package wrote %d bytes", buf.Len())
			}
		})
	}
}
