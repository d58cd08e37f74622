package protest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/test/fakes/dnsfake"
	"github.com/mailsvc/mailsvc/test/fakes/sesfake"
)

// report is the part of a domain check answer the test reads.
type report struct {
	Domain    string
	Verdict   string
	Providers []string
	SPF       struct {
		Verdict   string
		Lookups   int
		Problems  []string
		Fix       string
		Providers []struct {
			Provider string
			Found    bool
		}
	}
	DKIM struct {
		Verdict   string
		Providers []struct {
			Provider  string
			Verdict   string
			Note      string
			Selectors []struct {
				Selector string
				Found    bool
			}
		}
	}
	DMARC struct {
		Verdict, Policy, Fix string
		RUA                  []string
	}
	MX struct {
		Verdict string
		Records []struct {
			Preference int
			Host       string
		}
		Fix string
	}
}

func TestDomainCheckThroughTheBinary(t *testing.T) {
	fake := sesfake.New(sesRegion, sesKeyID, sesSecret)
	defer fake.Close()
	good := fake.AddIdentity("good.example", "SUCCESS")
	records := []string{
		// The providers' own SPF records.
		`amazonses.com. IN TXT "v=spf1 ip4:199.255.192.0/22 -all"`,
		`sendgrid.net. IN TXT "v=spf1 ip4:167.89.0.0/17 ~all"`,
		`_spf.google.com. IN TXT "v=spf1 include:_netblocks.google.com ~all"`,
		`_netblocks.google.com. IN TXT "v=spf1 ip4:35.190.247.0/24 ~all"`,
		// A good domain.
		`good.example. IN TXT "v=spf1 include:amazonses.com include:sendgrid.net include:_spf.google.com -all"`,
		`good.example. IN MX 10 mx1.good.example.`,
		`good.example. IN MX 20 mx2.good.example.`,
		`_dmarc.good.example. IN TXT "v=DMARC1; p=reject; adkim=s; rua=mailto:dmarc@good.example"`,
		`s1._domainkey.good.example. IN CNAME s1.domainkey.u1.wl.sendgrid.net.`,
		`google._domainkey.good.example. IN TXT "v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA"`,
		// Broken SPF: 12 lookups, no Google include; p=none DMARC.
		`broken.example. IN TXT "v=spf1 a mx ptr include:sendgrid.net include:amazonses.com include:l1.example include:l2.example ~all"`,
		`l1.example. IN TXT "v=spf1 a mx exists:x.l1.example -all"`,
		`l2.example. IN TXT "v=spf1 a mx -all"`,
		`broken.example. IN MX 10 mx.broken.example.`,
		`_dmarc.broken.example. IN TXT "v=DMARC1; p=none; rua=mailto:d@broken.example"`,
		// No DMARC, no MX.
		`bare.example. IN TXT "v=spf1 include:sendgrid.net include:amazonses.com include:_spf.google.com ~all"`,
	}
	for _, tok := range good.DkimTokens {
		records = append(records, fmt.Sprintf("%s._domainkey.good.example. IN CNAME %s.dkim.amazonses.com.", tok, tok))
	}
	dns := dnsfake.Start(t, records...)

	call, activate := proService(t, "MAILSVC_DNS_RESOLVER="+dns.Addr)
	if r := call("GET", "/pro/tools/domain-check?domain=good.example", ""); r.Status != 403 || r.Code() != "license_required" {
		t.Fatalf("without a licence: %d %s", r.Status, r.Body)
	}
	if n := len(dns.Queries()); n != 0 {
		t.Fatalf("a refused check made %d DNS queries", n)
	}
	activate("connections.ses.identity_management")
	createConnection(t, call, fmt.Sprintf(`{"name":"ses","driver":"ses","settings":{"region":%q,"custom_endpoint":%q,"access_key":%q,"secret":%q}}`,
		sesRegion, fake.URL, sesKeyID, sesSecret))
	createConnection(t, call, `{"name":"sg","driver":"sendgrid","settings":{"api_key":"SG.test-key"}}`)
	createConnection(t, call, `{"name":"gmail relay","driver":"smtp","settings":{"host":"smtp.gmail.com","port":587,"encryption":"tls","auth":true,"username":"u@good.example","password":"app-password"}}`)

	check := func(domain string) report {
		t.Helper()
		r := call("GET", "/pro/tools/domain-check?domain="+domain, "")
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", domain, r.Status, r.Body)
		}
		var rep report
		if err := json.Unmarshal(r.Body, &rep); err != nil {
			t.Fatal(err)
		}
		return rep
	}

	g := check("Good.Example")
	if g.Domain != "good.example" || strings.Join(g.Providers, ",") != "ses,sendgrid,google" {
		t.Errorf("good: domain %q providers %q", g.Domain, g.Providers)
	}
	if g.Verdict != "pass" || g.SPF.Verdict != "pass" || g.DKIM.Verdict != "pass" || g.DMARC.Verdict != "pass" || g.MX.Verdict != "pass" {
		t.Errorf("good: verdicts %s spf %s %q dkim %s %+v dmarc %s mx %s", g.Verdict, g.SPF.Verdict, g.SPF.Problems, g.DKIM.Verdict, g.DKIM.Providers, g.DMARC.Verdict, g.MX.Verdict)
	}
	if g.SPF.Lookups != 4 { // 3 includes + _netblocks
		t.Errorf("good: %d SPF lookups, want 4", g.SPF.Lookups)
	}
	for _, p := range g.DKIM.Providers {
		if p.Provider == "ses" && (len(p.Selectors) != 3 || p.Selectors[0].Selector != good.DkimTokens[0] || !p.Selectors[0].Found) {
			t.Errorf("good: SES DKIM checked %+v, want the identity's three tokens", p)
		}
	}
	if len(g.MX.Records) != 2 || g.MX.Records[0].Host != "mx1.good.example" || g.DMARC.Policy != "reject" {
		t.Errorf("good: mx %+v dmarc %+v", g.MX.Records, g.DMARC)
	}

	b := check("broken.example")
	if b.SPF.Verdict != "fail" || b.SPF.Lookups != 12 || !strings.Contains(b.SPF.Fix, "include:_spf.google.com") ||
		!strings.Contains(strings.Join(b.SPF.Problems, " "), "12 DNS lookups") {
		t.Errorf("broken: spf %+v", b.SPF)
	}
	if b.DMARC.Verdict != "warn" || b.DMARC.Policy != "none" || b.DMARC.Fix == "" {
		t.Errorf("broken: dmarc %+v", b.DMARC)
	}
	for _, p := range b.DKIM.Providers {
		if p.Provider == "ses" && (p.Verdict != "skip" || p.Note == "") {
			t.Errorf("broken: SES without a known identity should be skipped with a note: %+v", p)
		}
	}
	if b.DKIM.Verdict != "fail" || b.Verdict != "fail" {
		t.Errorf("broken: dkim %s overall %s", b.DKIM.Verdict, b.Verdict)
	}

	n := check("bare.example")
	if n.SPF.Verdict != "pass" || n.DMARC.Verdict != "fail" || !strings.Contains(n.DMARC.Fix, "_dmarc.bare.example") ||
		n.MX.Verdict != "fail" || len(n.MX.Records) != 0 || n.MX.Fix == "" {
		t.Errorf("bare: spf %s dmarc %+v mx %+v", n.SPF.Verdict, n.DMARC, n.MX)
	}

	for _, bad := range []string{"", "localhost", "bad_domain.example", "a..example", "http%3A%2F%2Fgood.example"} {
		r := call("GET", "/pro/tools/domain-check?domain="+bad, "")
		if r.Status != 422 || r.Code() != "validation_error" || !strings.Contains(string(r.Body), `"domain":`) {
			t.Errorf("domain %q: %d %s, want 422 on domain", bad, r.Status, r.Body)
		}
	}
}
