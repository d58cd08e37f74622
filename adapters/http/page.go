package http

import (
	"net/http"
	"strconv"

	"github.com/mailsvc/mailsvc/core"
)

// Pagination bounds, as WordPress's REST API uses them.
const (
	defaultPerPage = 10
	maxPerPage     = 100
)

// page is a requested page of a list.
type page struct {
	Page    int
	PerPage int
}

// Offset returns the index of the page's first item.
func (p page) Offset() int { return (p.Page - 1) * p.PerPage }

// parsePage reads the page and per_page query parameters: page ≥ 1 and
// per_page 1..100; anything else is a validation error naming the parameter.
func parsePage(r *http.Request) (page, error) {
	p := page{Page: 1, PerPage: defaultPerPage}
	fields := map[string]string{}
	q := r.URL.Query()
	if v := q.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			fields["page"] = "Must be a whole number of at least 1."
		}
		p.Page = n
	}
	if v := q.Get("per_page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPerPage {
			fields["per_page"] = "Must be a whole number from 1 to 100."
		}
		p.PerPage = n
	}
	return p, core.Invalid(fields)
}

// pathID parses a positive integer path variable.
func pathID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 1 {
		return 0, core.Errorf(core.ENOTFOUND, "Invalid id %q.", s)
	}
	return id, nil
}
