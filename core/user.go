package core

// User is an authenticated account of the site, with its effective
// capabilities on the current site (roles merged with per-user grants, as
// WordPress computes them).
type User struct {
	ID    int64           `json:"id"`
	Login string          `json:"login"`
	Email string          `json:"email"`
	Roles []string        `json:"roles"`
	Caps  map[string]bool `json:"-"`
	// Via says how the request was authenticated: "cookie",
	// "application_password", "smtp", or "wordpress" (the bridge's signed
	// statement of WordPress's current user, on an ability's call).
	Via string `json:"-"`
	// SuperAdmin is set for a multisite network's super admin
	// (is_super_admin()): every capability is granted but do_not_allow.
	SuperAdmin bool `json:"super_admin,omitempty"`
}

// Can reports whether the user holds the capability.
func (u *User) Can(capability string) bool {
	if u == nil || capability == "do_not_allow" {
		return false
	}
	return u.SuperAdmin || u.Caps[capability]
}

// DefaultCapability is the capability every REST route requires unless the
// mail_svc_rest_capability extension changes it.
const DefaultCapability = "manage_options"
