package core

import (
	"context"
	"time"
)

// ScopeEmailControls is the settings scope of the email controls: one key
// per kind (EmailControlKinds), its value true (sent, the default) or
// false (switched off). The WordPress bridge reads this scope.
const ScopeEmailControls = "email_controls"

// EmailControlKind is one WordPress core email that the email controls
// can switch off. Kind is a stable snake_case identifier (the key of the
// settings scope, of the counts and of the API). docs/hooks.md lists the
// WordPress filters through which the bridge switches each off.
type EmailControlKind struct {
	Kind  string `json:"kind"`
	Group string `json:"group"`
	Label string `json:"label"`
}

// Setting is the definition of k's key in ScopeEmailControls: a
// boolean, true (the email is sent) unless switched off. Readers take
// a kind's state through its Decode, so the default lives here.
func (k EmailControlKind) Setting() SettingDef {
	return SettingDef{Key: k.Kind, Type: SettingBool, Default: true, Label: k.Label}
}

// Email control groups, as the Settings screen shows them.
const (
	EmailControlGroupUsers    = "users"
	EmailControlGroupComments = "comments"
	EmailControlGroupUpdates  = "updates"
	EmailControlGroupPrivacy  = "privacy"
	EmailControlGroupSite     = "site"
)

// EmailControlKinds lists every WordPress core email the controls cover,
// in the order the Settings screen shows them. The bridge
// (adapters/wordpress/bridge/mailsvc-bridge/email-controls.php) holds the same list;
// a test keeps the two equal.
var EmailControlKinds = []EmailControlKind{
	{Kind: "new_user_admin", Group: EmailControlGroupUsers, Label: "New user registered: notice to the admin"},
	{Kind: "new_user_user", Group: EmailControlGroupUsers, Label: "New user registered: welcome email to the user"},
	{Kind: "password_change_user", Group: EmailControlGroupUsers, Label: "Password changed: notice to the user"},
	{Kind: "password_change_admin", Group: EmailControlGroupUsers, Label: "Password reset: notice to the admin"},
	{Kind: "email_change_user", Group: EmailControlGroupUsers, Label: "Email address changed: notice to the user"},
	{Kind: "comment_notification", Group: EmailControlGroupComments, Label: "New comment: notice to the post author"},
	{Kind: "comment_moderation", Group: EmailControlGroupComments, Label: "Comment awaiting moderation: notice to the moderators"},
	{Kind: "auto_update_core", Group: EmailControlGroupUpdates, Label: "Automatic update of WordPress: result"},
	{Kind: "auto_update_plugins", Group: EmailControlGroupUpdates, Label: "Automatic update of plugins: result"},
	{Kind: "auto_update_themes", Group: EmailControlGroupUpdates, Label: "Automatic update of themes: result"},
	{Kind: "privacy_request_user", Group: EmailControlGroupPrivacy, Label: "Personal data request: confirmation request to the user"},
	{Kind: "privacy_request_confirmed_admin", Group: EmailControlGroupPrivacy, Label: "Personal data request confirmed: notice to the admin"},
	{Kind: "privacy_erasure_done_user", Group: EmailControlGroupPrivacy, Label: "Personal data erased: notice to the user"},
	{Kind: "privacy_export_ready_user", Group: EmailControlGroupPrivacy, Label: "Personal data export ready: link to the user"},
	{Kind: "admin_email_change", Group: EmailControlGroupSite, Label: "Site admin email changed: notice to the old address"},
	{Kind: "admin_email_change_confirm", Group: EmailControlGroupSite, Label: "Site admin email change: confirmation request to the new address"},
}

// EmailControlKnown reports whether kind is one of EmailControlKinds.
func EmailControlKnown(kind string) bool {
	for _, k := range EmailControlKinds {
		if k.Kind == kind {
			return true
		}
	}
	return false
}

// EmailControlDay is the date format of the counts' days: a calendar day
// in the site's time zone, as the bridge writes it (wp_date('Y-m-d')).
const EmailControlDay = "2006-01-02"

// EmailControlCounter keeps how many emails of each kind the controls
// stopped: one counter per kind per day, which the bridge increments in
// {prefix}mailsvc_email_control_counts as it stops an email.
type EmailControlCounter interface {
	// AddEmailControlCount adds n to the count of kind on day (a date
	// in EmailControlDay format), creating the counter. Safe to call
	// concurrently; each call adds exactly once.
	AddEmailControlCount(ctx context.Context, kind, day string, n int64) error
	// EmailControlCounts returns the counts per kind over the days
	// from..to inclusive (EmailControlDay format; "" leaves a bound
	// open). Kinds without a count are absent.
	EmailControlCounts(ctx context.Context, from, to string) (map[string]int64, error)
}

// EmailControlDays returns the first and last calendar day, in loc, of
// the period [from, to): the bounds EmailControlCounts takes.
func EmailControlDays(from, to time.Time, loc *time.Location) (string, string) {
	last := to.Add(-time.Nanosecond)
	if last.Before(from) {
		last = from
	}
	return from.In(loc).Format(EmailControlDay), last.In(loc).Format(EmailControlDay)
}
