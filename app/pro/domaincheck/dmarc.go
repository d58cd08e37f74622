package domaincheck

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// DMARCReport is the DMARC section of a report.
type DMARCReport struct {
	Verdict string `json:"verdict"`
	// Name is where the record was found (_dmarc.<domain>, or the parent
	// domain's when the domain has none).
	Name   string `json:"name"`
	Record string `json:"record"`
	// Policy is p (none, quarantine or reject); SubdomainPolicy is sp.
	Policy          string `json:"policy"`
	SubdomainPolicy string `json:"subdomain_policy"`
	// DKIMAlignment and SPFAlignment are adkim and aspf: r (relaxed, the
	// default) or s (strict).
	DKIMAlignment string   `json:"dkim_alignment"`
	SPFAlignment  string   `json:"spf_alignment"`
	Percent       int      `json:"pct"`
	RUA           []string `json:"rua"`
	Problems      []string `json:"problems"`
	Fix           string   `json:"fix"`
}

// checkDMARC reads and judges the DMARC record of domain (or of its
// parent, which covers subdomains without their own).
func checkDMARC(ctx context.Context, resolver Resolver, domain string) *DMARCReport {
	r := &DMARCReport{RUA: []string{}, Problems: []string{}}
	suggest := fmt.Sprintf("Publish a TXT record at _dmarc.%s: v=DMARC1; p=none; rua=mailto:dmarc-reports@%s — then, once the reports show your mail passing, move to p=quarantine and p=reject.", domain, domain)
	names := []string{"_dmarc." + domain}
	if labels := strings.Split(domain, "."); len(labels) > 2 {
		names = append(names, "_dmarc."+strings.Join(labels[len(labels)-2:], "."))
	}
	var recs []string
	for _, n := range names {
		txts, err := resolver.TXT(ctx, n)
		if err != nil {
			r.Verdict = Fail
			r.Problems = append(r.Problems, fmt.Sprintf("The TXT records of %s could not be read: %v.", n, err))
			r.Fix = "Check that the domain's name servers answer, then run the check again."
			return r
		}
		for _, t := range txts {
			if strings.HasPrefix(strings.ToUpper(strings.TrimSpace(t)), "V=DMARC1") {
				recs = append(recs, t)
			}
		}
		if len(recs) > 0 {
			r.Name = n
			break
		}
	}
	switch {
	case len(recs) == 0:
		r.Verdict = Fail
		r.Problems = append(r.Problems, "No DMARC record: receivers apply no policy to mail that fails SPF and DKIM, and large mailbox providers expect one from bulk senders.")
		r.Fix = suggest
		return r
	case len(recs) > 1:
		r.Verdict = Fail
		r.Record = recs[0]
		r.Problems = append(r.Problems, "More than one DMARC record: receivers ignore them all.")
		r.Fix = "Keep exactly one TXT record starting with v=DMARC1 at " + r.Name + "."
		return r
	}
	r.Record = recs[0]
	tags := parseTags(r.Record)
	r.Policy = strings.ToLower(tags["p"])
	r.SubdomainPolicy = strings.ToLower(tags["sp"])
	r.DKIMAlignment, r.SPFAlignment = alignment(tags["adkim"]), alignment(tags["aspf"])
	r.Percent = 100
	if v, ok := tags["pct"]; ok {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 && n <= 100 {
			r.Percent = n
		}
	}
	for _, u := range strings.Split(tags["rua"], ",") {
		if u = strings.TrimSpace(u); u != "" {
			r.RUA = append(r.RUA, u)
		}
	}
	r.Verdict = Pass
	var fixes []string
	switch r.Policy {
	case "reject", "quarantine":
	case "none":
		r.Verdict = Warn
		r.Problems = append(r.Problems, "p=none only monitors: mail that fails DMARC is still delivered.")
		fixes = append(fixes, "Once the aggregate reports show your own mail passing, change p=none to p=quarantine, then p=reject.")
	case "":
		r.Verdict = Fail
		r.Problems = append(r.Problems, "The record has no policy (p=), so receivers ignore it.")
		fixes = append(fixes, "Add p=none (monitoring), p=quarantine or p=reject right after v=DMARC1.")
	default:
		r.Verdict = Fail
		r.Problems = append(r.Problems, fmt.Sprintf("p=%s is not a DMARC policy.", r.Policy))
		fixes = append(fixes, "Set p to none, quarantine or reject.")
	}
	if r.SubdomainPolicy != "" && r.SubdomainPolicy != "none" && r.SubdomainPolicy != "quarantine" && r.SubdomainPolicy != "reject" {
		r.Verdict = worse(r.Verdict, Warn)
		r.Problems = append(r.Problems, fmt.Sprintf("sp=%s is not a DMARC policy.", r.SubdomainPolicy))
		fixes = append(fixes, "Set sp to none, quarantine or reject, or remove it.")
	}
	if r.Percent < 100 && r.Policy != "none" {
		r.Verdict = worse(r.Verdict, Warn)
		r.Problems = append(r.Problems, fmt.Sprintf("pct=%d applies the policy to only part of the failing mail.", r.Percent))
		fixes = append(fixes, "Raise pct to 100 (or remove it) once you are confident.")
	}
	if len(r.RUA) == 0 {
		r.Verdict = worse(r.Verdict, Warn)
		r.Problems = append(r.Problems, "No rua: you receive no aggregate reports, so failures go unnoticed.")
		fixes = append(fixes, fmt.Sprintf("Add rua=mailto:dmarc-reports@%s (or a DMARC report service's address).", domain))
	}
	r.Fix = strings.Join(fixes, " ")
	return r
}

// alignment returns a DMARC alignment mode, r when unset.
func alignment(v string) string {
	if strings.EqualFold(v, "s") {
		return "s"
	}
	return "r"
}
