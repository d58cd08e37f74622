package domaincheck

import (
	"context"
	"fmt"
	"strings"
)

// DKIMReport is the DKIM section of a report.
type DKIMReport struct {
	Verdict   string         `json:"verdict"`
	Providers []DKIMProvider `json:"providers"`
	Problems  []string       `json:"problems"`
	Fix       string         `json:"fix"`
}

// DKIMProvider is the DKIM state of one provider in use.
type DKIMProvider struct {
	Provider string `json:"provider"`
	// Verdict is pass (a selector is published), fail (none is), or skip
	// (the provider's selectors are not known here; Note says why).
	Verdict   string         `json:"verdict"`
	Selectors []DKIMSelector `json:"selectors"`
	Note      string         `json:"note,omitempty"`
}

// DKIMSelector is what DNS holds for one selector.
type DKIMSelector struct {
	Selector string `json:"selector"`
	Name     string `json:"name"`
	Found    bool   `json:"found"`
	// CNAME is the target when the selector is delegated to the provider.
	CNAME string `json:"cname,omitempty"`
	// Record is the DKIM key record (v=DKIM1; k=...; p=...).
	Record string `json:"record,omitempty"`
	// Expected is the CNAME target the provider asked for, when known.
	Expected string `json:"expected,omitempty"`
	Problem  string `json:"problem,omitempty"`
}

// Skip is the verdict of a provider whose DKIM selectors are not known.
const Skip = "skip"

// sesDKIMHost is the zone of SES Easy DKIM targets.
const sesDKIMHost = "dkim.amazonses.com"

// checkDKIM looks up the selectors of each provider in use.
func (s *Service) checkDKIM(ctx context.Context, domain string, providers []Provider) *DKIMReport {
	r := &DKIMReport{Verdict: Pass, Providers: []DKIMProvider{}, Problems: []string{}}
	if len(providers) == 0 {
		r.Verdict = Warn
		r.Problems = append(r.Problems, "No active connection uses a provider whose DKIM selectors are known, so no selector was checked.")
		r.Fix = "Check with your mail provider which DKIM selector it signs with, and publish its record."
		return r
	}
	var fixes []string
	checked := 0
	for _, p := range providers {
		dp := DKIMProvider{Provider: p.Slug, Selectors: []DKIMSelector{}}
		selectors, expected := p.DKIMSelectors, map[string]string{}
		if p.Slug == ProviderSES && s.SESTokens != nil {
			if tokens, ok := s.SESTokens(ctx, domain); ok {
				selectors = tokens
				for _, t := range tokens {
					expected[t] = t + "." + sesDKIMHost
				}
			}
		}
		if len(selectors) == 0 {
			dp.Verdict = Skip
			dp.Note = p.DKIMNote
			if p.Slug == ProviderSES {
				dp.Note = "No SES connection knows this domain as an identity, so its Easy DKIM tokens are unknown. Verify the domain in SES (it returns the three CNAME records to publish)."
			}
			r.Providers = append(r.Providers, dp)
			continue
		}
		checked++
		found, all := 0, true
		for _, sel := range selectors {
			ds := lookupSelector(ctx, s.Resolver, domain, sel, expected[sel])
			if ds.Found {
				found++
			} else {
				all = false
			}
			dp.Selectors = append(dp.Selectors, ds)
		}
		switch {
		case p.Slug == ProviderSES && !all:
			// SES signs with each of its three keys: all must be there.
			dp.Verdict = Fail
			r.Problems = append(r.Problems, fmt.Sprintf("%s: %d of the %d Easy DKIM CNAME records are published.", p.Name, found, len(selectors)))
			fixes = append(fixes, fmt.Sprintf("Publish the CNAME records <token>._domainkey.%s → <token>.%s for each SES token.", domain, sesDKIMHost))
		case found == 0:
			dp.Verdict = Fail
			r.Problems = append(r.Problems, fmt.Sprintf("%s: no DKIM record at the selectors %s.", p.Name, strings.Join(selectors, ", ")))
			fixes = append(fixes, fmt.Sprintf("Set up domain authentication (DKIM) for %s in %s and publish the records it gives at %s._domainkey.%s.", domain, p.Name, selectors[0], domain))
		default:
			dp.Verdict = Pass
		}
		for _, ds := range dp.Selectors {
			if ds.Problem != "" && ds.Found {
				r.Problems = append(r.Problems, fmt.Sprintf("%s: %s", ds.Name, ds.Problem))
			}
		}
		r.Verdict = worse(r.Verdict, dp.Verdict)
		r.Providers = append(r.Providers, dp)
	}
	if checked == 0 {
		r.Verdict = Warn
		r.Problems = append(r.Problems, "The DKIM selectors of the providers in use are not known here, so none was checked.")
		fixes = append(fixes, "Find the selector in your provider's domain settings and check that its record is published.")
	}
	r.Fix = strings.Join(fixes, " ")
	return r
}

// lookupSelector reads <selector>._domainkey.<domain>: a CNAME to the
// provider, or a DKIM key TXT record.
func lookupSelector(ctx context.Context, res Resolver, domain, selector, expected string) DKIMSelector {
	ds := DKIMSelector{Selector: selector, Name: selector + "._domainkey." + domain, Expected: expected}
	cname, err := res.CNAME(ctx, ds.Name)
	if err != nil {
		ds.Problem = fmt.Sprintf("could not be read: %v", err)
		return ds
	}
	if cname != "" {
		ds.CNAME = cname
		if expected != "" && !strings.EqualFold(cname, expected) {
			ds.Problem = fmt.Sprintf("points to %s, not to %s", cname, expected)
			return ds
		}
		ds.Found = true
		if expected != "" {
			return ds
		}
	}
	txts, err := res.TXT(ctx, ds.Name)
	if err != nil {
		if !ds.Found {
			ds.Problem = fmt.Sprintf("could not be read: %v", err)
		}
		return ds
	}
	for _, t := range txts {
		tags := parseTags(t)
		if _, ok := tags["p"]; !ok {
			continue
		}
		ds.Record = t
		if v, ok := tags["v"]; ok && !strings.EqualFold(v, "DKIM1") {
			ds.Problem = "the record's version is not DKIM1"
			ds.Found = false
			return ds
		}
		if tags["p"] == "" {
			ds.Problem = "the key is revoked (empty p=)"
			ds.Found = false
			return ds
		}
		ds.Found = true
		return ds
	}
	return ds
}

// parseTags parses a tag=value; list (DKIM, DMARC) with lower-cased names
// and trimmed values.
func parseTags(s string) map[string]string {
	out := map[string]string{}
	for _, part := range strings.Split(s, ";") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		out[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
	return out
}
