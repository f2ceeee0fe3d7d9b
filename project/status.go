package project

import (
	"context"
	"encoding/hex"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
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
	// waiting (on a dependency) and blocked.
	Queues Queues `json:"queues"`
	// NextAction is the one command a newcomer should run next.
	NextAction string `json:"next_action"`
	// StaleSessions lists the stale sessions, oldest first, each with the
	// command that ends it.
	StaleSessions []StaleSession     `json:"stale_sessions"`
	Projections   []ProjectionStatus `json:"projections"`
	// Origin is set on an imported replica: the project it was imported
	// from and that project's head at import.
	Origin *Origin `json:"origin,omitempty"`
	// Fork is set once the project was forked (awr fork --accept): the
	// project_forked event and the origin it forked from.
	Fork *ForkView `json:"fork,omitempty"`
}

// Queues are the work items by what they wait for.
type Queues struct {
	Current []QueueItem `json:"current"`
	Ready   []QueueItem `json:"ready"`
	Waiting []QueueItem `json:"waiting"`
	Blocked []QueueItem `json:"blocked"`
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
// sessions that are stale (see StaleSession).
type SessionCounts struct {
	Active int `json:"active"`
	Stale  int `json:"stale"`
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
		if rev > 0 {
			if err := events.ScanEvents(r.Conn, rev, rev, func(e *events.Event) error {
				res.HeadHash, res.LastEventAt = hex.EncodeToString(e.Hash), e.OccurredAt
				return nil
			}); err != nil {
				return err
			}
			if err := events.ScanEvents(r.Conn, 1, 1, func(e *events.Event) error {
				if p, ok := mustDecode(e).(*events.ProjectInitialized); ok {
					res.ProjectName, res.ProjectID = p.Name, p.ProjectID
				}
				return nil
			}); err != nil {
				return err
			}
		}
		head := rev == r.Head
		active, err := projections.ActiveSessionsAt(r.Conn, rev, head)
		if err != nil {
			return err
		}
		res.Sessions.Active = len(active)
		stale, err := staleSessions(r, rev, now, ttl, active)
		if err != nil {
			return err
		}
		for _, s := range active {
			if st, ok := stale[s.ID]; ok {
				res.StaleSessions = append(res.StaleSessions, st)
			}
		}
		res.Sessions.Stale = len(res.StaleSessions)
		live, err := projections.LiveClaimsAt(r.Conn, rev, now, head)
		if err != nil {
			return err
		}
		res.LiveClaims = len(live)
		ready, err := projections.ReadinessAt(r.Conn, rev, now, head)
		if err != nil {
			return err
		}
		res.WorkItems = len(ready)
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
				res.ReadyCount++
				res.Queues.Ready = append(res.Queues.Ready, q)
			case it.Claim != nil || it.Item.Status == projections.StatusInProgress:
				res.Queues.Current = append(res.Queues.Current, q)
			case it.Item.Status == projections.StatusCompleted || it.Item.Status == projections.StatusCancelled:
			case it.Item.Status == projections.StatusBlocked || hasReason(it, projections.ReasonBlocker):
				q.Reason = firstReason(it)
				res.Queues.Blocked = append(res.Queues.Blocked, q)
			case hasReason(it, projections.ReasonDependencyOpen, projections.ReasonDependencyMissing, projections.ReasonDependencyCycle):
				q.Reason = firstReason(it)
				res.Queues.Waiting = append(res.Queues.Waiting, q)
			}
		}
		switch {
		case len(res.Queues.Ready) > 0:
			res.NextAction = "awr session start --work " + res.Queues.Ready[0].Key + ` --agent "$USER" --claim`
		case res.WorkItems == 0:
			res.NextAction = "awr intake inspect"
		default:
			res.NextAction = "awr ready --all"
		}
		var replica bool
		if res.Origin, res.Fork, replica, err = commands.ReplicaState(r.Conn); err != nil {
			return err
		}
		if res.Fork != nil && res.Fork.Seq > rev {
			res.Fork = nil // forked after the revision read
		}
		if replica {
			res.NextAction = "awr fork"
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
	return res, nil
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
