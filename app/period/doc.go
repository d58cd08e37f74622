// Package period holds the time ranges the statistics routes share: the
// half-open Period shown in the site's time zone, calendar days up to
// today, the roll-ups' 15-minute bucket alignment, the site's zone, and
// one reader of a from/to range (Rules.Resolve) with the bounds and the
// validation messages each caller chooses. The dashboard (app/dashboard),
// the summary report (app/report) and Pro analytics (app/pro/analytics)
// read their ranges with it; it imports only core and the standard
// library, so free and Pro code may both use it.
package period
