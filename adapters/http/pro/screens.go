package pro

import (
	"embed"
	"io/fs"
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
