package project

import (
	"context"
	"encoding/hex"
	"sort"
	"strings"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/internal/shellwords"
	"github.com/awr-dev/awr/projections"
	"zombiezen.com/go/sqlite"
)

// ProjectionStatus is one projection's version and freshness.
type ProjectionStatus struct {
	Name    string `json:"name"`
	Version int    `json:"version"`
	LastSeq int64  `json:"last_seq"`
	Fresh   bool   `json:"fresh"`
}

// StatusResult is `awr status`.
type StatusResult struct {
	ProjectRevision int64         `json:"project_revision"`
	Head            int64         `json:"head"`
	At              *int64        `json:"at,omitempty"`
	EventCount      int64         `json:"event_count"`
	HeadHash        string        `json:"head_hash"`
	LastEventAt     int64         `json:"last_event_at,omitempty"`
	ProjectName     string        `json:"project_name"`
	ProjectID       string        `json:"project_id"`
	SchemaVersion   int           `json:"schema_version"`
	Sessions        SessionCounts `json:"sessions"`
	LiveClaims      int           `json:"live_claims"`
	WorkItems       int           `json:"work_items"`
	ReadyCount      int           `json:"ready_count"`
	// Counts is the number of work items per canonical status (and
	// "unknown").
	Counts map[string]int `json:"counts"`
	// Queues sorts the open work: current (claimed or in progress), ready,
	// waiting (on a dependency or a person) and blocked.
	Queues Queues `json:"queues"`
	// NextAction is the one command a newcomer should run next.
	NextAction string `json:"next_action"`
	// StaleSessions lists the stale sessions, oldest first, each with the
	// command that ends it: the MaxStaleListed latest started (or resumed
	// from) when there are more (Sessions.Stale counts them all; awr session list
	// --stale lists them all).
	StaleSessions []StaleSession `json:"stale_sessions"`
	// LapsedSessions lists the sessions whose claim lapsed while they
	// were active, most recently lapsed first, at most
	// commands.DefaultPage of them (Sessions.Lapsed counts them all;
	// omitted when none): their
	// work may be unsaved, and NextAction is the command that resumes the
	// first, never one that starts a session beside it.
	LapsedSessions []LapsedSession    `json:"lapsed_sessions,omitempty"`
	Projections    []ProjectionStatus `json:"projections"`
	// Origin is set on an imported replica: the project it was imported
	// from and that project's head at import.
	Origin *Origin `json:"origin,omitempty"`
	// Store is set for a project whose log is shared (the manifest's
	// [store] table): the shared log, and this machine's cache of it.
	Store *StoreStatus `json:"store,omitempty"`
	// Fork is set once the project was forked (awr fork --accept): the
	// project_forked event and the origin it forked from.
	Fork *ForkView `json:"fork,omitempty"`
	// Goals are the project's goals (spec-kit user stories and success
	// criteria, a GOALS.md, a ledger's goals), each with the work items
	// that serve it, as awr intake inspect lists them (omitted when there
	// is none).
	Goals []intake.GoalView `json:"goals,omitempty"`
	// LastReindex is what the last index of the project's sources changed
	// in their work items, read from its events (omitted before any
	// source was indexed).
	LastReindex *LastReindex `json:"last_reindex,omitempty"`
}

// LastReindex is what the last index of the project's sources changed,
// source by source (internal/intake reads it from the log).
type LastReindex = intake.LastReindex

// Queues are the work items by what they wait for: each list holds the
// first commands.DefaultPage of its queue, in ready's order (priority,
// then key), and its *_total counts the whole queue (`awr ready` pages
// through the ready ones, `awr ready --all` lists every item).
type Queues struct {
	Current      []QueueItem `json:"current"`
	Ready        []QueueItem `json:"ready"`
	Waiting      []QueueItem `json:"waiting"`
	Blocked      []QueueItem `json:"blocked"`
	CurrentTotal int         `json:"current_total"`
	ReadyTotal   int         `json:"ready_total"`
	WaitingTotal int         `json:"waiting_total"`
	BlockedTotal int         `json:"blocked_total"`
}

// QueueItem is one work item in a queue; Holder is set for claimed work.
type QueueItem struct {
	Key    string  `json:"key"`
	Title  string  `json:"title"`
	Status string  `json:"status"`
	Holder *Holder `json:"holder,omitempty"`
	Reason string  `json:"reason,omitempty"`
}

// SessionCounts counts sessions by state: Stale counts the active
// sessions that are stale (see StaleSession), Lapsed those whose claim
// lapsed (see LapsedSession; omitted when none).
type SessionCounts struct {
	Active int `json:"active"`
	Stale  int `json:"stale"`
	Lapsed int `json:"lapsed,omitempty"`
}

// StatusRequest is `awr status` and awr_status.
type StatusRequest struct {
	Read
}

// Status reports the log's revision, size and head hash, the projections'
// versions and freshness, and basic counts, the work queues and the stale
// sessions, as of the request's revision.
func (p *Project) Status(ctx context.Context, req StatusRequest) (*StatusResult, error) {
	res := &StatusResult{SchemaVersion: events.SchemaVersion(), StaleSessions: []StaleSession{}}
	ttl := p.leaseTTL()
	err := p.read(ctx, req.Read, func(r *events.Reader, rev, now int64) error {
		res.ProjectRevision, res.Head, res.EventCount = rev, r.Head, rev
		if req.Past() {
			res.At = &rev
		}
		if err := res.readHead(r.Conn, rev); err != nil {
			return err
		}
		head := rev == r.Head
		// Live claims are read once: the stale sessions and the readiness
		// of every item follow from them.
		live, err := projections.LiveClaimsAt(r.Conn, rev, now, head)
		if err != nil {
			return err
		}
		res.LiveClaims = len(live)
		if err := statusSessions(r, rev, now, ttl, head, live, res); err != nil {
			return err
		}
		goals, err := projections.GoalsAt(r.Conn, rev)
		if err != nil {
			return err
		}
		if res.LastReindex, err = intake.LastReindexAt(r.Conn, rev); err != nil {
			return err
		}
		if head {
			// The work queues the projections keep at the head: the
			// read follows the pages listed, the live claims and the
			// seats, not the register.
			if err := res.queueAtHead(r, live, goals); err != nil {
				return err
			}
		} else {
			ready, err := projections.ReadinessFrom(r.Conn, rev, head, live)
			if err != nil {
				return err
			}
			if err := holdBack(r, rev, ready); err != nil {
				return err
			}
			res.WorkItems = len(ready)
			if len(goals) > 0 {
				res.Goals = intake.LinkGoals(goals, ready)
			}
			res.queue(ready)
		}
		if res.LapsedSessions, res.Sessions.Lapsed, err = lapsedSessions(r, rev, now, head, commands.DefaultPage); err != nil {
			return err
		}
		if len(res.LapsedSessions) > 0 {
			// A session died with its work unsaved: continuing it comes
			// before starting anything else.
			res.NextAction = res.LapsedSessions[0].ResumeCommand
		}
		if err := res.readReplica(r.Conn, rev); err != nil {
			return err
		}
		states, err := events.ProjectionStates(r.Conn)
		if err != nil {
			return err
		}
		for _, s := range states {
			res.Projections = append(res.Projections, ProjectionStatus{Name: s.Name, Version: s.Version, LastSeq: s.LastSeq, Fresh: s.LastSeq == r.Head})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if st, err := p.EventLog(ctx); err == nil && st.Upstream() != nil {
		res.Store = p.storeStatus(st)
	}
	return res, nil
}

// readHead sets the head's hash and time and the project's name and id
// (from its first event).
func (res *StatusResult) readHead(conn *sqlite.Conn, rev int64) error {
	if rev == 0 {
		return nil
	}
	if err := events.ScanEvents(conn, rev, rev, func(e *events.Event) error {
		res.HeadHash, res.LastEventAt = hex.EncodeToString(e.Hash), e.OccurredAt
		return nil
	}); err != nil {
		return err
	}
	return events.ScanEvents(conn, 1, 1, func(e *events.Event) error {
		if p, ok := mustDecode(e).(*events.ProjectInitialized); ok {
			res.ProjectName, res.ProjectID = p.Name, p.ProjectID
		}
		return nil
	})
}

// queue counts the items by status, files them in the queues (current,
// ready, waiting, blocked) and sets the next action they lead to.
func (res *StatusResult) queue(ready []projections.Readiness) {
	res.Counts = map[string]int{}
	res.Queues = Queues{Current: []QueueItem{}, Ready: []QueueItem{}, Waiting: []QueueItem{}, Blocked: []QueueItem{}}
	for _, it := range ready {
		res.Counts[it.Item.Status]++
		q := QueueItem{Key: it.Item.Key, Title: it.Item.Title, Status: it.Item.Status}
		if it.Claim != nil {
			q.Holder = &Holder{SessionID: it.Claim.SessionID, Agent: it.Claim.Agent, ExpiresAt: it.Claim.ExpiresAt, FencingToken: it.Claim.FencingToken}
		}
		switch {
		case it.Ready:
			res.Queues.add(projections.QueueReady, q)
		case it.Claim != nil || it.Item.Status == projections.StatusInProgress:
			res.Queues.add(projections.QueueCurrent, q)
		case it.Item.Status == projections.StatusCompleted || it.Item.Status == projections.StatusCancelled:
		case it.Item.Status == projections.StatusBlocked || hasReason(it, projections.ReasonBlocker):
			q.Reason = firstReason(it)
			res.Queues.add(projections.QueueBlocked, q)
		case hasReason(it, projections.ReasonDependencyOpen, projections.ReasonDependencyMissing, projections.ReasonDependencyCycle, ReasonAwaitingPerson):
			q.Reason = firstReason(it)
			res.Queues.add(projections.QueueWaiting, q)
		}
	}
	res.ReadyCount = res.Queues.ReadyTotal
	res.next()
}

// add files q in queue (projections.QueueReady, ...): counted, and
// listed while the list holds less than a page.
func (qs *Queues) add(queue string, q QueueItem) {
	list, total := qs.of(queue)
	if list == nil {
		return
	}
	*total++
	if len(*list) < commands.DefaultPage {
		*list = append(*list, q)
	}
}

// of returns the list and the total of queue (nil for a queue status
// does not list: closed, other).
func (qs *Queues) of(queue string) (*[]QueueItem, *int) {
	switch queue {
	case projections.QueueCurrent:
		return &qs.Current, &qs.CurrentTotal
	case projections.QueueReady:
		return &qs.Ready, &qs.ReadyTotal
	case projections.QueueWaiting:
		return &qs.Waiting, &qs.WaitingTotal
	case projections.QueueBlocked:
		return &qs.Blocked, &qs.BlockedTotal
	}
	return nil, nil
}

// next sets the next action the queues lead to.
func (res *StatusResult) next() {
	switch {
	case len(res.Queues.Ready) > 0:
		res.NextAction = "awr session start --work " + shellwords.Quote(res.Queues.Ready[0].Key) + ` --agent "$USER" --claim`
	case res.WorkItems == 0:
		res.NextAction = "awr intake inspect"
	default:
		res.NextAction = "awr ready --all"
	}
}

// readReplica sets where an imported replica came from and where a fork
// forked, as of rev; a replica not forked is led to fork.
func (res *StatusResult) readReplica(conn *sqlite.Conn, rev int64) error {
	var replica bool
	var err error
	if res.Origin, res.Fork, replica, err = commands.ReplicaState(conn); err != nil {
		return err
	}
	if res.Fork != nil && res.Fork.Seq > rev {
		res.Fork = nil // forked after the revision read
	}
	if res.Fork != nil {
		res.ProjectID = res.Fork.ProjectID // a fork is a project of its own
	}
	if replica {
		res.NextAction = "awr fork"
	}
	return nil
}

func mustDecode(e *events.Event) any {
	v, _ := events.Decode(e)
	return v
}

func hasReason(r projections.Readiness, codes ...string) bool {
	for _, x := range r.Reasons {
		for _, c := range codes {
			if x.Code == c {
				return true
			}
		}
	}
	return false
}

func firstReason(r projections.Readiness) string {
	if len(r.Reasons) == 0 {
		return ""
	}
	return r.Reasons[0].Message
}

// MaxStaleListed is how many stale sessions status lists at most.
const MaxStaleListed = 50

// statusSessions counts the sessions active and stale at rev and lists
// the latest stale ones, in reads that do not grow with the sessions
// history left active (dropped conversations leave thousands): a session
// is stale when it holds no live claim and its stream has no event in the
// last ttl, and since occurred_at never decreases with seq those events
// are the log's tail, found by a binary search on seq. Whichever is
// smaller is read: the active sessions (each one's last event), or the
// tail's events (the count is then the active count less the active
// sessions that are fresh, and the list walks the active sessions newest
// first and stops at MaxStaleListed). So the cost follows the smaller of
// the sessions running and the last lease's activity, not the history.
func statusSessions(r *events.Reader, rev, now, ttl int64, head bool, live []projections.Claim, res *StatusResult) error {
	n, err := projections.ActiveSessionCountAt(r.Conn, rev, head)
	if err != nil {
		return err
	}
	res.Sessions.Active = n
	if ttl <= 0 || n == 0 {
		return nil
	}
	holds := map[string]bool{}
	for _, c := range live {
		holds[c.SessionID] = true
	}
	from, err := firstAfter(r, rev, now-ttl)
	if err != nil {
		return err
	}
	var list []staleCandidate
	if rev-from+1 > int64(n) {
		// Fewer active sessions than recent events: ask each session.
		if list, err = staleByLastEvent(r, rev, head, from, holds); err != nil {
			return err
		}
		res.Sessions.Stale = len(list)
	} else if list, err = staleByRecentEvents(r, rev, head, n, from, holds, res); err != nil {
		return err
	}
	// Both ways order by the revision of the session's active version,
	// the order staleByRecentEvents walks in, so that the sessions
	// listed do not depend on which way was cheaper.
	sort.Slice(list, func(i, j int) bool {
		if list[i].version != list[j].version {
			return list[i].version < list[j].version
		}
		return list[i].ID < list[j].ID
	})
	if len(list) > MaxStaleListed {
		list = list[len(list)-MaxStaleListed:]
	}
	for _, s := range list {
		switch {
		case s.LastEventSeq == 0:
			if s.LastEventSeq, s.IdleSince, err = projections.SessionLastEventAt(r.Conn, s.ID, rev); err != nil {
				return err
			}
		default: // staleByLastEvent found the seq; its time only for those listed
			if s.IdleSince, err = events.EventTime(r.Conn, s.LastEventSeq); err != nil {
				return err
			}
		}
		s.EndCommand = "awr session end --session " + s.ID + " --outcome abandoned"
		res.StaleSessions = append(res.StaleSessions, s.StaleSession)
	}
	return nil
}

// staleCandidate is a stale session with the revision of its active
// version (its start, or its resume), for ordering.
type staleCandidate struct {
	StaleSession
	version int64
}

func candidate(s *projections.Session) staleCandidate {
	return staleCandidate{StaleSession: StaleSession{ID: s.ID, Work: s.Work, Agent: s.Agent}, version: s.Revision}
}

// staleByLastEvent reads every session active at rev and the seq of the
// last event of each that holds no live claim: the cheaper way while the
// active sessions are fewer than the events of the last lease. A session
// is stale when that seq is before from, the first event within the
// lease (occurred_at never decreases with seq), so the read is the
// stream index alone; the times of the sessions listed are read after.
func staleByLastEvent(r *events.Reader, rev int64, head bool, from int64, holds map[string]bool) ([]staleCandidate, error) {
	var out []staleCandidate
	var err error
	walkErr := projections.RecentActiveSessionsAt(r.Conn, rev, head, func(s *projections.Session, _ bool) bool {
		if holds[s.ID] {
			return true
		}
		var seq int64
		if seq, err = projections.SessionLastSeqAt(r.Conn, s.ID, rev); err != nil {
			return false
		}
		if seq != 0 && seq < from {
			c := candidate(s)
			c.LastEventSeq = seq
			out = append(out, c)
		}
		return true
	})
	if err == nil {
		err = walkErr
	}
	return out, err
}

// staleByRecentEvents counts the stale sessions as the n active less those
// that are fresh (a live claim, or an event on their stream from seq
// from on), and lists the latest of the others: the cheaper way once
// history has left more sessions active than the last lease has events.
func staleByRecentEvents(r *events.Reader, rev int64, head bool, n int, from int64, holds map[string]bool, res *StatusResult) ([]staleCandidate, error) {
	fresh := map[string]bool{}
	for id := range holds {
		fresh[id] = true
	}
	if err := events.StreamsBetween(r.Conn, from, rev, "session/", func(stream string) bool {
		fresh[strings.TrimPrefix(stream, "session/")] = true
		return true
	}); err != nil {
		return nil, err
	}
	freshActive := 0
	for id := range fresh {
		s, err := projections.SessionAt(r.Conn, id, rev)
		if err != nil {
			return nil, err
		}
		if s != nil && s.Status == projections.SessionActive {
			freshActive++
		}
	}
	res.Sessions.Stale = n - freshActive
	var out []staleCandidate
	listed, open := 0, 0 // stale sessions found, and among the open versions
	err := projections.RecentActiveSessionsAt(r.Conn, rev, head, func(s *projections.Session, isOpen bool) bool {
		if !fresh[s.ID] {
			out = append(out, candidate(s))
			listed++
			if isOpen {
				open++
			}
		}
		return open < MaxStaleListed && listed < res.Sessions.Stale
	})
	return out, err
}

// firstAfter returns the first seq at or before rev whose event occurred
// after t (rev+1 when none did): occurred_at never decreases with seq
// (design invariant 9), so it is a search on seq.
func firstAfter(r *events.Reader, rev, t int64) (int64, error) {
	return searchAfter(rev, t, func(seq int64) (int64, error) { return events.EventTime(r.Conn, seq) })
}

// searchAfter is firstAfter over timeOf, the time of the event at a seq
// (non-decreasing in seq). The time t is a lease back from now, so the
// answer lies near the tail: the search gallops back from rev (seq rev,
// rev-1, rev-3, rev-7, ...) until an event at or before t, then bisects
// the last step. It reads about 2·log2(rev+1-answer) events, all near the
// tail of the log, where a bisection of the whole log read log2(rev)
// events spread across it (each a page of the file to fault in at a
// million events); when the whole log is older than t, it reads one.
func searchAfter(rev, t int64, timeOf func(seq int64) (int64, error)) (int64, error) {
	hi := rev + 1 // the answer is at most hi; every seq in [hi, rev] occurred after t
	for step := int64(1); ; step *= 2 {
		probe := hi - step
		if probe < 1 {
			return bisectAfter(1, hi, t, timeOf)
		}
		at, err := timeOf(probe)
		if err != nil {
			return 0, err
		}
		if at <= t {
			return bisectAfter(probe+1, hi, t, timeOf)
		}
		hi = probe
	}
}

// bisectAfter returns the first seq in [lo, hi) whose event occurred
// after t, hi when none did.
func bisectAfter(lo, hi, t int64, timeOf func(seq int64) (int64, error)) (int64, error) {
	for lo < hi {
		mid := lo + (hi-lo)/2
		at, err := timeOf(mid)
		if err != nil {
			return 0, err
		}
		if at > t {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo, nil
}
