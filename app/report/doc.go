// Package report builds and sends the periodic summary email (the
// summary_report setting, docs/reports.md): totals, success rate, volume
// and failures per connection, the most frequent failure reasons, the
// oldest queued message, connection health, the alerts raised and the
// change from the previous period, in the site's time zone, as HTML with
// a plain-text part.
//
// The scheduler runs Service.RunScheduled on every replica; the report of
// each period is claimed once in the store's job records (the name
// "summary_report:<frequency>:<local start date>"), so of any number of
// replicas and runs exactly one queues it.
package report
