package pro

import (
	"embed"
	"io/fs"

	"github.com/mailsvc/mailsvc/adapters/http/admin"
)

//go:embed static
var screenFiles embed.FS

// Screens returns the Pro add-on's admin screens (js/pro.js, the Pro tab,
// and js/pro-<tab>.js, one module per tab), laid out as
// adapters/http/admin serves its files: the module registers them with
// admin.RegisterScreens, so a build without Pro serves none of them.
func Screens() fs.FS {
	sub, err := fs.Sub(screenFiles, "static")
	if err != nil {
		panic("pro: embedded screens missing: " + err.Error())
	}
	return sub
}

// Tab is the Pro tab in the screens' navigation, registered with the
// screens (admin.RegisterScreens): #/pro, named Pro, rendered by pro.js,
// after the built-in tabs.
func Tab() admin.NavEntry {
	return admin.NavEntry{Slug: "pro", Title: "Pro", Module: "pro.js"}
}
