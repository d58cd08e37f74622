package core

import (
	"context"
	"time"
)

// JobRun is the record of a scheduled job: when it last started and
// finished, where, and how it ended.
type JobRun struct {
	Name       string     `json:"name"`
	Owner      string     `json:"owner"`
	LastRunAt  time.Time  `json:"last_run_at"`
	FinishedAt *time.Time `json:"finished_at"`
	LastError  string     `json:"last_error"`
}

// JobStore coordinates scheduled jobs across replicas sharing a database,
// so that each job runs once per interval in total.
type JobStore interface {
	// ClaimJobRun atomically starts a run of job name for owner when the
	// job has never run or its last run started at least interval ago,
	// and reports whether owner won; of concurrent claims at most one wins.
	ClaimJobRun(ctx context.Context, name, owner string, interval time.Duration) (bool, error)
	// FinishJobRun records the end of owner's run (errMsg "" for success).
	FinishJobRun(ctx context.Context, name, owner, errMsg string) error
	// FindJobRuns returns every job's record, by name.
	FindJobRuns(ctx context.Context) ([]JobRun, error)
}
