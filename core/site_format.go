package core

// SiteFormat is how a site shows dates and times to its people:
// WordPress's date_format, time_format, timezone_string and gmt_offset
// options (Settings → General). Standalone, DefaultSiteFormat.
type SiteFormat struct {
	// DateFormat and TimeFormat are PHP date() formats ("d.m.Y", "H:i").
	DateFormat string `json:"date_format"`
	TimeFormat string `json:"time_format"`
	// TimeZone is an IANA zone name ("Europe/Berlin"), or "" when the
	// site gives its zone as GMTOffset only.
	TimeZone string `json:"timezone_string"`
	// GMTOffset is the site's offset from UTC in hours (5.5 for +05:30),
	// used when TimeZone is "".
	GMTOffset float64 `json:"gmt_offset"`
}

// DefaultSiteFormat is WordPress's own default: "F j, Y", "g:i a", UTC.
var DefaultSiteFormat = SiteFormat{DateFormat: "F j, Y", TimeFormat: "g:i a"}
