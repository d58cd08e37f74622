package http

import (
	"fmt"
	"math"
	"net/http"
	"strconv"

	"github.com/mailsvc/mailsvc/core"
)

// Pagination bounds, as WordPress's REST API uses them, and the last row
// a list can address.
const (
	defaultPerPage = 10
	maxPerPage     = 100
	// maxOffset bounds the index of a page's first row. The stores page
	// with 32-bit row counts (the log store's "no limit" is 2^31), so a
	// page past it can hold nothing, and (page-1)*per_page must not
	// overflow on its way there.
	maxOffset = math.MaxInt32
)

// Page is a requested page of a list.
type Page struct {
	Page    int
	PerPage int
}

// Offset returns the index of the page's first item.
func (p Page) Offset() int { return (p.Page - 1) * p.PerPage }

// ParsePage reads the page and per_page query parameters of a list whose
// page holds perPageDefault items unless per_page says otherwise: page 1
// up to the last page the store can address (its offset at most
// 2^31-1) and per_page 1..100. Anything else is a validation error naming
// the parameter. Every list route reads its page here.
func ParsePage(r *http.Request, perPageDefault int) (Page, error) {
	p := Page{Page: 1, PerPage: perPageDefault}
	fields := map[string]string{}
	q := r.URL.Query()
	if v := q.Get("per_page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxPerPage {
			fields["per_page"] = fmt.Sprintf("Must be a whole number from 1 to %d.", maxPerPage)
		} else {
			p.PerPage = n
		}
	}
	if v := q.Get("page"); v != "" {
		last := maxOffset/p.PerPage + 1
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > last {
			fields["page"] = fmt.Sprintf("Must be a whole number from 1 to %d.", last)
		} else {
			p.Page = n
		}
	}
	return p, core.Invalid(fields)
}

// parsePage is ParsePage with the default of the free lists (10).
func parsePage(r *http.Request) (Page, error) { return ParsePage(r, defaultPerPage) }

// pathID parses a positive integer path variable.
func pathID(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 1 {
		return 0, core.Errorf(core.ENOTFOUND, "Invalid id %q.", s)
	}
	return id, nil
}
