package core

import (
	"context"
	"time"
)

// The flood guard (docs/delivery.md "The flood guard"): the service
// learns each site's usual hourly volume per source from its logs, and
// when a source sends far more than that in an hour, or one message goes
// to many recipients within minutes, it alerts once per episode
// (EventFloodHeld) and holds the excess (status StatusHeld) until an
// administrator releases or discards it.

// The flood policies of a source (the flood_sources setting).
const (
	// FloodPolicyHold alerts and holds the excess.
	FloodPolicyHold = "hold"
	// FloodPolicyAlert alerts and holds nothing.
	FloodPolicyAlert = "alert"
	// FloodPolicyTrusted neither alerts nor holds: nothing about the
	// source is held (a newsletter plugin).
	FloodPolicyTrusted = "trusted"
)

// FloodPolicies lists the allowed values of a source's flood policy.
var FloodPolicies = []string{FloodPolicyHold, FloodPolicyAlert, FloodPolicyTrusted}

// FloodSourceCore is the source the bridge names WordPress core's own
// mail by (password resets, new-user and comment notices): the source
// floods come from, held by default.
const FloodSourceCore = "wordpress"

// FloodCoreSources lists the sources whose excess volume is held by
// default; every other source's is alerted on only, unless the
// flood_sources setting says otherwise.
var FloodCoreSources = []string{FloodSourceCore}

// FloodDiscardedError is the error of a held message discarded by POST
// /logs/held/discard: the message fails with it (and the bridge fires
// wp_mail_failed).
const FloodDiscardedError = "discarded by the site's administrator: held by the flood guard"

// Defaults of the flood guard's thresholds (the flood_* settings).
const (
	DefaultFloodVolumeMultiplier  = 10
	DefaultFloodVolumeFloor       = 50
	DefaultFloodRecipients        = 50
	DefaultFloodRecipientsMinutes = 10
)

// The keys of the flood guard's settings, and their group.
const (
	floodVolumeMultiplierKey  = "flood_volume_multiplier"
	floodVolumeFloorKey       = "flood_volume_floor"
	floodRecipientsKey        = "flood_recipients"
	floodRecipientsMinutesKey = "flood_recipients_minutes"
	floodSourcesKey           = "flood_sources"
	floodEnabledKey           = "flood_guard_enabled"
	floodSettingsGroup        = "flood"
)

// FloodSettings are the flood guard's settings, as GeneralSettings holds
// them.
type FloodSettings struct {
	// Enabled: flood_guard_enabled.
	Enabled bool
	// VolumeMultiplier and VolumeFloor: flood_volume_multiplier and
	// flood_volume_floor. A source floods when it sends more than
	// max(VolumeMultiplier × its usual hourly volume, VolumeFloor) within
	// an hour.
	VolumeMultiplier, VolumeFloor int64
	// Recipients and RecipientsMinutes: flood_recipients and
	// flood_recipients_minutes. One message (the same subject and body)
	// sent to more than Recipients different recipients within
	// RecipientsMinutes floods.
	Recipients, RecipientsMinutes int64
	// Sources: flood_sources, a source's policy (FloodPolicy*); a source
	// not named takes FloodDefaultPolicy.
	Sources map[string]string
}

// VolumeThreshold returns the hourly volume over which a source whose
// usual hourly volume is usual floods.
func (f FloodSettings) VolumeThreshold(usual int64) int64 {
	return max(f.VolumeMultiplier*usual, f.VolumeFloor)
}

// Policy returns source's policy for the volume rule: the one flood_sources
// names, else hold for WordPress core's own mail and alert for any other.
func (f FloodSettings) Policy(source string) string {
	if p, ok := f.Sources[source]; ok {
		return p
	}
	return FloodDefaultPolicy(source)
}

// ManyPolicy returns source's policy for the one-message-to-many rule:
// the one flood_sources names, else hold, for every source.
func (f FloodSettings) ManyPolicy(source string) string {
	if p, ok := f.Sources[source]; ok {
		return p
	}
	return FloodPolicyHold
}

// FloodDefaultPolicy is the volume rule's policy of a source flood_sources
// does not name: FloodPolicyHold for FloodCoreSources, else
// FloodPolicyAlert.
func FloodDefaultPolicy(source string) string {
	for _, s := range FloodCoreSources {
		if s == source {
			return FloodPolicyHold
		}
	}
	return FloodPolicyAlert
}

// SourceVolume is what the logs say of one source of one site: the
// messages it queued in the learning window and the hours it sent in,
// from which its usual hourly volume comes.
type SourceVolume struct {
	SiteID      int64
	Source      string
	Messages    int64
	ActiveHours int64
}

// Usual returns the source's usual hourly volume: its messages per hour
// in which it sent any, rounded up (0 when it sent none).
func (v SourceVolume) Usual() int64 {
	if v.ActiveHours <= 0 {
		return 0
	}
	return (v.Messages + v.ActiveHours - 1) / v.ActiveHours
}

// FloodStore reads the volumes the flood guard learns from, and moves
// held logs on.
type FloodStore interface {
	// SourceVolumes returns, per site and source, the logs queued from
	// since to before (held ones and those discarded from the hold not
	// counted) with the distinct hours they fall in.
	SourceVolumes(ctx context.Context, since, before time.Time) ([]SourceVolume, error)
	// ReleaseHeld moves the held logs among ids back to queued, due now,
	// marked released so that the guard lets them go, and returns how
	// many it moved. A log is moved once: a second or concurrent release
	// (or a discard) of it finds it no longer held.
	ReleaseHeld(ctx context.Context, ids []int64) (int, error)
	// DiscardHeld fails the held logs among ids with FloodDiscardedError
	// (with their host hooks: the bridge's wp_mail_failed) and returns
	// how many it failed; once each, as ReleaseHeld.
	DiscardHeld(ctx context.Context, ids []int64) (int, error)
	// CountHeld counts the held logs.
	CountHeld(ctx context.Context) (int, error)
}
