package wordpress

import "testing"

// TestSiteKey checks the site key against the bridge's
// hash_hmac('sha256', 'mailsvc-site', wp_salt('auth')): the same vectors
// are in the bridge's ForwardingTest::test_site_key_for.
func TestSiteKey(t *testing.T) {
	for _, tc := range []struct{ salt, want string }{
		{`auth-key-a'\auth-salt-a`, "3e7f1d874b2e5042bfc721adb20ec1b4d8b3626ba65edba7ae125b4ce4d3118d"},
		{"x", "560c0f3fc12cda0a9b9bb656ecc9e4bb5bff21a7b40345c45cdb209bbd90b2a6"},
	} {
		if got := SiteKey(tc.salt); got != tc.want {
			t.Errorf("SiteKey(%q) = %s, want %s", tc.salt, got, tc.want)
		}
	}
	if SiteKey("x") == VerdictKey("x") {
		t.Error("the site key is the verdict key: a site key seen by the service would sign verdicts")
	}
}
