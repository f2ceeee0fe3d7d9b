// Package statusview assembles `awr status` from one read of the log
// (Read): the head and the project's name and id, the session counts
// and the stale and lapsed sessions (internal/idle), the work queues
// (internal/workqueue), where a replica came from, the projections'
// freshness, and the one command to run next. At the head it reads
// through the door's internal/headmemo what the head alone decides. The
// door (internal/project) resolves the revision and adds the store.
package statusview

import (
	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/headmemo"
	"github.com/awr-dev/awr/internal/idle"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/internal/shellwords"
	"github.com/awr-dev/awr/internal/workqueue"
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

// Result is `awr status`.
type Result struct {
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
	Queues workqueue.Queues `json:"queues"`
	// NextAction is the one command a newcomer should run next.
	NextAction string `json:"next_action"`
	// StaleSessions lists the stale sessions, oldest first, each with the
	// command that ends it: the idle.MaxStaleListed latest started (or resumed
	// from) when there are more (Sessions.Stale counts them all; awr session list
	// --stale lists them all).
	StaleSessions []idle.StaleSession `json:"stale_sessions"`
	// LapsedSessions lists the sessions whose claim lapsed while they
	// were active, most recently lapsed first, at most
	// commands.DefaultPage of them (Sessions.Lapsed counts them all;
	// omitted when none): their
	// work may be unsaved, and NextAction is the command that resumes the
	// first, never one that starts a session beside it.
	LapsedSessions []idle.LapsedSession `json:"lapsed_sessions,omitempty"`
	Projections    []ProjectionStatus   `json:"projections"`
	// Origin is set on an imported replica: the project it was imported
	// from and that project's head at import.
	Origin *events.Origin `json:"origin,omitempty"`
	// Store is set for a project whose log is shared (the manifest's
	// [store] table): the shared log, and this machine's cache of it.
	Store *Store `json:"store,omitempty"`
	// Fork is set once the project was forked (awr fork --accept): the
	// project_forked event and the origin it forked from.
	Fork *commands.ForkView `json:"fork,omitempty"`
	// Goals are the project's goals (spec-kit user stories and success
	// criteria, a GOALS.md, a ledger's goals), each with the work items
	// that serve it, as awr intake inspect lists them (omitted when there
	// is none).
	Goals []intake.GoalView `json:"goals,omitempty"`
	// LastReindex is what the last index of the project's sources changed
	// in their work items, read from its events (omitted before any
	// source was indexed).
	LastReindex *intake.LastReindex `json:"last_reindex,omitempty"`
}

// Store is where a project's log lives, as status reports it.
type Store struct {
	// Kind is "sqlite" (the embedded file, the default) or "postgres" (a
	// shared log, cached in the file).
	Kind string `json:"kind"`
	// Shared names the shared log, without credentials ("postgres
	// HOST:PORT/DB as USER, project KEY"); absent for sqlite.
	Shared string `json:"shared,omitempty"`
	// Path is the SQLite file: the log, or this machine's cache of the
	// shared log.
	Path string `json:"path"`
}

// SessionCounts counts sessions by state: Stale counts the active
// sessions that are stale (see idle.StaleSession), Lapsed those whose
// claim lapsed (see idle.LapsedSession; omitted when none).
type SessionCounts struct {
	Active int `json:"active"`
	Stale  int `json:"stale"`
	Lapsed int `json:"lapsed,omitempty"`
}

// Read is `awr status` as of rev, the reader's clock at now, with the
// project's lease ttl: the log's revision, size and head hash, the
// projections' versions and freshness, the counts, the work queues, the
// stale and lapsed sessions and where a replica came from (past is set
// for a read at a past revision, --at). At the head it reads through
// memo what the head alone decides. Store is left for the door to fill.
func Read(r *events.Reader, memo *headmemo.Memo, rev, now, ttl int64, past bool) (*Result, error) {
	res := &Result{SchemaVersion: events.SchemaVersion(), StaleSessions: []idle.StaleSession{}}
	res.ProjectRevision, res.Head, res.EventCount = rev, r.Head, rev
	if past {
		res.At = &rev
	}
	head := rev == r.Head
	f, goals, err := statusHead(r, memo, rev, head, res)
	if err != nil {
		return nil, err
	}
	// Live claims are read once: the stale sessions and the readiness
	// of every item follow from them.
	live, err := projections.LiveClaimsAt(r.Conn, rev, now, head)
	if err != nil {
		return nil, err
	}
	res.LiveClaims = len(live)
	if err := statusSessions(r, memo, rev, now, ttl, head, live, res); err != nil {
		return nil, err
	}
	queues, err := statusQueues(r, memo, rev, head, live, goals)
	if err != nil {
		return nil, err
	}
	res.File(queues)
	if err := statusLapsed(r, memo, rev, now, head, res); err != nil {
		return nil, err
	}
	if head {
		res.replica(f.Origin, f.Fork, f.Replica, rev)
	} else if err := res.readReplica(r.Conn, rev); err != nil {
		return nil, err
	}
	states, err := events.ProjectionStates(r.Conn)
	if err != nil {
		return nil, err
	}
	for _, s := range states {
		res.Projections = append(res.Projections, ProjectionStatus{Name: s.Name, Version: s.Version, LastSeq: s.LastSeq, Fresh: s.LastSeq == r.Head})
	}
	return res, nil
}

// statusHead fills res's head, name, id and last reindex, and returns
// the goals (and at the head the facts the memo keeps of it: what the
// head alone decides is kept for the next read of it; the rest follows
// the reader's now).
func statusHead(r *events.Reader, memo *headmemo.Memo, rev int64, head bool, res *Result) (*headmemo.Facts, []events.Goal, error) {
	if head {
		f, err := memo.Facts(r)
		if err != nil {
			return nil, nil, err
		}
		res.setHead(f.Head)
		res.LastReindex = f.LastReindex
		return f, f.Goals, nil
	}
	if err := res.readHead(r.Conn, rev); err != nil {
		return nil, nil, err
	}
	goals, err := projections.GoalsAt(r.Conn, rev)
	if err != nil {
		return nil, nil, err
	}
	res.LastReindex, err = intake.LastReindexAt(r.Conn, rev)
	return nil, goals, err
}

// statusSessions fills res's active and stale session counts and the
// stale sessions listed.
func statusSessions(r *events.Reader, memo *headmemo.Memo, rev, now, ttl int64, head bool, live []projections.Claim, res *Result) error {
	var active, stale int
	var listed []idle.StaleSession
	var err error
	if head {
		active, stale, listed, err = memo.Stale(r, now, ttl, live)
	} else {
		active, stale, listed, err = idle.Latest(r, rev, now, ttl, head, live)
	}
	if err != nil {
		return err
	}
	res.Sessions.Active, res.Sessions.Stale = active, stale
	res.StaleSessions = append(res.StaleSessions, listed...)
	return nil
}

// statusQueues is the work queues at rev: at the head those the
// projections keep (the read follows the pages listed, the live claims
// and the seats, not the register), else built from the readiness.
func statusQueues(r *events.Reader, memo *headmemo.Memo, rev int64, head bool, live []projections.Claim, goals []events.Goal) (*workqueue.View, error) {
	if head {
		return memo.View(r, live, goals)
	}
	ready, err := projections.ReadinessFrom(r.Conn, rev, head, live)
	if err != nil {
		return nil, err
	}
	if err := workqueue.HoldBack(r, rev, ready); err != nil {
		return nil, err
	}
	return workqueue.Of(ready, goals), nil
}

// statusLapsed fills res's lapsed sessions and, when one died with its
// work unsaved, the next action: continuing it comes before starting
// anything else.
func statusLapsed(r *events.Reader, memo *headmemo.Memo, rev, now int64, head bool, res *Result) error {
	held, err := heldAt(r, memo, rev, head)
	if err != nil {
		return err
	}
	if res.LapsedSessions, res.Sessions.Lapsed, err = held.Lapsed(r, now, commands.DefaultPage); err != nil {
		return err
	}
	if len(res.LapsedSessions) > 0 {
		res.NextAction = res.LapsedSessions[0].ResumeCommand
	}
	return nil
}

// heldAt is the held claims at rev (idle.ReadHeld), kept by the memo at
// the head.
func heldAt(r *events.Reader, memo *headmemo.Memo, rev int64, head bool) (*idle.Held, error) {
	if head {
		return memo.Held(r)
	}
	return idle.ReadHeld(r, rev, false)
}

// readHead sets the head's hash and time and the project's name and id
// (headmemo.ReadHead).
func (res *Result) readHead(conn *sqlite.Conn, rev int64) error {
	h, err := headmemo.ReadHead(conn, rev)
	res.setHead(h)
	return err
}

// setHead sets the head's hash and time and the project's name and id.
func (res *Result) setHead(h headmemo.Head) {
	res.HeadHash, res.LastEventAt, res.ProjectName, res.ProjectID = h.Hash, h.LastEventAt, h.Name, h.ID
}

// File sets the counts, the queues and the goals of v, and the next
// action the queues lead to.
func (res *Result) File(v *workqueue.View) {
	res.WorkItems, res.Counts, res.Queues, res.Goals = v.WorkItems, v.Counts, v.Queues, v.Goals
	res.ReadyCount = res.Queues.ReadyTotal
	res.next()
}

// next sets the next action the queues lead to.
func (res *Result) next() {
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
func (res *Result) readReplica(conn *sqlite.Conn, rev int64) error {
	origin, fork, replica, err := commands.ReplicaState(conn)
	if err != nil {
		return err
	}
	res.replica(origin, fork, replica, rev)
	return nil
}

// replica sets what readReplica reads, from commands.ReplicaState's
// answer.
func (res *Result) replica(origin *events.Origin, fork *commands.ForkView, replica bool, rev int64) {
	res.Origin, res.Fork = origin, fork
	if res.Fork != nil && res.Fork.Seq > rev {
		res.Fork = nil // forked after the revision read
	}
	if res.Fork != nil {
		res.ProjectID = res.Fork.ProjectID // a fork is a project of its own
	}
	if replica {
		res.NextAction = "awr fork"
	}
}
