package report

import (
	"context"
	"fmt"
	"time"

	"github.com/mailsvc/mailsvc/core"
)

// JobName is the scheduler's job that sends the summary reports.
const JobName = "summary_report"

// Names of the records in the job store.
const (
	// armedRecord is claimed once, the first time the job runs: reports
	// go out only for periods that end after it, so that a new
	// installation does not mail a report of the time before it.
	armedRecord = JobName + ":armed"
	// periodPrefix starts the record claimed for each period sent.
	periodPrefix = JobName + ":"
	// forever is the interval of a record claimed once: it never becomes
	// eligible again.
	forever = 10 * 365 * 24 * time.Hour
)

// Every is the Job.Every of the summary report job: every minute while
// summary_report.frequency is not off. Each run does little unless a
// period has ended.
func (s *Service) Every(ctx context.Context) (time.Duration, bool, error) {
	st, err := s.setting(ctx)
	if err != nil {
		return 0, false, err
	}
	return time.Minute, st.Frequency != core.ReportOff, nil
}

// RunScheduled sends the report of the last whole period of the
// summary_report frequency, in the site's time zone, once across every
// replica: the period's record ("summary_report:weekly:2026-03-02") is
// claimed in the job store, and only the claimant queues the report. It
// does nothing while the frequency is off, before the period has ended,
// for a period that ended before the job first ran (a new installation),
// or while there is no recipient or connection (it tries again on the
// next run). A report that could not be queued is recorded as the
// period's error and not retried.
//
// It reports whether this call queued a report.
func (s *Service) RunScheduled(ctx context.Context) (bool, error) {
	st, err := s.setting(ctx)
	if err != nil {
		return false, err
	}
	if st.Frequency == core.ReportOff {
		return false, nil
	}
	armed, err := s.armedAt(ctx)
	if err != nil {
		return false, err
	}
	loc, err := s.location(ctx)
	if err != nil {
		return false, err
	}
	weekStart, err := s.weekStart(ctx)
	if err != nil {
		return false, err
	}
	p := Completed(st.Frequency, s.now(), loc, weekStart)
	if !p.To.After(armed) {
		return false, nil
	}
	to, connID, err := s.destination(ctx, st)
	if err != nil {
		return false, err
	}
	if len(to) == 0 || connID == 0 {
		return false, nil
	}
	name := periodPrefix + p.Key()
	won, err := s.Jobs.ClaimJobRun(ctx, name, s.owner(), forever)
	if err != nil || !won {
		return false, err
	}
	out, err := s.render(ctx, p, loc, st.Frequency)
	if err == nil {
		_, err = s.enqueue(ctx, out, to, connID, st.ConnectionID != 0)
	}
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if ferr := s.Jobs.FinishJobRun(fctx, name, s.owner(), msg); ferr != nil && err == nil {
		err = ferr
	}
	if err != nil {
		return false, fmt.Errorf("summary report %s: %w", p.Key(), err)
	}
	return true, nil
}

// armedAt returns when the job first ran, claiming that record on the
// first call.
func (s *Service) armedAt(ctx context.Context) (time.Time, error) {
	find := func() (time.Time, bool, error) {
		runs, err := s.Jobs.FindJobRuns(ctx)
		if err != nil {
			return time.Time{}, false, fmt.Errorf("read job records: %w", err)
		}
		for _, r := range runs {
			if r.Name == armedRecord {
				return r.LastRunAt, true, nil
			}
		}
		return time.Time{}, false, nil
	}
	if t, ok, err := find(); err != nil || ok {
		return t, err
	}
	if _, err := s.Jobs.ClaimJobRun(ctx, armedRecord, s.owner(), forever); err != nil {
		return time.Time{}, fmt.Errorf("arm the summary report: %w", err)
	}
	t, ok, err := find()
	if err == nil && !ok {
		err = fmt.Errorf("arm the summary report: the record %s was not kept", armedRecord)
	}
	return t, err
}

func (s *Service) owner() string {
	if s.Owner == "" {
		return "report"
	}
	return s.Owner
}

// RecordRetention is how long the record of a reported period is kept:
// 400 days, longer than any period stays the last whole one (a month),
// and long enough to look back over a year of reports.
const RecordRetention = 400 * 24 * time.Hour

// RecordPruner deletes job records by name prefix and age
// (store.JobService.PruneJobRuns).
type RecordPruner interface {
	PruneJobRuns(ctx context.Context, prefix string, before time.Time) (int, error)
}

// PruneRecords deletes the period records (summary_report:<frequency>:
// <date>) claimed more than RecordRetention ago; the armed record stays.
// It runs in the retention purge job. It returns how many were deleted;
// a job store that cannot prune is an error.
func (s *Service) PruneRecords(ctx context.Context) (int, error) {
	p, ok := s.Jobs.(RecordPruner)
	if !ok {
		return 0, fmt.Errorf("prune summary report records: the job store %T cannot prune", s.Jobs)
	}
	before := s.now().Add(-RecordRetention)
	total := 0
	for _, freq := range []string{core.ReportDaily, core.ReportWeekly, core.ReportMonthly} {
		n, err := p.PruneJobRuns(ctx, periodPrefix+freq+":", before)
		total += n
		if err != nil {
			return total, fmt.Errorf("prune summary report records: %w", err)
		}
	}
	return total, nil
}
