// Command mailsvc is the mail-delivery service for WordPress sites: one
// binary that serves the admin REST API, delivers the queued mail, takes
// mail in through sendmail and SMTP, and manages its installation. It is
// the command line of package cli with the built-in drivers and the Pro
// add-on (remove the cmd/mailsvc/pro import for a build without Pro).
package main

import (
	"github.com/mailsvc/mailsvc/cmd/mailsvc/cli"
	_ "github.com/mailsvc/mailsvc/cmd/mailsvc/pro" // the Pro add-on
	_ "github.com/mailsvc/mailsvc/drivers/all"
)

func main() { cli.Main() }
