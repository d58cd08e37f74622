package drivertest

import (
	"testing"

	"github.com/mailsvc/mailsvc/core"
)

// CheckFields fails the test unless err, from a driver's
// ValidateSettings, names exactly as many fields as wantFields, each of
// wantFields with a message, and is a core.EINVALID error when any field
// is wanted.
func CheckFields(t *testing.T, err error, wantFields []string) {
	t.Helper()
	fields := core.ErrorFields(err)
	if len(fields) != len(wantFields) {
		t.Fatalf("fields = %v, want %v", fields, wantFields)
	}
	for _, f := range wantFields {
		if fields[f] == "" {
			t.Errorf("no message for field %s in %v", f, fields)
		}
	}
	if len(wantFields) > 0 && core.ErrorCode(err) != core.EINVALID {
		t.Errorf("code = %s, want %s", core.ErrorCode(err), core.EINVALID)
	}
}
