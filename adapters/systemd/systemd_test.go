package systemd_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/adapters/systemd"
	"github.com/mailsvc/mailsvc/internal/testenv"
)

// TestUnitIsHardened checks the directives the shipped unit must carry.
func TestUnitIsHardened(t *testing.T) {
	var directives []string
	for _, line := range strings.Split(string(systemd.Unit()), "\n") {
		if !strings.HasPrefix(line, "#") {
			directives = append(directives, line)
		}
	}
	unit := strings.Join(directives, "\n")
	for _, want := range []string{
		"User=mailsvc",
		"ExecStart=/usr/bin/mailsvc serve",
		"EnvironmentFile=/etc/mailsvc/mailsvc.env",
		"Environment=MAILSVC_DATA_DIR=/var/lib/mailsvc",
		"StateDirectory=mailsvc",
		"ProtectSystem=strict",
		"ProtectHome=read-only",
		"NoNewPrivileges=yes",
		"PrivateTmp=yes",
		"CapabilityBoundingSet=\n",
		"RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX",
		"WantedBy=multi-user.target",
	} {
		if !strings.Contains(unit, want) {
			t.Errorf("the unit lacks %q", want)
		}
	}
	for _, banned := range []string{"ReadWritePaths=", "DynamicUser=", "AmbientCapabilities=CAP"} {
		if strings.Contains(unit, banned) {
			t.Errorf("the unit has %q: the state directory is the only writable place", banned)
		}
	}
}

// TestUnitVerifies runs systemd-analyze verify on the unit, with
// ExecStart pointed at an executable that exists here.
func TestUnitVerifies(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		testenv.Missing(t, "systemd-analyze is not installed (Debian package systemd)")
	}
	trueBin, err := exec.LookPath("true")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), systemd.Service)
	if err := os.WriteFile(path, systemd.UnitFor(trueBin), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, systemd.Service) {
			t.Errorf("systemd-analyze verify warns: %s", line)
		}
	}
}

func TestEnvFileFor(t *testing.T) {
	tests := []struct {
		wpConfig, want string
	}{
		{"/var/www/html/wp-config.php", "\nMAILSVC_WP_CONFIG=/var/www/html/wp-config.php\n"},
		{"/srv/my site/wp-config.php", "\nMAILSVC_WP_CONFIG=\"/srv/my site/wp-config.php\"\n"},
		{"", "\n#MAILSVC_WP_CONFIG=/var/www/html/wp-config.php\n"},
	}
	for _, tt := range tests {
		got := string(systemd.EnvFileFor(tt.wpConfig))
		if !strings.Contains(got, tt.want) {
			t.Errorf("EnvFileFor(%q) lacks %q:\n%s", tt.wpConfig, tt.want, got)
		}
		if n := strings.Count(got, "MAILSVC_WP_CONFIG="); n != 1 {
			t.Errorf("EnvFileFor(%q) has %d MAILSVC_WP_CONFIG lines", tt.wpConfig, n)
		}
	}
}

// fakeCommands puts fake getent, useradd, usermod and systemctl first on
// PATH. Each appends its command line to the returned log. systemctl
// is-system-running prints state; getent knows the user mailsvc when
// userExists, and the group www-data always; `systemctl enable` fails
// when failEnable.
func fakeCommands(t *testing.T, state string, userExists, failEnable bool) (log string) {
	t.Helper()
	dir := t.TempDir()
	log = filepath.Join(dir, "commands.log")
	user := "2"
	if userExists {
		user = "0"
	}
	enable := "0"
	if failEnable {
		enable = "1"
	}
	scripts := map[string]string{
		"getent":  `case "$1 $2" in "passwd mailsvc") exit ` + user + `;; "group www-data") exit 0;; esac; exit 2`,
		"useradd": `exit 0`,
		"usermod": `exit 0`,
		"systemctl": `case "$1" in
is-system-running) echo ` + state + `; [ ` + state + ` = running ]; exit $?;;
enable) echo "Failed to enable unit" >&2; exit ` + enable + `;;
esac; exit 0`,
	}
	for name, body := range scripts {
		script := "#!/bin/sh\necho \"" + name + " $*\" >> " + log + "\n" + body + "\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return log
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

func TestInstall(t *testing.T) {
	const wpConfig = "/var/www/example.org/wp-config.php"
	newUser := []string{
		"getent passwd mailsvc",
		"useradd --system --user-group --no-create-home --home-dir /var/lib/mailsvc --shell /usr/sbin/nologin mailsvc",
		"getent group www-data",
		"usermod --append --groups www-data mailsvc",
	}
	enable := []string{"systemctl is-system-running", "systemctl daemon-reload", "systemctl enable --now mailsvc.service"}
	tests := []struct {
		name       string
		state      string
		userExists bool
		failEnable bool
		oldEnv     string // "" for no environment file
		wantEnv    string // a line the environment file must hold
		wantCmds   []string
		wantOut    string
		wantErr    string
	}{
		{
			name: "running systemd, new host", state: "running",
			wantEnv:  "MAILSVC_WP_CONFIG=" + wpConfig,
			wantCmds: append(slices.Clone(newUser), enable...),
			wantOut:  "Enabled and started mailsvc.service",
		},
		{
			name: "degraded systemd, user and package environment present", state: "degraded", userExists: true,
			oldEnv:   string(systemd.EnvFile()),
			wantEnv:  "MAILSVC_WP_CONFIG=" + wpConfig,
			wantCmds: append([]string{"getent passwd mailsvc"}, enable...),
			wantOut:  "Set MAILSVC_WP_CONFIG=" + wpConfig,
		},
		{
			name: "container without systemd", state: "offline", userExists: true,
			wantEnv:  "MAILSVC_WP_CONFIG=" + wpConfig,
			wantCmds: []string{"getent passwd mailsvc", "systemctl is-system-running"},
			wantOut:  "systemd is not running here",
		},
		{
			name: "environment naming another site is kept", state: "offline", userExists: true,
			oldEnv:   "MAILSVC_WP_CONFIG=/srv/other/wp-config.php\n",
			wantEnv:  "MAILSVC_WP_CONFIG=/srv/other/wp-config.php",
			wantCmds: []string{"getent passwd mailsvc", "systemctl is-system-running"},
			wantOut:  "names MAILSVC_WP_CONFIG=/srv/other/wp-config.php, not " + wpConfig,
		},
		{
			name: "enable fails", state: "running", userExists: true, failEnable: true,
			wantEnv:  "MAILSVC_WP_CONFIG=" + wpConfig,
			wantCmds: append([]string{"getent passwd mailsvc"}, enable...),
			wantErr:  "systemctl enable --now mailsvc.service: exit status 1: Failed to enable unit",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := fakeCommands(t, tt.state, tt.userExists, tt.failEnable)
			dir := t.TempDir()
			unitPath := filepath.Join(dir, "systemd", "mailsvc.service")
			envPath := filepath.Join(dir, "etc", "mailsvc.env")
			if tt.oldEnv != "" {
				if err := os.MkdirAll(filepath.Dir(envPath), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(envPath, []byte(tt.oldEnv), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var out strings.Builder
			err := systemd.Installation{UnitPath: unitPath, EnvPath: envPath,
				Executable: "/usr/local/bin/mailsvc", WPConfig: wpConfig, Out: &out}.Install(context.Background())
			if tt.wantErr == "" && err != nil {
				t.Fatalf("Install: %v\n%s", err, out.String())
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Install error = %v, want %q", err, tt.wantErr)
			}
			if got := readLines(t, log); !slices.Equal(got, tt.wantCmds) {
				t.Errorf("commands run:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.wantCmds, "\n"))
			}
			if !strings.Contains(out.String(), tt.wantOut) {
				t.Errorf("output lacks %q:\n%s", tt.wantOut, out.String())
			}
			unit, err := os.ReadFile(unitPath)
			if err != nil {
				t.Fatal(err)
			}
			if string(unit) != string(systemd.UnitFor("/usr/local/bin/mailsvc")) ||
				!strings.Contains(string(unit), "ExecStart=/usr/local/bin/mailsvc serve\n") {
				t.Errorf("unit written:\n%s", unit)
			}
			env, err := os.ReadFile(envPath)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(strings.Split(string(env), "\n"), tt.wantEnv) {
				t.Errorf("environment file lacks the line %q:\n%s", tt.wantEnv, env)
			}
			if n := strings.Count(string(env), "MAILSVC_WP_CONFIG="); n != 1 {
				t.Errorf("environment file has %d MAILSVC_WP_CONFIG lines:\n%s", n, env)
			}
			if tt.oldEnv == "" {
				if fi, err := os.Stat(envPath); err != nil || fi.Mode().Perm() != 0o640 {
					t.Errorf("environment file mode: %v %v, want 0640", fi.Mode(), err)
				}
			}
		})
	}
}

// TestInstallKeepsPackageUnit: with the package's unit in place and the
// package's binary running, Install writes no unit of its own (a package
// upgrade then updates the unit in use) and enables the package's.
func TestInstallKeepsPackageUnit(t *testing.T) {
	log := fakeCommands(t, "running", true, false)
	dir := t.TempDir()
	packageUnit := filepath.Join(dir, "lib", "mailsvc.service")
	if err := os.MkdirAll(filepath.Dir(packageUnit), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(packageUnit, systemd.Unit(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, statErr := os.Stat(systemd.UnitPath)
	var out strings.Builder
	err := systemd.Installation{PackageUnit: packageUnit, EnvPath: filepath.Join(dir, "mailsvc.env"),
		Executable: systemd.Executable, WPConfig: "/srv/site/wp-config.php", Out: &out}.Install(context.Background())
	if err != nil {
		t.Fatalf("Install: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "Using the package's systemd unit: "+packageUnit) {
		t.Errorf("output:\n%s", out.String())
	}
	if _, err := os.Stat(systemd.UnitPath); os.IsNotExist(statErr) && !os.IsNotExist(err) {
		t.Errorf("Install wrote %s beside the package's unit", systemd.UnitPath)
	}
	if got := readLines(t, log); !slices.Contains(got, "systemctl enable --now mailsvc.service") {
		t.Errorf("commands run: %v", got)
	}
}
