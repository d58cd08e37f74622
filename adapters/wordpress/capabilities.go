package wordpress

import (
	"context"
	"strconv"

	"github.com/mailsvc/mailsvc/core"
)

// keyString converts a PHP array key (int64 or string) to its string form.
func keyString(k any) string {
	switch x := k.(type) {
	case int64:
		return strconv.FormatInt(x, 10)
	case string:
		return x
	}
	return ""
}

// roleDefinitions reads the roles option "{prefix}user_roles" as
// WP_Roles does: role slug -> capabilities array (nil when the role has
// none). A missing or malformed option defines no roles.
func (a *Authenticator) roleDefinitions(ctx context.Context) (map[string]*Array, error) {
	v, _, err := a.option(ctx, a.src.Prefix()+"user_roles")
	if err != nil {
		return nil, err
	}
	return parseRoles(v), nil
}

// parseRoles reads a user_roles option's value: role slug -> capabilities
// array (nil when the role has none). A value that is not an array
// defines no roles.
func parseRoles(v any) map[string]*Array {
	roles := map[string]*Array{}
	arr, ok := v.(*Array)
	if !ok {
		return roles
	}
	for i := 0; i < arr.Len(); i++ {
		k, def := arr.At(i)
		var caps *Array
		if d, ok := def.(*Array); ok {
			if c, ok := d.Get("capabilities"); ok {
				caps, _ = c.(*Array)
			}
		}
		roles[keyString(k)] = caps
	}
	return roles
}

// Capabilities computes WP_User's roles and allcaps on the (single) site
// from the roles definitions and the user's raw "{prefix}capabilities"
// meta value: the roles are the meta's keys that name a defined role, in
// order (their values are ignored); allcaps merges each role's caps in that
// order, then the meta itself on top; values are judged by PHP truthiness.
// As has_cap() does, "exist" is always granted and "do_not_allow" never.
func Capabilities(roleDefs map[string]*Array, capsMeta string) (roles []string, caps map[string]bool) {
	userCaps, ok := MaybeUnserialize(capsMeta).(*Array)
	if !ok {
		userCaps = NewArray()
	}
	all := map[string]any{}
	roles = []string{}
	for i := 0; i < userCaps.Len(); i++ {
		k, _ := userCaps.At(i)
		name := keyString(k)
		rc, isRole := roleDefs[name]
		if !isRole {
			continue
		}
		roles = append(roles, name)
		for j := 0; j < rc.Len(); j++ {
			ck, cv := rc.At(j)
			all[keyString(ck)] = cv
		}
	}
	for i := 0; i < userCaps.Len(); i++ {
		k, v := userCaps.At(i)
		all[keyString(k)] = v
	}
	caps = make(map[string]bool, len(all)+1)
	for k, v := range all {
		if Truthy(v) {
			caps[k] = true
		}
	}
	caps["exist"] = true
	delete(caps, "do_not_allow")
	return roles, caps
}

// blogRoleDefinitions is roleDefinitions for one site of a network: the
// option "{blog prefix}user_roles" of the site's own options table.
func (a *Authenticator) blogRoleDefinitions(ctx context.Context, blogID int64) (map[string]*Array, error) {
	prefix := BlogPrefix(a.network.BasePrefix(), blogID)
	raw, _, err := a.network.BlogOption(ctx, blogID, prefix+"user_roles")
	if err != nil {
		return nil, err
	}
	return parseRoles(MaybeUnserialize(raw)), nil
}

// loadUser builds the core.User for a validated users row: on a network,
// with the roles and capabilities of the site the context names
// ("{blog prefix}capabilities"), and the super admin flag.
func (a *Authenticator) loadUser(ctx context.Context, row *UserRow, via string) (*core.User, error) {
	var (
		defs   map[string]*Array
		capKey string
		err    error
	)
	if a.network != nil {
		blog, ok := core.SiteFrom(ctx)
		if !ok {
			blog = a.network.MainSiteID()
		}
		defs, err = a.blogRoleDefinitions(ctx, blog)
		capKey = BlogPrefix(a.network.BasePrefix(), blog) + "capabilities"
	} else {
		defs, err = a.roleDefinitions(ctx)
		capKey = a.src.Prefix() + "capabilities"
	}
	if err != nil {
		return nil, err
	}
	raw, _, err := a.src.UserMeta(ctx, row.ID, capKey)
	if err != nil {
		return nil, err
	}
	roles, caps := Capabilities(defs, raw)
	u := &core.User{
		ID:    row.ID,
		Login: row.Login,
		Email: row.Email,
		Roles: roles,
		Caps:  caps,
		Via:   via,
	}
	if a.network != nil {
		if u.SuperAdmin, err = a.network.IsSuperAdmin(ctx, row.Login); err != nil {
			return nil, err
		}
	}
	return u, nil
}
