package queries

import (
	"context"
	"encoding/hex"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
	"github.com/awr-dev/awr/replay"
)

// At selects the revision a read reflects: Rev < 0 is the head. Now is the
// reader's clock (UTC ms) for reads at the head.
type At struct {
	Rev int64
	Now time.Time
}

// Head reads at the latest revision with the given clock.
func Head(now time.Time) At { return At{Rev: -1, Now: now} }

// ProjectionStatus is one projection's version and freshness.
type ProjectionStatus struct {
	Name    string `json:"name"`
	Version int    `json:"version"`
	LastSeq int64  `json:"last_seq"`
	Fresh   bool   `json:"fresh"`
}

// StatusResult is `awr status`.
type StatusResult struct {
	ProjectRevision int64              `json:"project_revision"`
	Head            int64              `json:"head"`
	At              *int64             `json:"at,omitempty"`
	EventCount      int64              `json:"event_count"`
	HeadHash        string             `json:"head_hash"`
	LastEventAt     int64              `json:"last_event_at,omitempty"`
	ProjectName     string             `json:"project_name"`
	ProjectID       string             `json:"project_id"`
	SchemaVersion   int                `json:"schema_version"`
	Sessions        SessionCounts      `json:"sessions"`
	LiveClaims      int                `json:"live_claims"`
	WorkItems       int                `json:"work_items"`
	ReadyCount      int                `json:"ready_count"`
	Projections     []ProjectionStatus `json:"projections"`
}

// SessionCounts counts sessions by state.
type SessionCounts struct {
	Active int `json:"active"`
}

// Status reports the log's revision, size and head hash, the projections'
// versions and freshness, and basic counts, as of at.
func Status(ctx context.Context, store *events.Store, at At) (*StatusResult, error) {
	res := &StatusResult{SchemaVersion: events.SchemaVersion()}
	err := store.Read(ctx, func(r *events.Reader) error {
		rev, now, err := replay.ResolveAt(r, at.Rev, at.Now.UnixMilli())
		if err != nil {
			return err
		}
		res.ProjectRevision, res.Head, res.EventCount = rev, r.Head, rev
		if at.Rev >= 0 {
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
		if res.Sessions.Active, err = projections.ActiveSessionCountAt(r.Conn, rev, head); err != nil {
			return err
		}
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
		for _, it := range ready {
			if it.Ready {
				res.ReadyCount++
			}
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
	v, _ := e.Decoded()
	return v
}
