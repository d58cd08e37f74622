package migration

import "context"

// plugin is the half of a Source that describes the plugin: its id and
// name, the reader of its log (nil: it keeps none), and where Detect
// looks: its option (or, when that is absent, its legacy option), its log
// table and its directory under wp-content/plugins. A Source embeds it
// and adds Connections.
type plugin struct {
	id, name string
	logs     LogSource
	option   string
	legacy   string
	table    string
	dir      string
}

// ID is the source id.
func (p plugin) ID() string { return p.id }

// Name is the plugin's name.
func (p plugin) Name() string { return p.name }

// Logs reads the plugin's log, or is nil.
func (p plugin) Logs() LogSource { return p.logs }

// Detect looks for the option (else the legacy option), the log table
// and the active plugin.
func (p plugin) Detect(ctx context.Context, site Site) (Detection, error) {
	d, err := detect(ctx, site, p.option, p.table, p.dir)
	if err != nil || d.Found || p.legacy == "" {
		return d, err
	}
	old, err := detect(ctx, site, p.legacy, "", p.dir)
	d.Found = old.Found
	return d, err
}
