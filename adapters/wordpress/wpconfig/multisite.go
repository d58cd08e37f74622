package wpconfig

// Multisite is what wp-config.php says about a multisite network.
type Multisite struct {
	// SubdomainInstall is SUBDOMAIN_INSTALL (or the older VHOST 'yes'):
	// sites are subdomains of Domain rather than paths under Path.
	SubdomainInstall bool
	// Domain is DOMAIN_CURRENT_SITE and Path PATH_CURRENT_SITE (with its
	// slashes, default "/"): where the main site lives.
	Domain string
	Path   string
	// NetworkID is SITE_ID_CURRENT_SITE (default 1) and MainSiteID
	// BLOG_ID_CURRENT_SITE (default 1).
	NetworkID  int64
	MainSiteID int64
}

// Multisite reports whether the file makes WordPress a multisite network,
// as is_multisite() decides: MULTISITE when it is defined, otherwise
// whether SUBDOMAIN_INSTALL, VHOST or SUNRISE is defined. It returns the
// network's constants.
func (f *File) Multisite() (Multisite, bool) {
	on := false
	if v, ok := f.Defines["MULTISITE"]; ok {
		on = v.Truthy()
	} else {
		for _, name := range []string{"SUBDOMAIN_INSTALL", "VHOST", "SUNRISE"} {
			if _, ok := f.Defines[name]; ok {
				on = true
			}
		}
	}
	if !on {
		return Multisite{}, false
	}
	m := Multisite{Path: "/", NetworkID: 1, MainSiteID: 1}
	if v, ok := f.Defines["SUBDOMAIN_INSTALL"]; ok {
		m.SubdomainInstall = v.Truthy()
	} else if v, ok := f.Defines["VHOST"]; ok {
		m.SubdomainInstall = v.String() == "yes"
	}
	m.Domain = f.Str("DOMAIN_CURRENT_SITE")
	if p := f.Str("PATH_CURRENT_SITE"); p != "" {
		m.Path = p
	}
	if v, ok := f.Defines["SITE_ID_CURRENT_SITE"]; ok && toInt(v) > 0 {
		m.NetworkID = toInt(v)
	}
	if v, ok := f.Defines["BLOG_ID_CURRENT_SITE"]; ok && toInt(v) > 0 {
		m.MainSiteID = toInt(v)
	}
	return m, true
}
