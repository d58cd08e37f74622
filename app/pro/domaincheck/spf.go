package domaincheck

import (
	"context"
	"fmt"
	"strings"
)

// SPFLookupLimit is RFC 7208's limit on the DNS lookups one SPF check may
// cause (include, a, mx, ptr, exists and redirect, nested ones counted).
const SPFLookupLimit = 10

// maxSPFWalk bounds the lookups the check itself follows, past the limit.
const maxSPFWalk = 30

// SPFTerm is one directive or modifier of an SPF record.
type SPFTerm struct {
	// Qualifier is +, -, ~ or ? for a mechanism; "" for a modifier.
	Qualifier string `json:"qualifier,omitempty"`
	// Name is the mechanism (all, include, a, mx, ptr, ip4, ip6, exists)
	// or the modifier (redirect, exp, or an unknown one).
	Name  string `json:"name"`
	Value string `json:"value,omitempty"`
}

// Lookup reports whether the term causes a DNS lookup that counts
// against the limit.
func (t SPFTerm) Lookup() bool {
	switch t.Name {
	case "include", "a", "mx", "ptr", "exists", "redirect":
		return true
	}
	return false
}

// SPFRecord is a parsed SPF record.
type SPFRecord struct {
	Terms []SPFTerm
}

// ParseSPF parses an SPF record ("v=spf1 ..."). A record that does not
// start with v=spf1, an unknown mechanism, a mechanism missing its
// required domain, or a modifier given twice is an error.
func ParseSPF(record string) (*SPFRecord, error) {
	fields := strings.Fields(record)
	if len(fields) == 0 || !strings.EqualFold(fields[0], "v=spf1") {
		return nil, fmt.Errorf("the record does not start with v=spf1")
	}
	rec := &SPFRecord{}
	mods := map[string]bool{}
	for _, f := range fields[1:] {
		if name, value, ok := strings.Cut(f, "="); ok && isModifierName(name) {
			name = strings.ToLower(name)
			if (name == "redirect" || name == "exp") && mods[name] {
				return nil, fmt.Errorf("the modifier %s appears twice", name)
			}
			if (name == "redirect" || name == "exp") && value == "" {
				return nil, fmt.Errorf("the modifier %s has no domain", name)
			}
			mods[name] = true
			rec.Terms = append(rec.Terms, SPFTerm{Name: name, Value: value})
			continue
		}
		q := "+"
		if strings.ContainsAny(f[:1], "+-~?") {
			q, f = f[:1], f[1:]
		}
		name, value, hasValue := strings.Cut(f, ":")
		if !hasValue {
			if i := strings.IndexByte(f, '/'); i >= 0 { // a/24, mx/24
				name, value = f[:i], f[i:]
			}
		}
		name = strings.ToLower(name)
		switch name {
		case "all":
			if value != "" || hasValue {
				return nil, fmt.Errorf("all takes no value: %q", f)
			}
		case "include", "exists":
			if value == "" {
				return nil, fmt.Errorf("%s needs a domain: %q", name, f)
			}
		case "ip4", "ip6":
			if value == "" {
				return nil, fmt.Errorf("%s needs an address: %q", name, f)
			}
		case "a", "mx", "ptr":
		default:
			return nil, fmt.Errorf("unknown mechanism %q", f)
		}
		rec.Terms = append(rec.Terms, SPFTerm{Qualifier: q, Name: name, Value: value})
	}
	return rec, nil
}

func isModifierName(name string) bool {
	if name == "" {
		return false
	}
	c := name[0]
	if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// All returns the qualifier of the all mechanism, or "" when there is none.
func (r *SPFRecord) All() string {
	for _, t := range r.Terms {
		if t.Name == "all" {
			return t.Qualifier
		}
	}
	return ""
}

// Redirect returns the redirect modifier's domain, or "".
func (r *SPFRecord) Redirect() string {
	for _, t := range r.Terms {
		if t.Name == "redirect" {
			return t.Value
		}
	}
	return ""
}

// SPFReport is the SPF section of a report.
type SPFReport struct {
	Verdict string `json:"verdict"`
	Record  string `json:"record"`
	// Lookups counts the DNS lookups the record causes, nested ones
	// included (counting stops a little past the limit).
	Lookups int `json:"lookups"`
	Limit   int `json:"limit"`
	// Includes are every domain included, nested ones too, in order.
	Includes []string `json:"includes"`
	// Providers says, per provider in use, whether its include is there.
	Providers []SPFProvider `json:"providers"`
	Problems  []string      `json:"problems"`
	Fix       string        `json:"fix"`
}

// SPFProvider is whether a provider in use is authorised by the SPF
// record.
type SPFProvider struct {
	Provider string `json:"provider"`
	Include  string `json:"include"`
	Found    bool   `json:"found"`
}

// spfFinding is one problem with its verdict and fix.
type spfFinding struct {
	verdict, problem, fix string
}

// spfWalk counts lookups and collects includes through nested records.
type spfWalk struct {
	ctx      context.Context
	resolver Resolver
	lookups  int
	includes []string
	visited  map[string]bool // the records on the current include path
	findings []spfFinding
}

// findSPF returns the SPF records among a name's TXT records.
func findSPF(txts []string) []string {
	var out []string
	for _, t := range txts {
		if f := strings.Fields(t); len(f) > 0 && strings.EqualFold(f[0], "v=spf1") {
			out = append(out, t)
		}
	}
	return out
}

// walk counts the lookups of rec and follows
// its includes and redirect.
func (w *spfWalk) walk(rec *SPFRecord, depth int) {
	for _, t := range rec.Terms {
		if !t.Lookup() {
			continue
		}
		w.lookups++
		if t.Name != "include" && t.Name != "redirect" {
			continue
		}
		target := strings.ToLower(strings.TrimSuffix(t.Value, "."))
		if t.Name == "include" {
			w.includes = append(w.includes, target)
		}
		if strings.Contains(target, "%") {
			continue // a macro: expanded per message, not followed here
		}
		if w.visited[target] || depth >= 10 || w.lookups > maxSPFWalk {
			if w.visited[target] {
				w.findings = append(w.findings, spfFinding{Fail, fmt.Sprintf("%s:%s loops back to a record already included.", t.Name, target),
					"Remove the include that refers back to an including record."})
			}
			continue
		}
		w.visited[target] = true
		w.follow(t, target, depth)
		delete(w.visited, target)
	}
}

// follow reads the SPF record of an include or redirect target and walks
// it.
func (w *spfWalk) follow(t SPFTerm, target string, depth int) {
	txts, err := w.resolver.TXT(w.ctx, target)
	if err != nil {
		w.findings = append(w.findings, spfFinding{Warn, fmt.Sprintf("The SPF record of %s (%s) could not be read: %v.", target, t.Name, err), ""})
		return
	}
	recs := findSPF(txts)
	if len(recs) != 1 {
		what := "has no SPF record"
		if len(recs) > 1 {
			what = "has more than one SPF record"
		}
		w.findings = append(w.findings, spfFinding{Fail, fmt.Sprintf("%s:%s %s, which makes SPF fail (permerror).", t.Name, target, what),
			fmt.Sprintf("Remove %s:%s or correct the domain name.", t.Name, target)})
		return
	}
	nested, err := ParseSPF(recs[0])
	if err != nil {
		w.findings = append(w.findings, spfFinding{Fail, fmt.Sprintf("The SPF record of %s is invalid: %v.", target, err),
			fmt.Sprintf("Remove %s:%s or ask its owner to correct it.", t.Name, target)})
		return
	}
	w.walk(nested, depth+1)
}

// checkSPF reads and judges the SPF record of domain.
func checkSPF(ctx context.Context, resolver Resolver, domain string, providers []Provider) *SPFReport {
	r := &SPFReport{Limit: SPFLookupLimit, Includes: []string{}, Providers: []SPFProvider{}, Problems: []string{}}
	txts, err := resolver.TXT(ctx, domain)
	if err != nil {
		r.Verdict = Fail
		r.Problems = append(r.Problems, fmt.Sprintf("The TXT records of %s could not be read: %v.", domain, err))
		r.Fix = "Check that the domain's name servers answer, then run the check again."
		return r
	}
	recs := findSPF(txts)
	advice := spfAdvice(providers)
	switch {
	case len(recs) == 0:
		r.Verdict = Fail
		r.Problems = append(r.Problems, "No SPF record: receivers cannot tell which servers may send as this domain.")
		r.Fix = fmt.Sprintf("Publish one TXT record at %s: %s", domain, advice)
		return r
	case len(recs) > 1:
		r.Verdict = Fail
		r.Record = recs[0]
		r.Problems = append(r.Problems, fmt.Sprintf("%d SPF records: SPF fails (permerror) when a domain has more than one.", len(recs)))
		r.Fix = "Merge them into one TXT record starting with v=spf1, e.g. " + advice
		return r
	}
	r.Record = recs[0]
	rec, err := ParseSPF(recs[0])
	if err != nil {
		r.Verdict = Fail
		r.Problems = append(r.Problems, fmt.Sprintf("The SPF record is invalid: %v.", err))
		r.Fix = "Correct the record, e.g. " + advice
		return r
	}
	w := &spfWalk{ctx: ctx, resolver: resolver, visited: map[string]bool{domain: true}}
	w.walk(rec, 0)
	r.Lookups, r.Includes = w.lookups, append(r.Includes, w.includes...)
	findings := w.findings
	if r.Lookups > SPFLookupLimit {
		findings = append(findings, spfFinding{Fail,
			fmt.Sprintf("The record needs %d DNS lookups; SPF allows %d, so receivers treat it as an error (permerror).", r.Lookups, SPFLookupLimit),
			"Remove includes of services that no longer send for the domain, and replace a, mx and ptr with ip4/ip6 ranges, until 10 lookups or fewer remain."})
	}
	included := map[string]bool{}
	for _, inc := range r.Includes {
		included[inc] = true
	}
	for _, p := range providers {
		sp := SPFProvider{Provider: p.Slug, Include: p.SPFIncludes[0]}
		for _, inc := range p.SPFIncludes {
			if included[inc] {
				sp.Found, sp.Include = true, inc
			}
		}
		r.Providers = append(r.Providers, sp)
		if !sp.Found {
			v := Fail
			if p.SPFOptional {
				v = Warn
			}
			findings = append(findings, spfFinding{v,
				fmt.Sprintf("%s is in use but include:%s is missing.", p.Name, p.SPFIncludes[0]),
				fmt.Sprintf("Add include:%s before the all mechanism.", p.SPFIncludes[0])})
		}
	}
	switch q := rec.All(); {
	case q == "+":
		findings = append(findings, spfFinding{Fail, "+all lets any server on the internet send as this domain.", "Replace +all with ~all (soft fail) or -all (fail)."})
	case q == "?":
		findings = append(findings, spfFinding{Warn, "?all is neutral: mail from other servers is not marked.", "Replace ?all with ~all or -all."})
	case q == "" && rec.Redirect() == "":
		findings = append(findings, spfFinding{Warn, "The record has no all mechanism, so it ends neutral for other servers.", "End the record with ~all or -all."})
	}
	r.Verdict = Pass
	var fixes []string
	for _, f := range findings {
		r.Verdict = worse(r.Verdict, f.verdict)
		r.Problems = append(r.Problems, f.problem)
		if f.fix != "" {
			fixes = append(fixes, f.fix)
		}
	}
	r.Fix = strings.Join(fixes, " ")
	return r
}

// spfAdvice returns an SPF record authorising the providers in use.
func spfAdvice(providers []Provider) string {
	parts := []string{"v=spf1"}
	for _, p := range providers {
		parts = append(parts, "include:"+p.SPFIncludes[0])
	}
	if len(providers) == 0 {
		parts = append(parts, "mx")
	}
	return strings.Join(append(parts, "~all"), " ")
}
