package core

import (
	"slices"
	"testing"
)

func TestDecideCapture(t *testing.T) {
	live := &Fingerprint{SiteURL: "https://live.example", Home: "https://live.example/", DBName: "wp", DBHost: "localhost:3306", TablePrefix: "wp_"}
	same := Fingerprint{SiteURL: "https://LIVE.example/", Home: "https://live.example", DBName: "wp", DBHost: "127.0.0.1", TablePrefix: "wp_"}
	copied := same
	copied.SiteURL, copied.Home = "https://staging.live.example", "https://staging.live.example"
	otherDB := same
	otherDB.DBName = "wp_staging"
	cases := []struct {
		name        string
		in          CaptureInput
		mode        string
		reason      string
		message     string
		differences []string
	}{
		{name: "the live site sends", in: CaptureInput{Live: live, Current: same}, mode: CaptureModeSend},
		{name: "nothing recorded yet sends", in: CaptureInput{Current: copied}, mode: CaptureModeSend},
		{name: "a copy on another host captures", in: CaptureInput{Live: live, Current: copied}, mode: CaptureModeCapture, reason: CaptureReasonCopy,
			message: "This looks like a copy of https://live.example. Mail is being held.", differences: []string{"siteurl", "home"}},
		{name: "another database captures", in: CaptureInput{Live: live, Current: otherDB}, mode: CaptureModeCapture, reason: CaptureReasonCopy, differences: []string{"db_name"}},
		{name: "a field unknown to the live fingerprint is not compared", in: CaptureInput{Live: &Fingerprint{DBName: "mailsvc.db", DBHost: "localhost"}, Current: Fingerprint{SiteURL: "https://mail.example", Home: "https://mail.example", DBName: "mailsvc.db"}}, mode: CaptureModeSend},
		{name: "MAILSVC_ENVIRONMENT=production overrides a copy", in: CaptureInput{Live: live, Current: copied, Environment: "production"}, mode: CaptureModeSend, differences: []string{"siteurl", "home"}},
		{name: "MAILSVC_ENVIRONMENT=production overrides WordPress staging", in: CaptureInput{Live: live, Current: same, Environment: "production", WordPressEnvironment: "staging"}, mode: CaptureModeSend},
		{name: "MAILSVC_ENVIRONMENT=staging captures the live site", in: CaptureInput{Live: live, Current: same, Environment: "staging"}, mode: CaptureModeCapture, reason: CaptureReasonEnvironment},
		{name: "WordPress staging captures", in: CaptureInput{Live: live, Current: same, WordPressEnvironment: "staging"}, mode: CaptureModeCapture, reason: CaptureReasonEnvironment},
		{name: "WordPress local captures", in: CaptureInput{Live: live, Current: same, WordPressEnvironment: "local"}, mode: CaptureModeCapture, reason: CaptureReasonEnvironment},
		{name: "WordPress production sends", in: CaptureInput{Live: live, Current: same, WordPressEnvironment: "production"}, mode: CaptureModeSend},
		{name: "simulation captures even with production", in: CaptureInput{Live: live, Current: same, Environment: "production", Simulation: true}, mode: CaptureModeCapture, reason: CaptureReasonSimulation},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := DecideCapture(c.in)
			if s.Mode != c.mode || s.Reason != c.reason {
				t.Fatalf("mode %s reason %q, want %s %q", s.Mode, s.Reason, c.mode, c.reason)
			}
			if c.message != "" && s.Message != c.message {
				t.Errorf("message %q, want %q", s.Message, c.message)
			}
			if c.differences != nil && !slices.Equal(s.Differences, c.differences) {
				t.Errorf("differences %v, want %v", s.Differences, c.differences)
			}
		})
	}
}

func TestCaptureAllowList(t *testing.T) {
	list := []string{"qa@agency.example", "@team.example", "Staff.Example"}
	for email, want := range map[string]bool{
		"QA@agency.example":       true,
		"other@agency.example":    false,
		"a@team.example":          true,
		"a@dev.team.example":      true,
		"a@notteam.example":       false,
		"b@staff.example":         true,
		"customer@example.com":    false,
		"not an address":          false,
		"qa@agency.example.evil":  false,
		"a@team.example.evil.com": false,
	} {
		if got := AllowListCovers(list, email); got != want {
			t.Errorf("AllowListCovers(%q) = %v, want %v", email, got, want)
		}
	}
	st := CaptureState{Mode: CaptureModeCapture, Reason: CaptureReasonCopy, AllowList: list}
	if st.Holds([]Address{{Email: "a@team.example"}}) {
		t.Error("an allow-listed recipient is held")
	}
	if !st.Holds([]Address{{Email: "a@team.example"}, {Email: "c@customer.example"}}) {
		t.Error("a message with one recipient off the list is not held")
	}
	st.Reason = CaptureReasonSimulation
	if !st.Holds([]Address{{Email: "a@team.example"}}) {
		t.Error("simulation mode let an allow-listed recipient through")
	}
	for entry, want := range map[string]bool{"a@b.example": true, "@b.example": true, "b.example": true, "*.b.example": true, "localhost": false, "a@": false, "bad domain.example": false, "": false} {
		if got := ValidAllowListEntry(entry); got != want {
			t.Errorf("ValidAllowListEntry(%q) = %v, want %v", entry, got, want)
		}
	}
}
