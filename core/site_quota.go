package core

import (
	"context"
	"time"
)

// Over-quota choices of a multisite network (the over_quota setting).
const (
	OverQuotaWait = "wait" // a site's messages wait in the queue for the next period
	OverQuotaFail = "fail" // a site's messages fail
)

// QuotaPeriods names the day and the month of t (UTC) as the quota usage
// keys them: "2006-01-02" and "2006-01".
func QuotaPeriods(t time.Time) (day, month string) {
	t = t.UTC()
	return t.Format("2006-01-02"), t.Format("2006-01")
}

// QuotaReservation is the result of reserving one message of a site's
// quota: whether it fits, and the counts of the day and the month after.
type QuotaReservation struct {
	OK          bool
	DayUsed     int64
	MonthUsed   int64
	DayFull     bool // the day's limit refused it
	MonthFull   bool // the month's limit refused it
	DayPeriod   string
	MonthPeriod string
	ReservedAt  time.Time
}

// SiteQuotaStore counts each site's messages per day and month in the
// database, so that every replica sees one exact count.
type SiteQuotaStore interface {
	// ReserveSiteQuota counts one message of site in the day and the
	// month when both counts stay within their limits (0: no limit), in
	// one transaction; otherwise it counts nothing.
	ReserveSiteQuota(ctx context.Context, site int64, day, month string, dayLimit, monthLimit int64) (QuotaReservation, error)
	// ReleaseSiteQuota takes back one message counted for the periods.
	ReleaseSiteQuota(ctx context.Context, site int64, day, month string) error
	// MarkQuotaAlert records that the alert at percent (80 or 100) of
	// the period was sent; it reports whether this call was the first.
	MarkQuotaAlert(ctx context.Context, site int64, period string, percent int) (bool, error)
	// SiteQuotaUsage returns each site's count for period.
	SiteQuotaUsage(ctx context.Context, period string) (map[int64]int64, error)
}

// SiteLogCount is one site's volume and failures over a window.
type SiteLogCount struct {
	Total  int64
	Failed int64
}

// SiteAdmission is the quota check's answer for a site's message: sent
// now, or held until Until (the next period), or failed (the network
// chose over_quota "fail"), with the reason in words.
type SiteAdmission struct {
	Allowed bool
	Fail    bool
	Until   time.Time
	Reason  string
}
