package project

import (
	"context"
	"encoding/json"
	"time"

	"github.com/awr-dev/awr/commands"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/diff"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
)

// LogFilter selects events for `awr log` (projections.LogFilter).
type LogFilter = projections.LogFilter

// DefaultLogLimit bounds `awr log` when --limit is not given, and
// MaxLogLimit any page of it: a longer listing is paged (next_since), or
// streamed by the CLI's `awr log --all` (LogEach), never held whole.
const (
	DefaultLogLimit = 1000
	MaxLogLimit     = 10000
)

// LogEvent is one event as `awr log` shows it.
type LogEvent struct {
	events.Envelope
}

// LogResult is `awr log`.
type LogResult struct {
	ProjectRevision int64      `json:"project_revision"`
	Events          []LogEvent `json:"events"`
	Count           int        `json:"count"`
	// NextSince, when set, is the --since value that continues the listing.
	NextSince int64 `json:"next_since,omitempty"`
}

// LogRequest is `awr log` and awr_log.
type LogRequest struct {
	Read
	Session string `name:"session" json:"session,omitempty" help:"Only events concerning this session." placeholder:"ID"`
	Work    string `name:"work" json:"work,omitempty" help:"Only events concerning this work item." placeholder:"KEY"`
	Kind    string `name:"kind" json:"kind,omitempty" help:"Only events of this kind." placeholder:"KIND"`
	Since   int64  `name:"since" json:"since,omitempty" help:"Only events after this revision." placeholder:"REV"`
	Until   int64  `name:"until" json:"until,omitempty" help:"Only events up to and including this revision." placeholder:"REV"`
	Limit   *int   `name:"limit" json:"limit,omitempty" help:"At most N events, 1 to 10000 (default 1000); --all for every one." placeholder:"N"`
}

// Log lists events oldest first, filtered, as of the request's revision:
// one page of at most --limit events (next_since continues it).
// Errors: InvalidInput for an unknown --kind, a negative bound, a limit
// outside 1 to MaxLogLimit (0, which once meant every event, included),
// --since not before --until, or --at beyond the head.
func (p *Project) Log(ctx context.Context, req LogRequest) (*LogResult, error) {
	limit := DefaultLogLimit
	if req.Limit != nil {
		switch n := *req.Limit; {
		case n < 1:
			// 0 once meant every event: only the CLI's --all streams them.
			return nil, fault.New(fault.InvalidInput, "log: --limit %d is not a page size: a page holds 1 to %d events; the CLI streams every one with --all", n, MaxLogLimit).
				With("flag", "--limit").With("min", 1).With("max", MaxLogLimit).WithHint("awr log --all")
		case n > MaxLogLimit:
			return nil, fault.New(fault.InvalidInput, "log: --limit %d is more than a page holds (1 to %d); next_since pages on, or the CLI streams every event with --all", n, MaxLogLimit).
				With("flag", "--limit").With("min", 1).With("max", MaxLogLimit).WithHint("awr log --limit %d", MaxLogLimit)
		}
		limit = *req.Limit
	}
	res := &LogResult{}
	var err error
	res.ProjectRevision, res.Events, res.NextSince, err = logPage(limit, func(start func(int64) error, each func(LogEvent) error) error {
		return p.scanLog(ctx, req, limit, start, each)
	})
	if err != nil {
		return nil, err
	}
	res.Count = len(res.Events)
	return res, nil
}

// logPage is one page of the events a scan gives (Log's, work
// history's): scan calls start with the revision it read, then each with
// the events in order; the page holds at most limit of them and, when
// more follow, next is the seq to go on after (next_since).
func logPage(limit int, scan func(start func(rev int64) error, each func(LogEvent) error) error) (rev int64, page []LogEvent, next int64, err error) {
	page = []LogEvent{}
	err = scan(func(r int64) error {
		rev = r
		return nil
	}, func(e LogEvent) error {
		if len(page) == limit {
			next = page[limit-1].Seq
			return errStop
		}
		page = append(page, e)
		return nil
	})
	return rev, page, next, err
}

// eachEvent gives each of a scan's events to each as a LogEvent, its
// payload as recorded.
func eachEvent(each func(LogEvent) error) func(*events.Event) error {
	return func(e *events.Event) error {
		env := e.ToEnvelope()
		env.Payload = json.RawMessage(e.Payload)
		return each(LogEvent{env})
	}
}

// scanned is a scan's error, none when each stopped it (errStop).
func scanned(err error) error {
	if err == errStop {
		return nil
	}
	return err
}

// LogEach calls start with the revision read, then each with every event
// the request's filters select, oldest first, one at a time: the whole
// listing (`awr log --all`) in bounded memory. req.Limit is ignored.
// Errors: those of Log, and those start or each return.
func (p *Project) LogEach(ctx context.Context, req LogRequest, start func(rev int64) error, each func(LogEvent) error) error {
	return p.scanLog(ctx, req, -1, start, each)
}

// scanLog checks the request's filters and scans the events they select,
// at most limit+1 of them (-1: all), in one read.
func (p *Project) scanLog(ctx context.Context, req LogRequest, limit int, start func(rev int64) error, each func(LogEvent) error) error {
	f := LogFilter{Session: req.Session, Work: req.Work, Kind: req.Kind, Since: req.Since, Until: req.Until, Limit: limit}
	if f.Kind != "" && !events.Known(events.Kind(f.Kind)) {
		return fault.New(fault.InvalidInput, "log: --kind %q is not an event kind", f.Kind).With("kinds", events.Kinds()).
			WithHint("awr log --kind %s", events.KindCheckpointRecorded)
	}
	if err := commands.RevisionOf("log", "--since", f.Since); err != nil {
		return err
	}
	if err := commands.RevisionOf("log", "--until", f.Until); err != nil {
		return err
	}
	err := p.read(ctx, req.Read, func(r *events.Reader, rev, _ int64) error {
		if f.Work != "" {
			if err := commands.KnownWork(r.Conn, "log", f.Work, rev); err != nil {
				return err
			}
		}
		until := rev
		if f.Until > 0 && f.Until < until {
			until = f.Until
		}
		if f.Until > 0 && f.Since >= f.Until {
			return fault.New(fault.InvalidInput, "log: --since %d is not before --until %d", f.Since, f.Until).
				With("since", f.Since).With("until", f.Until).WithHint("awr log --since %d", f.Since)
		}
		if err := start(rev); err != nil {
			return err
		}
		return projections.ScanLog(r.Conn, f, until, limit, eachEvent(each))
	})
	return scanned(err)
}

var errStop = fault.New(fault.Internal, "stop")

// LogOn lists events like Log, inside an open read at revision rev.
func LogOn(r *events.Reader, rev int64, f LogFilter) ([]LogEvent, error) {
	limit := f.Limit
	if limit == 0 {
		limit = DefaultLogLimit
	}
	out := []LogEvent{}
	err := projections.ScanLog(r.Conn, f, rev, limit, func(e *events.Event) error {
		if limit >= 0 && len(out) == limit {
			return errStop
		}
		env := e.ToEnvelope()
		out = append(out, LogEvent{env})
		return nil
	})
	return out, scanned(err)
}

// FollowRequest is `awr log --follow`: the filters of LogRequest (without
// --at or --limit), from --since or, with FromHead, from the head.
type FollowRequest struct {
	LogRequest
	// FromHead starts after the head at the first poll (no --since).
	FromHead bool `json:"-" kong:"-"`
	// Interval is the pause between polls; DefaultFollowInterval when 0.
	Interval time.Duration `json:"-" kong:"-"`
}

// DefaultFollowInterval is how often `awr log --follow` looks for new
// events.
const DefaultFollowInterval = 200 * time.Millisecond

// followBatch bounds the events one poll reads.
const followBatch = 500

// Follow calls each with every event that matches the request's filters,
// oldest first, as events commit, until ctx is done (then it returns nil)
// or --until is reached. Each poll is one short read transaction (the
// head, then an index range on seq after the last event seen), so writers
// are never blocked and an idle poll costs a few index seeks. On a shared
// log the poll waits for the shared log's wake-up (NOTIFY) instead of
// the interval, up to followWake.
// Errors: InvalidInput for --at or --limit, and those of Log; an error
// returned by each.
func (p *Project) Follow(ctx context.Context, req FollowRequest, each func(LogEvent) error) error {
	if req.At != nil {
		return fault.New(fault.InvalidInput, "log --follow: --at %d reads the past; --follow follows the head", *req.At).
			With("at", *req.At).WithHint("awr log --until %d", *req.At)
	}
	if req.Limit != nil {
		return fault.New(fault.InvalidInput, "log --follow: --limit does not apply; --follow prints every event until interrupted").
			WithHint("awr log --follow")
	}
	interval := req.Interval
	if interval <= 0 {
		interval = DefaultFollowInterval
	}
	since := req.Since
	if req.FromHead {
		st, err := p.EventLog(ctx)
		if err != nil {
			return err
		}
		if err := st.Read(ctx, func(r *events.Reader) error { since = r.Head; return nil }); err != nil {
			return stopped(ctx, err)
		}
	}
	// A shared log wakes the follow when another machine commits
	// (LISTEN/NOTIFY); a project's own log is polled.
	st, err := p.EventLog(ctx)
	if err != nil {
		return stopped(ctx, err)
	}
	waker, _ := st.Upstream().(events.Waker)
	batch := followBatch
	for {
		if req.Until > 0 && since >= req.Until {
			return nil
		}
		q := req.LogRequest
		q.Since, q.Limit = since, &batch
		res, err := p.Log(ctx, q)
		if err != nil {
			return stopped(ctx, err)
		}
		for _, e := range res.Events {
			if err := each(e); err != nil {
				return err
			}
			since = e.Seq
		}
		if res.NextSince > 0 {
			continue
		}
		// Every match up to the snapshot's head was seen.
		if res.ProjectRevision > since {
			since = res.ProjectRevision
		}
		if waker != nil && waker.Wait(ctx, since, followWake) == nil {
			// Woken by the shared log (or its longest wait passed).
			if ctx.Err() != nil {
				return nil
			}
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}

// followWake is the longest a follow of a shared log waits for a wake-up
// before it looks anyway.
const followWake = 5 * time.Second

// stopped is nil when ctx was cancelled (an interrupted follow ends
// cleanly), else err.
func stopped(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// DiffRequest is `awr diff` and awr_diff: what changed between revisions
// From and To (the head when nil), in every read model or only in what
// concerns one work item, session or seat.
type DiffRequest struct {
	From    int64  `name:"from" required:"" json:"from" help:"The revision to compare from (0 or more)." placeholder:"REV"`
	To      *int64 `name:"to" json:"to,omitempty" help:"The revision to compare to (default: the head)." placeholder:"REV"`
	Work    string `name:"work" json:"work,omitempty" help:"Only what concerns this work item: its events (those of awr log --work) and its entities." placeholder:"KEY"`
	Session string `name:"session" json:"session,omitempty" help:"Only what concerns this session: its events (those of awr log --session) and its entities." placeholder:"ID"`
	Seat    string `name:"seat" json:"seat,omitempty" help:"Only what concerns this seat: its events, those of its sessions, and their entities." placeholder:"ROLE@RIG"`
	All     bool   `name:"all" json:"all,omitempty" help:"Also show bookkeeping fields (a source's content hash, an item's lines in its file), left out by default."`
	Limit   *int   `name:"limit" json:"limit,omitempty" help:"The page of events and of changed entities, each: 1 to 200 (default 50)." placeholder:"N"`
	// EventsCursor and ChangesCursor ask for the page after the one
	// that gave them.
	EventsCursor  string `name:"events-cursor" json:"events_cursor,omitempty" help:"The events after the page before's (its events_next_cursor)." placeholder:"CURSOR"`
	ChangesCursor string `name:"changes-cursor" json:"changes_cursor,omitempty" help:"The changed entities after the page before's (its changes_next_cursor)." placeholder:"CURSOR"`
	Whole         bool   `name:"whole" json:"whole,omitempty" help:"Every event and every changed entity, not a page of each (--all is the bookkeeping fields)."`
}

// The types of `awr diff`'s answer (package diff).
type (
	DiffEvent   = diff.Event
	DiffField   = diff.Field
	DiffEntity  = diff.Entity
	DiffChanges = diff.Changes
	DiffRead    = diff.Read
	DiffResult  = diff.Result
)

// Entity changes of a diff.
const (
	DiffAdded   = diff.Added
	DiffRemoved = diff.Removed
	DiffChanged = diff.Changed
)

// Diff compares every read model as of From and as of To (diff.On): its
// cost follows what changed, and its answer holds a page of the events
// and one of the changed entities, each counted whole. Errors:
// InvalidInput for a negative revision, one beyond the head, From after
// To, more than one of --work, --session, --seat, a bad --limit, --limit
// with --whole, or a cursor awr did not give; NotFound for a work item,
// session or seat unknown at To.
func (p *Project) Diff(ctx context.Context, req DiffRequest) (*DiffResult, error) {
	if err := diff.Check(diff.Request(req)); err != nil {
		return nil, err
	}
	return readResult(ctx, p, Read{}, func(r *events.Reader, head, _ int64) (*DiffResult, error) {
		return diff.On(r.Conn, head, diff.Request(req))
	})
}
