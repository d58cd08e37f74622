package dist_test

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/systemd"
	"github.com/mailsvc/mailsvc/internal/dist"
)

func TestDebVersion(t *testing.T) {
	tests := []struct{ in, want string }{
		{"v1.2.0", "1.2.0"},
		{"1.2.0", "1.2.0"},
		{"v1.2.0-3-gabc1234", "1.2.0+3.gabc1234"},
		{"v1.2.0-3-gabc1234-dirty", "1.2.0+3.gabc1234.dirty"},
		{"v1.2.0-rc1", "1.2.0~rc1"},
		{"1158e9b", "0~1158e9b"},
		{"1158e9b-dirty", "0~1158e9b.dirty"},
		{"dev", "0~dev"},
	}
	for _, tt := range tests {
		if got := dist.DebVersion(tt.in); got != tt.want {
			t.Errorf("DebVersion(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestPackage checks what the package holds: the binary, the unit
// adapters/systemd embeds (the one `mailsvc wp install --systemd` writes)
// and the environment file as a conffile, and maintainer scripts that
// parse as sh.
func TestPackage(t *testing.T) {
	p := dist.Package([]byte("program"), "dev", "arm64", dist.DefaultMaintainer)
	if p.Name != "mailsvc" || p.Version != "0~dev" || p.Architecture != "arm64" {
		t.Errorf("package %s %s %s", p.Name, p.Version, p.Architecture)
	}
	want := map[string]struct {
		data     []byte
		mode     int64
		conffile bool
	}{
		"/usr/bin/mailsvc":                    {[]byte("program"), 0o755, false},
		"/lib/systemd/system/mailsvc.service": {systemd.Unit(), 0o644, false},
		"/etc/mailsvc/mailsvc.env":            {systemd.EnvFile(), 0o640, true},
	}
	if len(p.Files) != len(want) {
		t.Errorf("%d files, want %d", len(p.Files), len(want))
	}
	for _, f := range p.Files {
		w, ok := want[f.Path]
		if !ok || !bytes.Equal(f.Data, w.data) || f.Mode != w.mode || f.Conffile != w.conffile {
			t.Errorf("file %s (mode %o, conffile %v) is not the one expected", f.Path, f.Mode, f.Conffile)
		}
	}
	for _, name := range []string{"postinst", "prerm", "postrm"} {
		script := p.Scripts[name]
		if !strings.HasPrefix(script, "#!/bin/sh\n") {
			t.Errorf("%s does not start with #!/bin/sh", name)
		}
		cmd := exec.Command("sh", "-n")
		cmd.Stdin = strings.NewReader(script)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s does not parse: %v\n%s", name, err, out)
		}
	}
	if !strings.Contains(p.Scripts["postinst"], "adduser --system --group --no-create-home --home /var/lib/mailsvc") {
		t.Error("postinst does not create the system user")
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
}
