// Command acmemailsvc is a custom build of mailsvc: the standard command
// line and built-in drivers, plus a third-party driver added by a blank
// import, with no change to mailsvc's code.
package main

import (
	"github.com/mailsvc/mailsvc/cmd/mailsvc/cli"
	_ "github.com/mailsvc/mailsvc/drivers/all"
	_ "github.com/mailsvc/mailsvc/test/thirdparty/acmedriver"
)

func main() { cli.Main() }
