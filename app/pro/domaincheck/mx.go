package domaincheck

import (
	"context"
	"fmt"
	"sort"
)

// MXReport is the MX section of a report.
type MXReport struct {
	Verdict  string     `json:"verdict"`
	Records  []MXRecord `json:"records"`
	Problems []string   `json:"problems"`
	Fix      string     `json:"fix"`
}

// checkMX reads and judges the MX records of domain.
func checkMX(ctx context.Context, resolver Resolver, domain string) *MXReport {
	r := &MXReport{Records: []MXRecord{}, Problems: []string{}}
	mxs, err := resolver.MX(ctx, domain)
	if err != nil {
		r.Verdict = Fail
		r.Problems = append(r.Problems, fmt.Sprintf("The MX records of %s could not be read: %v.", domain, err))
		r.Fix = "Check that the domain's name servers answer, then run the check again."
		return r
	}
	sort.SliceStable(mxs, func(i, j int) bool { return mxs[i].Preference < mxs[j].Preference })
	r.Records = append(r.Records, mxs...)
	switch {
	case len(mxs) == 0:
		r.Verdict = Fail
		r.Problems = append(r.Problems, "No MX record: replies and bounces to addresses at this domain cannot be delivered, and some receivers refuse mail from a domain that cannot receive any.")
		r.Fix = fmt.Sprintf("Publish an MX record at %s pointing to the server that receives its mail (your mailbox provider gives the host names).", domain)
	case len(mxs) == 1 && (mxs[0].Host == "" || mxs[0].Host == "."):
		r.Verdict = Fail
		r.Problems = append(r.Problems, "A null MX (0 .) says this domain receives no mail, so replies and bounces are lost and receivers may refuse its mail.")
		r.Fix = "Replace the null MX with the MX records of the server that receives the domain's mail."
	default:
		r.Verdict = Pass
	}
	return r
}
