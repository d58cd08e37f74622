package network

import (
	"context"
	"fmt"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// AdmitSite counts one message of a site against its quota (the network
// default or its own) before it is sent. Within the quota it is allowed;
// past it, it waits for the next UTC day or month, or fails when the
// network chose over_quota "fail". Reaching 80 % and 100 % of a period
// raises a site_quota alert to the network's channels, once per period
// whichever replica counts it.
func (s *Service) AdmitSite(ctx context.Context, site int64) (core.SiteAdmission, error) {
	if site <= 0 {
		site = core.MainSiteID
	}
	net, own, err := s.settingsFor(ctx, site)
	if err != nil {
		return core.SiteAdmission{}, err
	}
	dayLimit, monthLimit := limits(net, own)
	now := s.now()
	day, month := core.QuotaPeriods(now)
	r, err := s.Quotas.ReserveSiteQuota(ctx, site, day, month, dayLimit, monthLimit)
	if err != nil {
		return core.SiteAdmission{}, err
	}
	s.alertThresholds(ctx, site, day, r.DayUsed, dayLimit, "daily", r.DayFull)
	s.alertThresholds(ctx, site, month, r.MonthUsed, monthLimit, "monthly", r.MonthFull)
	if r.OK {
		return core.SiteAdmission{Allowed: true}, nil
	}
	a := core.SiteAdmission{Fail: net.OverQuota == core.OverQuotaFail}
	if r.DayFull {
		a.Until = time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
		a.Reason = fmt.Sprintf("site %d reached its daily quota of %d messages", site, dayLimit)
	} else {
		a.Until = time.Date(now.Year(), now.Month()+1, 1, 0, 0, 0, 0, time.UTC)
		a.Reason = fmt.Sprintf("site %d reached its monthly quota of %d messages", site, monthLimit)
	}
	return a, nil
}

// ReleaseSite gives back the place AdmitSite counted for a message that
// was not tried after all (its connection was paused).
func (s *Service) ReleaseSite(ctx context.Context, site int64) {
	if site <= 0 {
		site = core.MainSiteID
	}
	day, month := core.QuotaPeriods(s.now())
	if err := s.Quotas.ReleaseSiteQuota(ctx, site, day, month); err != nil {
		s.logger().Warn("network: cannot release a quota place", "site", site, "error", err.Error())
	}
}

// alertThresholds raises the 80 % and 100 % alerts of a period once.
func (s *Service) alertThresholds(ctx context.Context, site int64, period string, used, limit int64, kind string, refused bool) {
	if limit <= 0 || s.Alerts == nil {
		return
	}
	for _, pct := range []int{80, 100} {
		reached := used*100 >= int64(pct)*limit || (pct == 100 && refused)
		if !reached {
			continue
		}
		first, err := s.Quotas.MarkQuotaAlert(ctx, site, period, pct)
		if err != nil {
			s.logger().Warn("network: cannot record a quota alert", "site", site, "error", err.Error())
			continue
		}
		if !first {
			continue
		}
		s.Alerts.Raise(ctx, core.Alert{
			Event: core.EventSiteQuota,
			Title: fmt.Sprintf("Site %d used %d%% of its %s quota", site, pct, kind),
			Message: fmt.Sprintf("Site %d of %s has sent %d of its %d messages for %s. Past the quota its messages %s.",
				site, s.networkName(), used, limit, period, map[bool]string{true: "fail", false: "wait in the queue for the next period"}[s.failsOverQuota(ctx)]),
			Site: fmt.Sprintf("%d", site),
			At:   s.now(),
		})
	}
}

func (s *Service) networkName() string {
	if s.NetworkName != "" {
		return s.NetworkName
	}
	return "the network"
}

func (s *Service) failsOverQuota(ctx context.Context) bool {
	net, err := s.NetworkSettings(ctx)
	return err == nil && net.OverQuota == core.OverQuotaFail
}
