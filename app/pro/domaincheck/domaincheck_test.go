package domaincheck

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/mailsvc/mailsvc/core"
)

// zone is an in-memory Resolver: TXT, MX and CNAME records by name.
type zone struct {
	txt   map[string][]string
	mx    map[string][]MXRecord
	cname map[string]string
	fail  map[string]bool
}

var errServFail = errors.New("SERVFAIL")

func (z zone) TXT(_ context.Context, name string) ([]string, error) {
	if z.fail[name] {
		return nil, errServFail
	}
	return z.txt[name], nil
}

func (z zone) MX(_ context.Context, name string) ([]MXRecord, error) {
	if z.fail[name] {
		return nil, errServFail
	}
	return z.mx[name], nil
}

func (z zone) CNAME(_ context.Context, name string) (string, error) {
	if z.fail[name] {
		return "", errServFail
	}
	return z.cname[name], nil
}

// conns is an in-memory connection list.
type conns []*core.Connection

func (c conns) List(context.Context, int, int) ([]*core.Connection, int, error) {
	return c, len(c), nil
}

func TestParseSPF(t *testing.T) {
	tests := []struct {
		record  string
		want    []SPFTerm
		lookups int
		err     string
	}{
		{"v=spf1 include:_spf.google.com ip4:192.0.2.0/24 a mx/24 ~all", []SPFTerm{
			{"+", "include", "_spf.google.com"}, {"+", "ip4", "192.0.2.0/24"}, {"+", "a", ""}, {"+", "mx", "/24"}, {"~", "all", ""}}, 3, ""},
		{"V=SPF1 -ptr ?exists:%{i}.x.example redirect=_spf.example.com", []SPFTerm{
			{"-", "ptr", ""}, {"?", "exists", "%{i}.x.example"}, {"", "redirect", "_spf.example.com"}}, 3, ""},
		{"v=spf1 a:mail.example.com exp=explain.example.com -all", []SPFTerm{
			{"+", "a", "mail.example.com"}, {"", "exp", "explain.example.com"}, {"-", "all", ""}}, 1, ""},
		{"v=spf2 -all", nil, 0, "v=spf1"},
		{"v=spf1 includes:x.example -all", nil, 0, "unknown mechanism"},
		{"v=spf1 include: -all", nil, 0, "needs a domain"},
		{"v=spf1 redirect=a.example redirect=b.example", nil, 0, "twice"},
		{"v=spf1 all:x", nil, 0, "no value"},
	}
	for _, tt := range tests {
		t.Run(tt.record, func(t *testing.T) {
			rec, err := ParseSPF(tt.record)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(rec.Terms, tt.want) {
				t.Errorf("terms = %+v, want %+v", rec.Terms, tt.want)
			}
			n := 0
			for _, term := range rec.Terms {
				if term.Lookup() {
					n++
				}
			}
			if n != tt.lookups {
				t.Errorf("%d lookup terms, want %d", n, tt.lookups)
			}
		})
	}
}

func TestSPFLookupsCountedThroughIncludes(t *testing.T) {
	z := zone{txt: map[string][]string{
		"example.com":      {"v=spf1 include:a.example include:b.example mx -all"},
		"a.example":        {"v=spf1 include:c.example a ptr -all"},
		"b.example":        {"v=spf1 redirect=c.example"},
		"c.example":        {"v=spf1 ip4:192.0.2.1 exists:%{i}.e.example -all"},
		"loop.example":     {"v=spf1 include:loop2.example -all"},
		"loop2.example":    {"v=spf1 include:loop.example -all"},
		"many.example":     {"v=spf1 include:d1.example include:d2.example include:d3.example include:d4.example -all"},
		"d1.example":       {"v=spf1 a mx ptr -all"},
		"d2.example":       {"v=spf1 a mx ptr -all"},
		"d3.example":       {"v=spf1 a mx -all"},
		"d4.example":       {"v=spf1 a -all"},
		"dangling.example": {"v=spf1 include:gone.example -all"},
	}}
	tests := []struct {
		domain   string
		lookups  int
		verdict  string
		includes []string
		problem  string
	}{
		// include a, include b, mx (3) + a.example: include c, a, ptr (3) +
		// c.example: exists (1) + b: redirect c (1) + c again: exists (1) = 9
		{"example.com", 9, Pass, []string{"a.example", "c.example", "b.example"}, ""},
		{"loop.example", 2, Fail, []string{"loop2.example", "loop.example"}, "loops back"},
		// 4 includes + 3+3+2+1 = 13
		{"many.example", 13, Fail, []string{"d1.example", "d2.example", "d3.example", "d4.example"}, "13 DNS lookups"},
		{"dangling.example", 1, Fail, []string{"gone.example"}, "has no SPF record"},
	}
	for _, tt := range tests {
		t.Run(tt.domain, func(t *testing.T) {
			r := checkSPF(context.Background(), z, tt.domain, nil)
			if r.Lookups != tt.lookups || r.Verdict != tt.verdict {
				t.Errorf("lookups %d verdict %s, want %d %s (problems %q)", r.Lookups, r.Verdict, tt.lookups, tt.verdict, r.Problems)
			}
			if !reflect.DeepEqual(r.Includes, tt.includes) {
				t.Errorf("includes %q, want %q", r.Includes, tt.includes)
			}
			if tt.problem != "" && !strings.Contains(strings.Join(r.Problems, "\n"), tt.problem) {
				t.Errorf("problems %q lack %q", r.Problems, tt.problem)
			}
			if tt.verdict != Pass && r.Fix == "" {
				t.Error("a failing SPF has no fix")
			}
		})
	}
}

func TestSPFVerdicts(t *testing.T) {
	google, _ := LookupProvider(ProviderGoogle)
	ses, _ := LookupProvider(ProviderSES)
	mailgun, _ := LookupProvider(ProviderMailgun)
	z := zone{txt: map[string][]string{
		"_spf.google.com":       {"v=spf1 ip4:203.0.113.0/24 ~all"},
		"eu.mailgun.org":        {"v=spf1 ip4:198.51.100.0/24 ~all"},
		"good.example":          {"v=spf1 include:_spf.google.com ~all"},
		"eu.example":            {"v=spf1 include:eu.mailgun.org -all"},
		"plusall.example":       {"v=spf1 include:_spf.google.com +all"},
		"neutral.example":       {"v=spf1 include:_spf.google.com ?all"},
		"noall.example":         {"v=spf1 include:_spf.google.com"},
		"two.example":           {"v=spf1 -all", "v=spf1 ~all"},
		"none.example":          {"some-verification=1"},
		"bad.example":           {"v=spf1 inclde:_spf.google.com -all"},
		"missinggoogle.example": {"v=spf1 mx -all"},
	}, fail: map[string]bool{"down.example": true}}
	tests := []struct {
		domain    string
		providers []Provider
		verdict   string
		problem   string
		fix       string
	}{
		{"good.example", []Provider{google}, Pass, "", ""},
		{"eu.example", []Provider{mailgun}, Pass, "", ""},
		{"plusall.example", []Provider{google}, Fail, "+all", "~all"},
		{"neutral.example", []Provider{google}, Warn, "?all", "~all"},
		{"noall.example", []Provider{google}, Warn, "no all mechanism", "~all"},
		{"two.example", nil, Fail, "2 SPF records", "Merge"},
		{"none.example", []Provider{google, ses}, Fail, "No SPF record", "v=spf1 include:_spf.google.com include:amazonses.com ~all"},
		{"bad.example", nil, Fail, "unknown mechanism", "Correct"},
		{"missinggoogle.example", []Provider{google}, Fail, "include:_spf.google.com is missing", "Add include:_spf.google.com"},
		// SES's default MAIL FROM is its own domain: a missing include only warns.
		{"missinggoogle.example", []Provider{ses}, Warn, "include:amazonses.com is missing", "Add include:amazonses.com"},
		{"down.example", nil, Fail, "could not be read", "name servers"},
	}
	for _, tt := range tests {
		t.Run(tt.domain+"/"+providerSlugsJoined(tt.providers), func(t *testing.T) {
			r := checkSPF(context.Background(), z, tt.domain, tt.providers)
			if r.Verdict != tt.verdict {
				t.Errorf("verdict %s, want %s (problems %q)", r.Verdict, tt.verdict, r.Problems)
			}
			if tt.problem != "" && !strings.Contains(strings.Join(r.Problems, "\n"), tt.problem) {
				t.Errorf("problems %q lack %q", r.Problems, tt.problem)
			}
			if tt.fix != "" && !strings.Contains(r.Fix, tt.fix) {
				t.Errorf("fix %q lacks %q", r.Fix, tt.fix)
			}
			if tt.verdict == Pass && len(r.Problems) != 0 {
				t.Errorf("a pass with problems %q", r.Problems)
			}
		})
	}
}

func providerSlugsJoined(ps []Provider) string { return strings.Join(providerSlugs(ps), ",") }

func TestDKIMSelectorsPerProvider(t *testing.T) {
	z := zone{
		txt: map[string][]string{
			"google._domainkey.example.com":    {"v=DKIM1; k=rsa; p=MIIBIjANBg"},
			"k1._domainkey.example.com":        {"k=rsa; p=MIGfMA0"},
			"zmail._domainkey.example.com":     {"v=DKIM1; k=rsa; p="},
			"selector1._domainkey.example.com": {"not a key"},
		},
		cname: map[string]string{
			"s1._domainkey.example.com":   "s1.domainkey.u1.wl1.sendgrid.net",
			"tok1._domainkey.example.com": "tok1.dkim.amazonses.com",
			"tok2._domainkey.example.com": "tok2.dkim.amazonses.com",
			"tok3._domainkey.example.com": "elsewhere.example.net",
			"okt1._domainkey.example.com": "okt1.dkim.amazonses.com",
			"okt2._domainkey.example.com": "okt2.dkim.amazonses.com",
			"okt3._domainkey.example.com": "okt3.dkim.amazonses.com",
		},
	}
	tests := []struct {
		provider  string
		tokens    []string
		verdict   string
		selectors []string
		found     []bool
	}{
		{ProviderGoogle, nil, Pass, []string{"google"}, []bool{true}},
		{ProviderSendGrid, nil, Pass, []string{"s1", "s2"}, []bool{true, false}},
		{ProviderMailgun, nil, Pass, []string{"mx", "k1", "pic", "smtp", "krs", "mailo"}, []bool{false, true, false, false, false, false}},
		{ProviderMicrosoft, nil, Fail, []string{"selector1", "selector2"}, []bool{false, false}},
		{ProviderZoho, nil, Fail, []string{"zmail"}, []bool{false}}, // revoked key
		{ProviderPostmark, nil, Skip, nil, nil},
		{ProviderSES, nil, Skip, nil, nil},
		{ProviderSES, []string{"okt1", "okt2", "okt3"}, Pass, []string{"okt1", "okt2", "okt3"}, []bool{true, true, true}},
		{ProviderSES, []string{"tok1", "tok2", "tok3"}, Fail, []string{"tok1", "tok2", "tok3"}, []bool{true, true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.provider+strings.Join(tt.tokens, ","), func(t *testing.T) {
			p, _ := LookupProvider(tt.provider)
			s := &Service{Resolver: z}
			if tt.tokens != nil {
				s.SESTokens = func(_ context.Context, domain string) ([]string, bool) {
					return tt.tokens, domain == "example.com"
				}
			}
			r := s.checkDKIM(context.Background(), "example.com", []Provider{p})
			dp := r.Providers[0]
			if dp.Verdict != tt.verdict {
				t.Errorf("verdict %s, want %s (%+v)", dp.Verdict, tt.verdict, dp)
			}
			var sels []string
			var found []bool
			for _, s := range dp.Selectors {
				sels, found = append(sels, s.Selector), append(found, s.Found)
			}
			if !reflect.DeepEqual(sels, tt.selectors) || !reflect.DeepEqual(found, tt.found) {
				t.Errorf("selectors %q found %v, want %q %v", sels, found, tt.selectors, tt.found)
			}
			if tt.verdict == Skip && dp.Note == "" {
				t.Error("a skipped provider has no note")
			}
			if tt.verdict == Fail && r.Fix == "" {
				t.Error("a failing DKIM has no fix")
			}
		})
	}
}

func TestDMARCVerdicts(t *testing.T) {
	z := zone{txt: map[string][]string{
		"_dmarc.reject.example": {"v=DMARC1; p=reject; sp=quarantine; adkim=s; aspf=r; rua=mailto:a@reject.example,mailto:b@x.example"},
		"_dmarc.none.example":   {"v=DMARC1; p=none; rua=mailto:d@none.example"},
		"_dmarc.norua.example":  {"v=DMARC1; p=quarantine"},
		"_dmarc.pct.example":    {"v=DMARC1; p=reject; pct=20; rua=mailto:d@pct.example"},
		"_dmarc.nop.example":    {"v=DMARC1; rua=mailto:d@nop.example"},
		"_dmarc.two.example":    {"v=DMARC1; p=none", "v=DMARC1; p=reject"},
		"_dmarc.parent.example": {"v=DMARC1; p=reject; rua=mailto:d@parent.example"},
		"_dmarc.bogus.example":  {"v=DMARC1; p=block; rua=mailto:d@bogus.example"},
	}}
	tests := []struct {
		domain, verdict, policy, name string
		problem                       string
	}{
		{"reject.example", Pass, "reject", "_dmarc.reject.example", ""},
		{"none.example", Warn, "none", "_dmarc.none.example", "p=none"},
		{"norua.example", Warn, "quarantine", "_dmarc.norua.example", "No rua"},
		{"pct.example", Warn, "reject", "_dmarc.pct.example", "pct=20"},
		{"nop.example", Fail, "", "_dmarc.nop.example", "no policy"},
		{"two.example", Fail, "", "_dmarc.two.example", "More than one"},
		{"missing.example", Fail, "", "", "No DMARC record"},
		{"mail.parent.example", Pass, "reject", "_dmarc.parent.example", ""},
		{"bogus.example", Fail, "block", "_dmarc.bogus.example", "not a DMARC policy"},
	}
	for _, tt := range tests {
		t.Run(tt.domain, func(t *testing.T) {
			r := checkDMARC(context.Background(), z, tt.domain)
			if r.Verdict != tt.verdict || r.Policy != tt.policy || r.Name != tt.name {
				t.Errorf("verdict %s policy %q name %q, want %s %q %q (problems %q)", r.Verdict, r.Policy, r.Name, tt.verdict, tt.policy, tt.name, r.Problems)
			}
			if tt.problem != "" && !strings.Contains(strings.Join(r.Problems, "\n"), tt.problem) {
				t.Errorf("problems %q lack %q", r.Problems, tt.problem)
			}
			if tt.verdict != Pass && r.Fix == "" {
				t.Error("no fix")
			}
		})
	}
	r := checkDMARC(context.Background(), z, "reject.example")
	if r.SubdomainPolicy != "quarantine" || r.DKIMAlignment != "s" || r.SPFAlignment != "r" || r.Percent != 100 ||
		!reflect.DeepEqual(r.RUA, []string{"mailto:a@reject.example", "mailto:b@x.example"}) {
		t.Errorf("parsed %+v", r)
	}
}

func TestMXVerdicts(t *testing.T) {
	z := zone{mx: map[string][]MXRecord{
		"good.example": {{20, "mx2.good.example"}, {10, "mx1.good.example"}},
		"null.example": {{0, "."}},
	}, fail: map[string]bool{"down.example": true}}
	tests := []struct {
		domain, verdict string
		first           string
	}{
		{"good.example", Pass, "mx1.good.example"},
		{"null.example", Fail, "."},
		{"none.example", Fail, ""},
		{"down.example", Fail, ""},
	}
	for _, tt := range tests {
		r := checkMX(context.Background(), z, tt.domain)
		if r.Verdict != tt.verdict {
			t.Errorf("%s: verdict %s, want %s", tt.domain, r.Verdict, tt.verdict)
		}
		if tt.first != "" && (len(r.Records) == 0 || r.Records[0].Host != tt.first) {
			t.Errorf("%s: records %v, want %s first", tt.domain, r.Records, tt.first)
		}
		if tt.verdict == Fail && r.Fix == "" {
			t.Errorf("%s: no fix", tt.domain)
		}
	}
}

func TestCheckProvidersInUseAndInput(t *testing.T) {
	z := zone{
		txt: map[string][]string{
			"example.com":                   {"v=spf1 include:sendgrid.net include:_spf.google.com ~all"},
			"sendgrid.net":                  {"v=spf1 ip4:167.89.0.0/17 ~all"},
			"_spf.google.com":               {"v=spf1 ip4:203.0.113.0/24 ~all"},
			"_dmarc.example.com":            {"v=DMARC1; p=reject; rua=mailto:d@example.com"},
			"google._domainkey.example.com": {"v=DKIM1; p=MIIB"},
		},
		mx:    map[string][]MXRecord{"example.com": {{10, "mx.example.com"}}},
		cname: map[string]string{"s1._domainkey.example.com": "s1.domainkey.u1.wl.sendgrid.net"},
	}
	s := &Service{Resolver: z, Connections: conns{
		{ID: 1, Driver: "sendgrid", IsActive: true},
		{ID: 2, Driver: "smtp", IsActive: true, Settings: core.Settings{"host": "smtp.gmail.com"}},
		{ID: 3, Driver: "postmark", IsActive: false},
		{ID: 4, Driver: "smtp", IsActive: true, Settings: core.Settings{"host": "mail.example.com"}},
	}}
	r, err := s.Check(context.Background(), " Example.COM. ")
	if err != nil {
		t.Fatal(err)
	}
	if r.Domain != "example.com" || !reflect.DeepEqual(r.Providers, []string{"sendgrid", "google"}) {
		t.Errorf("domain %q providers %q", r.Domain, r.Providers)
	}
	if r.Verdict != Pass || r.SPF.Verdict != Pass || r.DKIM.Verdict != Pass || r.DMARC.Verdict != Pass || r.MX.Verdict != Pass {
		t.Errorf("verdicts %s (spf %s %q, dkim %s %q, dmarc %s, mx %s)", r.Verdict, r.SPF.Verdict, r.SPF.Problems, r.DKIM.Verdict, r.DKIM.Problems, r.DMARC.Verdict, r.MX.Verdict)
	}
	for _, bad := range []string{"", "localhost", "exa mple.com", "-x.example", "a..example", "example.123", strings.Repeat("a", 64) + ".example", "x_y.example", "http://example.com"} {
		_, err := s.Check(context.Background(), bad)
		if core.ErrorCode(err) != core.EINVALID || core.ErrorFields(err)["domain"] == "" {
			t.Errorf("Check(%q) err = %v, want a validation error on domain", bad, err)
		}
	}
}
