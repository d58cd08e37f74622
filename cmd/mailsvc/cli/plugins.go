package cli

import (
	"context"
	"path/filepath"

	api "github.com/mailsvc/mailsvc/adapters/http"
	"github.com/mailsvc/mailsvc/adapters/wordpress"
)

// sitePlugins serves GET /tools/plugins: the WordPress site's active
// plugins, or none in standalone mode (reader nil).
type sitePlugins struct {
	reader *wordpress.PluginReader
}

// ActivePlugins implements api.PluginService.
func (p sitePlugins) ActivePlugins(ctx context.Context) ([]api.Plugin, error) {
	out := []api.Plugin{}
	if p.reader == nil {
		return out, nil
	}
	list, err := p.reader.ActivePlugins(ctx)
	if err != nil {
		return nil, err
	}
	for _, pl := range list {
		out = append(out, api.Plugin{File: pl.File, Slug: pl.Slug, Name: pl.Name, Version: pl.Version})
	}
	return out, nil
}

// plugins returns the plugin lister: over the site's options table, with
// the plugin directory from wp-config.php (WP_PLUGIN_DIR, WP_CONTENT_DIR,
// ABSPATH), MAILSVC_WP_PATH, or else the directory of wp-config.php.
func (rt *runtime) plugins() (sitePlugins, error) {
	if rt.standalone() {
		return sitePlugins{}, nil
	}
	src, err := wordpress.NewGormSource(rt.db.Gorm(), rt.prefix)
	if err != nil {
		return sitePlugins{}, err
	}
	defines := rt.wp.ConstantStrings()
	dir := wordpress.PluginDir(defines, rt.consts.String("MAILSVC_WP_PATH"))
	if dir == "" && rt.wp.Path != "" {
		dir = wordpress.PluginDir(defines, filepath.Dir(rt.wp.Path))
	}
	return sitePlugins{reader: &wordpress.PluginReader{Options: src, Dir: dir}}, nil
}
