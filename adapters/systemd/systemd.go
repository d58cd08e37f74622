// Package systemd holds the service's systemd unit and the environment
// file beside it — the very files the Debian package ships — and installs
// them on a host for `mailsvc wp install --systemd`: it writes the unit,
// creates the mailsvc system user when it is missing, and reloads systemd
// and enables the service when systemd is running.
//
// Every change to the host goes through the ordinary commands found on
// PATH (getent, useradd, usermod, systemctl), so a test puts fakes there.
package systemd

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

//go:embed mailsvc.service
var unit []byte

//go:embed mailsvc.env
var envFile []byte

// Paths and names of the installed service, as the package lays it out.
const (
	// Executable is where the package installs the binary; the unit's
	// ExecStart runs it.
	Executable = "/usr/bin/mailsvc"
	// PackageUnitPath is where the package installs the unit.
	PackageUnitPath = "/lib/systemd/system/mailsvc.service"
	// UnitPath is where `mailsvc wp install --systemd` writes the unit (an
	// administrator's unit, which wins over the package's).
	UnitPath = "/etc/systemd/system/mailsvc.service"
	// EnvPath is the environment file the unit reads.
	EnvPath = "/etc/mailsvc/mailsvc.env"
	// User is the system user (and group) the service runs as.
	User = "mailsvc"
	// StateDir is the service's only writable directory (StateDirectory=).
	StateDir = "/var/lib/mailsvc"
	// Service is the unit's name.
	Service = "mailsvc.service"
)

// wpConfigName is the environment variable naming the site's wp-config.php.
const wpConfigName = "MAILSVC_WP_CONFIG"

// Unit returns the unit file the package ships, running Executable.
func Unit() []byte { return bytes.Clone(unit) }

// UnitFor returns the unit file with ExecStart running executable instead
// of Executable (for a binary installed elsewhere than by the package).
func UnitFor(executable string) []byte {
	return bytes.Replace(unit, []byte("ExecStart="+Executable+" "), []byte("ExecStart="+executable+" "), 1)
}

// EnvFile returns the environment file the package ships, with
// MAILSVC_WP_CONFIG commented out (standalone until the owner sets it).
func EnvFile() []byte { return bytes.Clone(envFile) }

// EnvFileFor returns the environment file with MAILSVC_WP_CONFIG set to
// wpConfig, or EnvFile when wpConfig is empty.
func EnvFileFor(wpConfig string) []byte {
	out, _ := setWPConfig(envFile, wpConfig)
	return out
}

// envValue writes value for an environment file, in double quotes when it
// holds a space, a quote, a backslash, a dollar sign, a backquote or a #,
// with systemd's escapes (\" \\ \$ \`) and nothing else escaped, so that
// ParseEnv (and systemd) read it back as it was.
func envValue(value string) string {
	if !strings.ContainsAny(value, " \t\"'\\$#`;") {
		return value
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range []byte(value) {
		if c == '"' || c == '\\' || c == '$' || c == '`' {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	b.WriteByte('"')
	return b.String()
}

// setWPConfig sets MAILSVC_WP_CONFIG in an environment file's text: it
// replaces the commented-out line, or appends one. It reports the value
// already set instead, leaving the text alone, when an active line exists.
func setWPConfig(text []byte, wpConfig string) (out []byte, existing string) {
	if wpConfig == "" {
		return bytes.Clone(text), ""
	}
	line := wpConfigName + "=" + envValue(wpConfig)
	lines := strings.Split(string(text), "\n")
	commented := -1
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if v, ok := strings.CutPrefix(t, wpConfigName+"="); ok {
			if parsed, _ := ParseEnv(t); len(parsed) == 1 {
				v = parsed[0].Value
			}
			return bytes.Clone(text), v
		}
		if commented < 0 && strings.HasPrefix(strings.TrimLeft(t, "# "), wpConfigName+"=") {
			commented = i
		}
	}
	if commented >= 0 {
		lines[commented] = line
		return []byte(strings.Join(lines, "\n")), ""
	}
	s := string(text)
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return []byte(s + line + "\n"), ""
}

// Installation writes the unit and the environment file on a host and
// enables the service. The zero value of each path means the standard one.
type Installation struct {
	// UnitPath is where the unit is written; by default UnitPath, or
	// nowhere when the package's unit is in place (PackageUnit exists and
	// Executable is the package's), so that a package upgrade updates it.
	UnitPath    string
	PackageUnit string    // default PackageUnitPath
	EnvPath     string    // default EnvPath
	Executable  string    // the binary ExecStart runs; default Executable
	WPConfig    string    // the site's wp-config.php, set in the environment file when it sets none
	Out         io.Writer // progress lines; default io.Discard
}

// Install writes the unit (replacing an older one) unless the package's is
// in place, and the environment file with MAILSVC_WP_CONFIG when missing;
// it sets MAILSVC_WP_CONFIG in an existing environment file that sets
// none, and says so when it names another file. It creates the mailsvc system user when missing, adding
// it to the www-data group where that exists so it can read a
// wp-config.php of mode 0640. When systemd is running it reloads it and
// enables and starts the service; otherwise it says how to. A failing
// command is an error naming it and its output.
func (in Installation) Install(ctx context.Context) error {
	if in.PackageUnit == "" {
		in.PackageUnit = PackageUnitPath
	}
	if in.EnvPath == "" {
		in.EnvPath = EnvPath
	}
	if in.Executable == "" {
		in.Executable = Executable
	}
	if in.Out == nil {
		in.Out = io.Discard
	}
	if _, err := os.Stat(in.PackageUnit); err == nil && in.UnitPath == "" && in.Executable == Executable {
		fmt.Fprintf(in.Out, "Using the package's systemd unit: %s\n", in.PackageUnit)
	} else {
		if in.UnitPath == "" {
			in.UnitPath = UnitPath
		}
		if err := writeFile(in.UnitPath, UnitFor(in.Executable), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(in.Out, "Wrote the systemd unit: %s (runs %s serve)\n", in.UnitPath, in.Executable)
	}
	if err := in.installEnvFile(); err != nil {
		return err
	}
	if err := in.ensureUser(ctx); err != nil {
		return err
	}
	if !systemdRunning(ctx) {
		fmt.Fprintf(in.Out, "systemd is not running here: start the service with `systemctl daemon-reload && systemctl enable --now %s` where it is\n", Service)
		return nil
	}
	if _, err := run(ctx, "systemctl", "daemon-reload"); err != nil {
		return err
	}
	if _, err := run(ctx, "systemctl", "enable", "--now", Service); err != nil {
		return err
	}
	fmt.Fprintf(in.Out, "Enabled and started %s: journalctl -u mailsvc -f shows its log\n", Service)
	return nil
}

// installEnvFile writes the environment file when missing, or sets
// MAILSVC_WP_CONFIG in it when it sets none.
func (in Installation) installEnvFile() error {
	old, err := os.ReadFile(in.EnvPath)
	if errors.Is(err, os.ErrNotExist) {
		if err := writeFile(in.EnvPath, EnvFileFor(in.WPConfig), 0o640); err != nil {
			return err
		}
		fmt.Fprintf(in.Out, "Wrote the service's environment: %s\n", in.EnvPath)
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the service's environment: %w", err)
	}
	text, existing := setWPConfig(old, in.WPConfig)
	switch {
	case in.WPConfig == "" || existing == in.WPConfig:
		fmt.Fprintf(in.Out, "Kept the service's environment: %s\n", in.EnvPath)
	case existing != "":
		fmt.Fprintf(in.Out, "Kept the service's environment: %s names %s=%s, not %s; edit it if the service should serve this site\n",
			in.EnvPath, wpConfigName, existing, in.WPConfig)
	default:
		if err := writeFile(in.EnvPath, text, 0o640); err != nil {
			return err
		}
		fmt.Fprintf(in.Out, "Set %s=%s in %s\n", wpConfigName, in.WPConfig, in.EnvPath)
	}
	return nil
}

// ensureUser creates the mailsvc system user and group when missing.
func (in Installation) ensureUser(ctx context.Context) error {
	if _, err := run(ctx, "getent", "passwd", User); err == nil {
		return nil
	}
	if _, err := run(ctx, "useradd", "--system", "--user-group", "--no-create-home",
		"--home-dir", StateDir, "--shell", "/usr/sbin/nologin", User); err != nil {
		return err
	}
	fmt.Fprintf(in.Out, "Created the system user %s\n", User)
	if _, err := run(ctx, "getent", "group", "www-data"); err == nil {
		if _, err := run(ctx, "usermod", "--append", "--groups", "www-data", User); err != nil {
			return err
		}
		fmt.Fprintf(in.Out, "Added %s to the group www-data (to read wp-config.php)\n", User)
	}
	return nil
}

// systemdRunning reports whether systemd runs this host, as `systemctl
// is-system-running` tells: "offline" (or no systemctl) means it does
// not, as in most containers. Its exit code is not used: a "degraded"
// system answers non-zero but runs units.
func systemdRunning(ctx context.Context) bool {
	out, err := exec.CommandContext(ctx, "systemctl", "is-system-running").Output()
	state := strings.TrimSpace(string(out))
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return false
	}
	return state != "" && state != "offline" && state != "unknown"
}

// run runs a command found on PATH and returns its combined output; a
// failure is an error naming the command and what it printed.
func run(ctx context.Context, name string, args ...string) ([]byte, error) {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
	return out, nil
}

// writeFile writes data to path with mode perm, creating its directory.
func writeFile(path string, data []byte, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create the directory of %s: %w", path, err)
	}
	if err := os.WriteFile(path, data, perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Chmod(path, perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
