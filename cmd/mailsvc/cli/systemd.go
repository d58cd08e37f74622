package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/mailsvc/mailsvc/adapters/systemd"
)

// systemdFlags are `mailsvc wp install`'s flags for running the service
// under systemd.
type systemdFlags struct {
	enabled  bool   // --systemd
	unitPath string // --systemd-unit
	envPath  string // --systemd-env
}

func (f *systemdFlags) register(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.enabled, "systemd", false, "also install the systemd unit and enable the service (needs root)")
	cmd.Flags().StringVar(&f.unitPath, "systemd-unit", "", "where --systemd writes the unit (default "+systemd.UnitPath+", or the package's unit when this binary is "+systemd.Executable+")")
	cmd.Flags().StringVar(&f.envPath, "systemd-env", systemd.EnvPath, "the service's environment file --systemd writes when missing")
}

// install installs the unit running this binary for the site whose
// wp-config.php is wpConfig.
func (f *systemdFlags) install(ctx context.Context, wpConfig string, out io.Writer) error {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return fmt.Errorf("find this binary for the unit's ExecStart: %w", err)
	}
	if wpConfig, err = filepath.Abs(wpConfig); err != nil {
		return fmt.Errorf("wp-config.php of the site: %w", err)
	}
	return systemd.Installation{UnitPath: f.unitPath, EnvPath: f.envPath, Executable: exe, WPConfig: wpConfig, Out: out}.Install(ctx)
}
