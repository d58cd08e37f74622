// Package dist builds the release files as `make dist` does (for this
// machine's architecture only, to stay fast) and checks them: a static
// binary, SHA256SUMS, and a .deb that dpkg installs, whose `mailsvc
// version` runs and whose unit systemd-analyze verifies, after which the
// README's steps on a WordPress site end with a `mailsvc doctor` that
// passes with no flags, and that dpkg removes and purges without a trace.
package dist

import (
	"context"
	"crypto/sha256"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/systemd"
	"github.com/mailsvc/mailsvc/internal/dist"
	"github.com/mailsvc/mailsvc/internal/testenv"
)

const version = "v9.8.7-test"

// build runs dist.Build for this machine's architecture into a temporary
// directory and returns the binary's and the package's paths.
func build(t *testing.T) (binary, pkg string) {
	t.Helper()
	dir := t.TempDir()
	made, err := dist.Build(context.Background(), dist.Options{
		Version: version, Dir: dir, Arches: []string{runtime.GOARCH}, Module: "../..",
	})
	if err != nil {
		t.Fatal(err)
	}
	binary = filepath.Join(dir, "mailsvc_linux_"+runtime.GOARCH)
	pkg = filepath.Join(dir, "mailsvc_9.8.7~test_"+runtime.GOARCH+".deb")
	sums := filepath.Join(dir, "SHA256SUMS")
	if want := []string{binary, pkg, sums}; strings.Join(made, " ") != strings.Join(want, " ") {
		t.Fatalf("Build made %v, want %v", made, want)
	}
	data, err := os.ReadFile(sums)
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, f := range []string{binary, pkg} {
		content, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&want, "%x  %s\n", sha256.Sum256(content), filepath.Base(f))
	}
	if string(data) != want.String() {
		t.Errorf("SHA256SUMS:\n%s\nwant:\n%s", data, want.String())
	}
	return binary, pkg
}

func TestDist(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the whole binary with CGO off")
	}
	binary, pkg := build(t)

	t.Run("static binary", func(t *testing.T) {
		f, err := elf.Open(binary)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
				t.Errorf("the binary has a %v program header: it is not static", p.Type)
			}
		}
		out, err := exec.Command(binary, "version").Output()
		if err != nil || string(out) != "mailsvc "+version+"\n" {
			t.Errorf("mailsvc version = %q, %v", out, err)
		}
	})

	t.Run("dpkg install, remove and purge", func(t *testing.T) {
		installRemovePurge(t, pkg)
	})
}

// run runs a command and returns its combined output, failing the test
// when it exits non-zero.
func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// exists reports whether a path exists, failing on any other error.
func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Lstat(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return err == nil
}

func userExists(name string) bool {
	return exec.Command("getent", "passwd", name).Run() == nil
}

func installRemovePurge(t *testing.T, pkg string) {
	if os.Geteuid() != 0 {
		testenv.Missing(t, "installing a package needs root (CI runs as root)")
	}
	for _, tool := range []string{"dpkg", "dpkg-query", "getent", "systemd-analyze", "adduser"} {
		if _, err := exec.LookPath(tool); err != nil {
			testenv.Missing(t, "%s is not installed: this is not a Debian host with systemd and adduser", tool)
		}
	}
	if out, _ := exec.Command("dpkg-query", "-W", "-f=${Status}", "mailsvc").Output(); len(out) > 0 && !strings.Contains(string(out), "not-installed") {
		testenv.Missing(t, "the mailsvc package is on this host (%s): the test would replace and purge it", out)
	}
	if userExists(systemd.User) {
		testenv.Missing(t, "a mailsvc user exists on this host: purging the test's package would delete it")
	}
	t.Cleanup(func() {
		if out, err := exec.Command("dpkg", "--purge", "mailsvc").CombinedOutput(); err != nil {
			t.Errorf("dpkg --purge mailsvc: %v\n%s", err, out)
		}
	})

	run(t, "dpkg", "-i", pkg)
	if out := run(t, systemd.Executable, "version"); out != "mailsvc "+version+"\n" {
		t.Errorf("%s version = %q", systemd.Executable, out)
	}
	if !userExists(systemd.User) {
		t.Error("the package did not create the mailsvc user")
	}
	if fi, err := os.Stat(systemd.StateDir); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o750 {
		t.Errorf("state directory %s: %v %v, want a directory of mode 0750", systemd.StateDir, fi, err)
	} else if owner := strings.TrimSpace(run(t, "stat", "-c", "%U:%G", systemd.StateDir)); owner != "mailsvc:mailsvc" {
		t.Errorf("state directory owned by %s, want mailsvc:mailsvc", owner)
	}
	if fi, err := os.Stat(systemd.EnvPath); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("%s: %v %v, want mode 0640", systemd.EnvPath, fi, err)
	}
	unit, err := os.ReadFile(systemd.PackageUnitPath)
	if err != nil || string(unit) != string(systemd.Unit()) {
		t.Errorf("%s is not the unit mailsvc wp install --systemd writes (%v)", systemd.PackageUnitPath, err)
	}
	out, err := exec.Command("systemd-analyze", "verify", systemd.PackageUnitPath).CombinedOutput()
	if err != nil {
		t.Errorf("systemd-analyze verify %s: %v\n%s", systemd.PackageUnitPath, err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, systemd.Service) {
			t.Errorf("systemd-analyze verify warns: %s", line)
		}
	}

	t.Run("the README's steps end with a mailsvc doctor that passes", readmeSteps)

	// The environment file is a conffile: a reinstall keeps the owner's edit.
	edited := append(systemd.EnvFile(), "MAILSVC_WP_CONFIG=/srv/site/wp-config.php\n"...)
	if err := os.WriteFile(systemd.EnvPath, edited, 0o640); err != nil {
		t.Fatal(err)
	}
	run(t, "dpkg", "-i", pkg)
	if got, err := os.ReadFile(systemd.EnvPath); err != nil || string(got) != string(edited) {
		t.Errorf("a reinstall did not keep the edited %s: %v\n%s", systemd.EnvPath, err, got)
	}

	// Remove keeps the configuration, the user and the state; purge does not.
	run(t, "dpkg", "-r", "mailsvc")
	if exists(t, systemd.Executable) || exists(t, systemd.PackageUnitPath) {
		t.Error("dpkg -r left the binary or the unit")
	}
	if !exists(t, systemd.EnvPath) || !exists(t, systemd.StateDir) || !userExists(systemd.User) {
		t.Error("dpkg -r removed the configuration, the state directory or the user")
	}
	run(t, "dpkg", "--purge", "mailsvc")
	for _, path := range []string{systemd.EnvPath, filepath.Dir(systemd.EnvPath), systemd.StateDir} {
		if exists(t, path) {
			t.Errorf("dpkg --purge left %s", path)
		}
	}
	if userExists(systemd.User) {
		t.Error("dpkg --purge left the mailsvc user")
	}
	if out := run(t, "getent", "group"); strings.Contains(out, "\nmailsvc:") || strings.HasPrefix(out, "mailsvc:") {
		t.Error("dpkg --purge left the mailsvc group")
	}
}
