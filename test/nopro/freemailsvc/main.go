// Command freemailsvc is mailsvc built without the Pro add-on: the
// command line and the built-in drivers, and no blank import of
// cmd/mailsvc/pro (as a site owner builds the free edition).
package main

import (
	"github.com/mailsvc/mailsvc/cmd/mailsvc/cli"
	_ "github.com/mailsvc/mailsvc/drivers/all"
)

func main() { cli.Main() }
