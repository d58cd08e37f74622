package core

import (
	"context"
	"net"
	"strings"
)

// The staging guard (docs/staging.md): the service keeps the fingerprint
// of the live site, and when the running site's differs (a copy on a
// staging host, a backup restored on another domain), when the
// environment says the site is not production, or while simulation mode
// is on, messages are captured (status StatusCaptured) rather than sent,
// until an administrator releases them.

// The values of MAILSVC_ENVIRONMENT, which overrides the guess.
const (
	EnvironmentProduction  = "production"
	EnvironmentStaging     = "staging"
	EnvironmentDevelopment = "development"
)

// Environments lists the allowed values of MAILSVC_ENVIRONMENT.
var Environments = []string{EnvironmentProduction, EnvironmentStaging, EnvironmentDevelopment}

// EnvironmentConstant is the constant that names the environment and
// overrides the guess.
const EnvironmentConstant = "MAILSVC_ENVIRONMENT"

// The capture modes.
const (
	// CaptureModeSend delivers mail as usual.
	CaptureModeSend = "send"
	// CaptureModeCapture holds mail: messages become StatusCaptured,
	// except those the allow-list covers (not in simulation mode).
	CaptureModeCapture = "capture"
)

// The reasons for capture.
const (
	// CaptureReasonCopy: the running site's fingerprint differs from the
	// live site's.
	CaptureReasonCopy = "copy"
	// CaptureReasonEnvironment: MAILSVC_ENVIRONMENT, or WordPress's
	// wp_get_environment_type(), says the site is not production.
	CaptureReasonEnvironment = "environment"
	// CaptureReasonSimulation: the simulation_enabled setting is on.
	CaptureReasonSimulation = "simulation"
)

// WordPressNonProduction lists the wp_get_environment_type() values that
// capture.
var WordPressNonProduction = []string{"staging", "development", "local"}

// Fingerprint identifies a site: where it is served and which database
// it uses. A copy of the site (another host, another database) has a
// different one.
type Fingerprint struct {
	SiteURL     string `json:"siteurl"`
	Home        string `json:"home"`
	DBName      string `json:"db_name"`
	DBHost      string `json:"db_host"`
	TablePrefix string `json:"table_prefix"`
}

// Normalized returns f as fingerprints are compared: URLs without a
// trailing slash and lower-cased scheme and host, the database host
// lower-cased with MySQL's default port and the loopback names folded
// (localhost, 127.0.0.1 and ::1 are one host).
func (f Fingerprint) Normalized() Fingerprint {
	f.SiteURL, f.Home = normalURL(f.SiteURL), normalURL(f.Home)
	f.DBName = strings.TrimSpace(f.DBName)
	f.DBHost = normalDBHost(f.DBHost)
	f.TablePrefix = strings.TrimSpace(f.TablePrefix)
	return f
}

// Differences names the fields (by their JSON names) in which o differs
// from f (the live fingerprint) once normalized; none when they are the
// same site. A field f does not know (empty: a standalone service
// recorded before MAILSVC_PUBLIC_URL was set) is not compared.
func (f Fingerprint) Differences(o Fingerprint) []string {
	a, b := f.Normalized(), o.Normalized()
	var out []string
	for _, c := range []struct{ name, x, y string }{
		{"siteurl", a.SiteURL, b.SiteURL}, {"home", a.Home, b.Home},
		{"db_name", a.DBName, b.DBName}, {"db_host", a.DBHost, b.DBHost},
		{"table_prefix", a.TablePrefix, b.TablePrefix},
	} {
		if c.x != "" && c.x != c.y {
			out = append(out, c.name)
		}
	}
	return out
}

// Address is the site's address as a person knows it: home, else siteurl.
func (f Fingerprint) Address() string {
	if f.Home != "" {
		return strings.TrimRight(f.Home, "/")
	}
	return strings.TrimRight(f.SiteURL, "/")
}

func normalURL(u string) string {
	u = strings.TrimRight(strings.TrimSpace(u), "/")
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	host, path, _ := strings.Cut(rest, "/")
	if path != "" {
		path = "/" + path
	}
	return strings.ToLower(scheme) + "://" + strings.ToLower(host) + path
}

func normalDBHost(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	if host, port, err := net.SplitHostPort(h); err == nil && (port == "3306" || port == "") {
		h = host
	}
	switch h {
	case "", "localhost", "127.0.0.1", "::1", "[::1]":
		return "localhost"
	}
	return h
}

// CaptureState is what the capture guard decides for the site now, as
// GET /capture, doctor and the dashboard show it.
type CaptureState struct {
	// Mode is CaptureModeSend or CaptureModeCapture.
	Mode string `json:"mode"`
	// Reason is why mail is captured (CaptureReason*), "" when sending.
	Reason string `json:"reason"`
	// Message is the banner's sentence ("" when sending).
	Message string `json:"message"`
	// Environment is the environment in force and EnvironmentSource where
	// it comes from: "MAILSVC_ENVIRONMENT", "WP_ENVIRONMENT_TYPE" (what
	// WordPress's wp_get_environment_type() says) or "default".
	Environment       string `json:"environment"`
	EnvironmentSource string `json:"environment_source"`
	// Live is the live site's fingerprint (nil until recorded) and
	// Current the running site's; Differences names the fields that
	// differ.
	Live        *Fingerprint `json:"live"`
	Current     Fingerprint  `json:"current"`
	Differences []string     `json:"differences"`
	// AllowList is the capture_allow_list setting: the addresses and
	// domains still delivered during capture (not in simulation mode).
	AllowList []string `json:"allow_list"`
	// Captured counts the captured messages waiting for a release.
	Captured int `json:"captured"`
}

// Capturing reports whether mail is being held.
func (s CaptureState) Capturing() bool { return s.Mode == CaptureModeCapture }

// Holds reports whether a message to recipients is captured in this
// state: always in simulation mode, else unless the allow-list covers
// every recipient.
func (s CaptureState) Holds(recipients []Address) bool {
	if !s.Capturing() {
		return false
	}
	if s.Reason == CaptureReasonSimulation || len(recipients) == 0 {
		return true
	}
	for _, r := range recipients {
		if !AllowListCovers(s.AllowList, r.Email) {
			return true
		}
	}
	return false
}

// CaptureInput is what the capture decision is made from.
type CaptureInput struct {
	// Live is the recorded fingerprint (nil when none is recorded yet),
	// Current the running site's.
	Live    *Fingerprint
	Current Fingerprint
	// Environment is MAILSVC_ENVIRONMENT ("" when not set).
	Environment string
	// WordPressEnvironment is wp_get_environment_type() as the service
	// knows it ("" when unknown: production).
	WordPressEnvironment string
	// Simulation is the simulation_enabled setting.
	Simulation bool
	AllowList  []string
}

// DecideCapture works out the capture state: simulation mode captures;
// else MAILSVC_ENVIRONMENT decides when set (production sends, even from
// a copy); else a WordPress environment type of staging, development or
// local captures; else a fingerprint that differs from the live one
// captures.
func DecideCapture(in CaptureInput) CaptureState {
	st := CaptureState{
		Mode: CaptureModeSend, Live: in.Live, Current: in.Current,
		AllowList: in.AllowList, Environment: EnvironmentProduction, EnvironmentSource: "default",
	}
	if st.AllowList == nil {
		st.AllowList = []string{}
	}
	if in.Live != nil {
		st.Differences = in.Live.Differences(in.Current)
	}
	if st.Differences == nil {
		st.Differences = []string{}
	}
	wpEnv := strings.ToLower(strings.TrimSpace(in.WordPressEnvironment))
	switch env := strings.ToLower(strings.TrimSpace(in.Environment)); {
	case env != "":
		st.Environment, st.EnvironmentSource = env, EnvironmentConstant
	case wpEnv != "":
		st.Environment, st.EnvironmentSource = wpEnv, "WP_ENVIRONMENT_TYPE"
	}
	capture := func(reason, msg string) CaptureState {
		st.Mode, st.Reason, st.Message = CaptureModeCapture, reason, msg
		return st
	}
	switch {
	case in.Simulation:
		return capture(CaptureReasonSimulation, "Simulation mode is on. Mail is being held.")
	case st.EnvironmentSource == EnvironmentConstant:
		if st.Environment != EnvironmentProduction {
			return capture(CaptureReasonEnvironment, "This site is a "+st.Environment+" site ("+EnvironmentConstant+"). Mail is being held.")
		}
		return st
	case st.EnvironmentSource == "WP_ENVIRONMENT_TYPE" && containsString(WordPressNonProduction, wpEnv):
		return capture(CaptureReasonEnvironment, "This site is a "+wpEnv+" site (WP_ENVIRONMENT_TYPE). Mail is being held.")
	case len(st.Differences) > 0:
		return capture(CaptureReasonCopy, "This looks like a copy of "+in.Live.Address()+". Mail is being held.")
	}
	return st
}

func containsString(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// AllowListCovers reports whether an allow-list entry covers email: an
// entry is an address (matched whole, ignoring case) or a domain
// ("example.com", "@example.com"), which covers its addresses and those
// of its subdomains.
func AllowListCovers(list []string, email string) bool {
	email = strings.ToLower(strings.TrimSpace(email))
	at := strings.LastIndexByte(email, '@')
	if at < 0 {
		return false
	}
	domain := email[at+1:]
	for _, e := range list {
		e = strings.ToLower(strings.TrimSpace(e))
		switch {
		case e == "":
		case strings.Contains(strings.TrimPrefix(e, "@"), "@"):
			if e == email {
				return true
			}
		default:
			d := strings.TrimPrefix(strings.TrimPrefix(e, "@"), "*.")
			if domain == d || strings.HasSuffix(domain, "."+d) {
				return true
			}
		}
	}
	return false
}

// ValidAllowListEntry reports whether s is an email address or a domain
// name (optionally written "@example.com").
func ValidAllowListEntry(s string) bool {
	s = strings.TrimSpace(s)
	if strings.Contains(strings.TrimPrefix(s, "@"), "@") {
		return ValidEmail(s)
	}
	d := strings.TrimPrefix(strings.TrimPrefix(s, "@"), "*.")
	if len(d) == 0 || len(d) > 253 || !strings.Contains(d, ".") {
		return false
	}
	for _, label := range strings.Split(d, ".") {
		if label == "" || len(label) > 63 || strings.HasPrefix(label, "-") || strings.HasSuffix(label, "-") {
			return false
		}
		for _, c := range label {
			if !(c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c > 127) {
				return false
			}
		}
	}
	return true
}

// CaptureStore keeps the live fingerprint and releases captured logs.
type CaptureStore interface {
	// LiveFingerprint returns the recorded fingerprint, nil when none is.
	LiveFingerprint(ctx context.Context) (*Fingerprint, error)
	// RecordFingerprint records f as the live fingerprint. With replace
	// false it records f only when none is recorded (atomic across
	// processes: the first one wins) and returns the fingerprint in
	// force afterwards.
	RecordFingerprint(ctx context.Context, f Fingerprint, replace bool) (Fingerprint, error)
	// ReleaseCaptured moves the captured logs among ids (every captured
	// log when all) back to queued, due now, marked released so that the
	// guard lets them go, and returns how many it moved. A log is moved
	// once: a second or concurrent release of it finds it no longer
	// captured.
	ReleaseCaptured(ctx context.Context, ids []int64, all bool) (int, error)
	// CountCaptured counts the captured logs.
	CountCaptured(ctx context.Context) (int, error)
}
