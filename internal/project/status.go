package project

import (
	"context"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/idle"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/internal/statusview"
	"github.com/awr-dev/awr/internal/workqueue"
)

// StatusResult is `awr status` (internal/statusview assembles it).
type StatusResult = statusview.Result

// ProjectionStatus is one projection's version and freshness.
type ProjectionStatus = statusview.ProjectionStatus

// LastReindex is what the last index of the project's sources changed,
// source by source (internal/intake reads it from the log).
type LastReindex = intake.LastReindex

// The work queues of status (package workqueue).
type (
	// Queues are the work items by what they wait for: each list holds
	// the first commands.DefaultPage of its queue, in ready's order
	// (priority, then key), and its *_total counts the whole queue.
	Queues = workqueue.Queues
	// QueueItem is one work item in a queue; Holder is set for claimed
	// work.
	QueueItem = workqueue.QueueItem
	// Holder is the session holding a live claim on an item.
	Holder = workqueue.Holder
)

// ReasonAwaitingPerson is the reason added to projections' own
// (projections.Readiness) for work nobody holds that waits on a person.
const ReasonAwaitingPerson = workqueue.ReasonAwaitingPerson

// SessionCounts counts sessions by state: Stale counts the active
// sessions that are stale (see StaleSession), Lapsed those whose claim
// lapsed (see LapsedSession; omitted when none).
type SessionCounts = statusview.SessionCounts

// StatusRequest is `awr status` and awr_status.
type StatusRequest struct {
	Read
}

// Status reports the log's revision, size and head hash, the projections'
// versions and freshness, and basic counts, the work queues and the stale
// sessions, as of the request's revision (statusview.Read), and where
// the log lives.
func (p *Project) Status(ctx context.Context, req StatusRequest) (*StatusResult, error) {
	ttl := p.leaseTTL()
	res, err := readResult(ctx, p, req.Read, func(r *events.Reader, rev, now int64) (*StatusResult, error) {
		return statusview.Read(r, &p.memo, rev, now, ttl, req.Past())
	})
	if err != nil {
		return nil, err
	}
	if st, err := p.EventLog(ctx); err == nil && st.Upstream() != nil {
		res.Store = p.storeStatus(st)
	}
	return res, nil
}

// MaxStaleListed is how many stale sessions status lists at most.
const MaxStaleListed = idle.MaxStaleListed
