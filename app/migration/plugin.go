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

// fromOption is Connections for a plugin whose connections are in its
// option: it reads the option (an error that stops the reading is wrapped
// with label); when the option is absent or not an array, the Setup holds
// only that problem, else convert makes the Setup from the option's
// array, setup holding any problem so far.
func (p plugin) fromOption(ctx context.Context, site Site, label string, convert func(setup *Setup, opts Dict) (*Setup, error)) (*Setup, error) {
	setup := &Setup{}
	opts, found, err := setup.readDict(ctx, site, label, p.option)
	if err != nil {
		return nil, err
	}
	if !found || opts == nil {
		return setup, nil
	}
	return convert(setup, opts)
}

// addDefault adds c to s as its default connection.
func (s *Setup) addDefault(c Candidate) {
	s.Candidates = append(s.Candidates, c)
	s.DefaultKey = c.Key
}
