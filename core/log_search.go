package core

import (
	"strings"
	"unicode/utf8"
)

// MinSearchFragment is the shortest part of an address's local part (the
// part before @) that a log search looks for inside addresses: a shorter
// term searches the subject only.
const MinSearchFragment = 3

// LogSearch is a log search term as the log search reads it
// (ParseLogSearch): the recipient addresses it matches and the subject
// words it matches. A log matches when a recipient (To, Cc or Bcc)
// matches Address, Domain, Prefix or Fragment, or when its subject
// matches Words: the parts set are alternatives.
type LogSearch struct {
	// Address is a whole address, lower-cased: the recipients equal to it.
	Address string
	// Domain is a domain, lower-cased: the recipients at it or at one of
	// its subdomains.
	Domain string
	// Prefix is the start of an address up to its @, lower-cased: the
	// recipients whose address starts with it.
	Prefix string
	// Fragment is a part of a local part, lower-cased, at least
	// MinSearchFragment characters: the recipients whose address has it
	// before the @ (at the start of the address or anywhere before @).
	Fragment string
	// Words is the term as the subject search reads it.
	Words string
}

// ByAddressPart reports whether s matches addresses by a domain, a
// prefix or a fragment (the address dictionary's searches).
func (s LogSearch) ByAddressPart() bool {
	return s.Domain != "" || s.Prefix != "" || s.Fragment != ""
}

// ParseLogSearch reads a log search term:
//   - a whole address (SearchIsAddress) matches that address exactly;
//   - @domain matches the recipients at that domain or its subdomains;
//   - local@ matches the recipients with that local part, at any domain;
//   - any other single word of at least MinSearchFragment characters
//     matches the recipients whose local part contains it (which includes
//     the addresses it starts), when it looks like a domain (a dot, no
//     space) also the recipients at that domain, and in any case the
//     subject's words as before;
//   - anything else (several words, a shorter word) searches the subject.
func ParseLogSearch(term string) LogSearch {
	term = strings.TrimSpace(term)
	if term == "" {
		return LogSearch{}
	}
	if SearchIsAddress(term) {
		return LogSearch{Address: strings.ToLower(term)}
	}
	if strings.ContainsAny(term, " \t\r\n,;<>") {
		return LogSearch{Words: term}
	}
	low := strings.ToLower(term)
	switch at := strings.Count(low, "@"); {
	case at == 1 && strings.HasPrefix(low, "@"):
		if d := strings.TrimSuffix(low[1:], "."); isDomain(d) {
			return LogSearch{Domain: d}
		}
		return LogSearch{Words: term}
	case at == 1 && strings.HasSuffix(low, "@"):
		return LogSearch{Prefix: low}
	case at > 0:
		return LogSearch{Words: term}
	}
	s := LogSearch{Words: term}
	if utf8.RuneCountInString(low) >= MinSearchFragment {
		s.Fragment = low
		if d := strings.TrimSuffix(low, "."); strings.Contains(d, ".") && isDomain(d) {
			s.Domain = d
		}
	}
	return s
}

// isDomain reports whether d reads as a domain name: labels of letters,
// digits and hyphens (or non-ASCII letters) separated by single dots.
func isDomain(d string) bool {
	if d == "" || len(d) > 253 {
		return false
	}
	for _, label := range strings.Split(d, ".") {
		if label == "" {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r > 127) {
				return false
			}
		}
	}
	return true
}
