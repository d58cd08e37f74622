// Package dist builds mailsvc's release files (`make dist`): a static
// binary (CGO off) and a Debian package for each architecture, and a
// SHA256SUMS file over all of them.
//
// The package installs /usr/bin/mailsvc, the hardened unit
// /lib/systemd/system/mailsvc.service and the conffile
// /etc/mailsvc/mailsvc.env (both from adapters/systemd, the same text
// `mailsvc wp install --systemd` writes); its maintainer scripts (in
// debian/) create the mailsvc system user and /var/lib/mailsvc, and
// enable nothing.
package dist

import (
	"context"
	"crypto/sha256"
	"embed"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/mailsvc/mailsvc/adapters/systemd"
	"github.com/mailsvc/mailsvc/internal/deb"
)

//go:embed debian/postinst debian/prerm debian/postrm
var scripts embed.FS

// DefaultMaintainer is the Maintainer field when Options names none.
const DefaultMaintainer = "mailsvc maintainers <mailsvc@localhost>"

// Options say what Build makes.
type Options struct {
	Version    string    // as `mailsvc version` prints it, e.g. v1.2.0 or a git describe
	Dir        string    // the output directory, created when missing
	Arches     []string  // Go (and Debian) architectures, e.g. amd64, arm64
	Maintainer string    // default DefaultMaintainer
	Module     string    // the source directory holding go.mod; default "."
	Log        io.Writer // one line per file made; default io.Discard
}

// Build builds, for each architecture, the static binary
// mailsvc_linux_ARCH and the package mailsvc_DEBVERSION_ARCH.deb into
// Options.Dir, then SHA256SUMS over them (in `sha256sum -c` form). It
// returns the paths of the files it made, SHA256SUMS last.
func Build(ctx context.Context, o Options) ([]string, error) {
	if o.Version == "" || len(o.Arches) == 0 || o.Dir == "" {
		return nil, fmt.Errorf("dist: a version, an output directory and at least one architecture are required")
	}
	if o.Maintainer == "" {
		o.Maintainer = DefaultMaintainer
	}
	if o.Module == "" {
		o.Module = "."
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("dist: %w", err)
	}
	var made []string
	for _, arch := range o.Arches {
		bin := filepath.Join(o.Dir, "mailsvc_linux_"+arch)
		if err := buildBinary(ctx, o.Module, arch, o.Version, bin); err != nil {
			return nil, err
		}
		fmt.Fprintln(o.Log, bin)
		program, err := os.ReadFile(bin)
		if err != nil {
			return nil, fmt.Errorf("dist: %w", err)
		}
		p := Package(program, o.Version, arch, o.Maintainer)
		pkg := filepath.Join(o.Dir, fmt.Sprintf("%s_%s_%s.deb", p.Name, p.Version, arch))
		if err := writePackage(p, pkg); err != nil {
			return nil, err
		}
		fmt.Fprintln(o.Log, pkg)
		made = append(made, bin, pkg)
	}
	sums := filepath.Join(o.Dir, "SHA256SUMS")
	if err := writeChecksums(sums, made); err != nil {
		return nil, err
	}
	fmt.Fprintln(o.Log, sums)
	return append(made, sums), nil
}

// buildBinary builds cmd/mailsvc for linux/arch with CGO off (a static
// binary), the version stamped as the Makefile does.
func buildBinary(ctx context.Context, module, arch, version, out string) error {
	abs, err := filepath.Abs(out)
	if err != nil {
		return fmt.Errorf("dist: %w", err)
	}
	cmd := exec.CommandContext(ctx, "go", "build",
		"-ldflags", "-s -w -X github.com/mailsvc/mailsvc/cmd/mailsvc/cli.Version="+version,
		"-o", abs, "./cmd/mailsvc")
	cmd.Dir = module
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("dist: go build for linux/%s: %w\n%s", arch, err, out)
	}
	return nil
}

// Package returns the Debian package of program (the mailsvc binary for
// arch) at version (DebVersion of it).
func Package(program []byte, version, arch, maintainer string) *deb.Package {
	p := &deb.Package{
		Name:         "mailsvc",
		Version:      DebVersion(version),
		Architecture: arch,
		Maintainer:   maintainer,
		Section:      "mail",
		Priority:     "optional",
		Depends:      []string{"adduser"},
		Description: `mail-delivery service for WordPress sites
mailsvc takes over a WordPress site's wp_mail(), queues every message in
the site's own database and delivers it through SMTP, Amazon SES,
SendGrid, Mailgun, Postmark and others, with searchable logs and an
admin REST API. It runs as the mailsvc user under a hardened systemd
unit; set MAILSVC_WP_CONFIG in /etc/mailsvc/mailsvc.env, then
systemctl enable --now mailsvc.`,
		Files: []deb.File{
			{Path: systemd.Executable, Data: program, Mode: 0o755},
			{Path: systemd.PackageUnitPath, Data: systemd.Unit(), Mode: 0o644},
			{Path: systemd.EnvPath, Data: systemd.EnvFile(), Mode: 0o640, Conffile: true},
		},
		Scripts: map[string]string{},
		// A fixed time: the same binary makes the same package.
		ModTime: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	for _, name := range []string{"postinst", "prerm", "postrm"} {
		text, err := scripts.ReadFile("debian/" + name)
		if err != nil {
			panic(err) // embedded above
		}
		p.Scripts[name] = string(text)
	}
	return p
}

func writePackage(p *deb.Package, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("dist: %w", err)
	}
	if err := p.Write(f); err != nil {
		f.Close()
		return fmt.Errorf("dist: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("dist: %w", err)
	}
	return nil
}

// writeChecksums writes the SHA-256 of each file, by base name.
func writeChecksums(path string, files []string) error {
	var b strings.Builder
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return fmt.Errorf("dist: checksum: %w", err)
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("dist: checksum %s: %w", name, err)
		}
		fmt.Fprintf(&b, "%x  %s\n", h.Sum(nil), filepath.Base(name))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("dist: %w", err)
	}
	return nil
}

var (
	releaseTag = regexp.MustCompile(`^v?([0-9]+\.[0-9][0-9A-Za-z.]*)(.*)$`)
	described  = regexp.MustCompile(`^-[0-9]+-g[0-9a-f]+`)
	notAllowed = regexp.MustCompile(`[^0-9A-Za-z.+~]+`)
)

// DebVersion turns a version as git describe prints it into a Debian
// version: v1.2.0 is 1.2.0, v1.2.0-3-gabc123-dirty (three commits after
// the tag) is 1.2.0+3.gabc123.dirty, a pre-release v1.2.0-rc1 is
// 1.2.0~rc1 (before 1.2.0), and anything not starting with a release
// number (a bare commit, "dev") sorts before every release: 0~abc123.dirty.
func DebVersion(v string) string {
	if m := releaseTag.FindStringSubmatch(v); m != nil {
		rest := strings.Trim(notAllowed.ReplaceAllString(m[2], "."), ".")
		switch {
		case rest == "":
			return m[1]
		case described.MatchString(m[2]):
			return m[1] + "+" + rest
		default:
			return m[1] + "~" + rest
		}
	}
	return "0~" + strings.Trim(notAllowed.ReplaceAllString(v, "."), ".")
}
