// Package e2e drives the built mailsvc binary as a user would: started as a
// process, configured through its environment, called over HTTP.
package e2e

import (
	"testing"

	"github.com/mailsvc/mailsvc/test/servicetest"
)

func TestMain(m *testing.M) { servicetest.Main(m) }

// Shorthands for the calls every test here makes.
var (
	call  = servicetest.Call
	basic = servicetest.Basic
)
