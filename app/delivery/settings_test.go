package delivery

import (
	"testing"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// TestDefaultUncertainGraceIsTheSettingsDefault: the exported constant
// names the default of uncertain_grace_minutes, which the engine reads
// decoded from the setting definitions.
func TestDefaultUncertainGraceIsTheSettingsDefault(t *testing.T) {
	g := core.DecodeGeneralSettings(core.SettingsDefaults(core.FreeSettings))
	if got := time.Duration(g.UncertainGraceMinutes) * time.Minute; got != DefaultUncertainGrace {
		t.Fatalf("uncertain_grace_minutes defaults to %s, DefaultUncertainGrace is %s", got, DefaultUncertainGrace)
	}
}
