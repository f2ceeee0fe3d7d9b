package commands

import (
	"context"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fault"
	"github.com/awr-dev/awr/projections"
)

// ResumeRequest continues a session in a new one.
type ResumeRequest struct {
	FromSession string `json:"from_session"`
	Agent       string `json:"agent"`
	Provider    string `json:"provider"`
	Model       string `json:"model"`
	// Claim: nil moves a live claim (default), true also acquires a free
	// one, false resumes without a claim.
	Claim *bool `json:"claim,omitempty"`
	TTLms int64 `json:"ttl_ms,omitempty"`
	WriteMeta
}

// ResumeResult is the successor session with what it inherited.
type ResumeResult struct {
	Replay
	Session         projections.Session     `json:"session"`
	FromSession     string                  `json:"from_session"`
	Claim           *ClaimView              `json:"claim"`
	Checkpoint      *projections.Checkpoint `json:"checkpoint"`
	ProjectRevision int64                   `json:"project_revision"`
}

// ResumeSession creates a successor session linked to its predecessor. An
// active predecessor is ended as interrupted in the same transaction; its
// live claim moves to the successor with a new fencing token; an expired or
// released claim is re-acquired when the work is free and a claim was asked
// for. Errors: NotFound for an unknown predecessor; InvalidTransition when
// it already has a successor (named in details); ClaimConflict when another
// session took the work (nothing is written then).
func ResumeSession(ctx context.Context, env *Env, req ResumeRequest) (*ResumeResult, error) {
	for _, f := range [][2]string{{"from_session", req.FromSession}, {"agent", req.Agent}} {
		if err := required(f[0], f[1]); err != nil {
			return nil, err
		}
	}
	if err := refuseSecrets("resume", [2]string{"agent", req.Agent}, [2]string{"provider", req.Provider}, [2]string{"model", req.Model}); err != nil {
		return nil, err
	}
	return write(ctx, env, req.Agent, req.WriteMeta, []string{"session/" + req.FromSession}, req, func(tx *events.Tx) (*ResumeResult, error) {
		prev, err := projections.SessionAt(tx.Conn, req.FromSession, tx.Head())
		if err != nil {
			return nil, err
		}
		if prev == nil {
			return nil, fault.New(fault.NotFound, "resume: session %s not found", req.FromSession).With("session_id", req.FromSession).WithHint("awr session list")
		}
		if prev.SuccessorID != "" {
			return nil, fault.New(fault.InvalidTransition, "resume: session %s was already resumed by %s", prev.ID, prev.SuccessorID).
				With("session_id", prev.ID).With("successor_id", prev.SuccessorID).WithHint("awr session resume --from-session %s", prev.SuccessorID)
		}
		if err := tx.Guard("work/" + prev.Work); err != nil {
			return nil, err
		}
		now := tx.Now().UnixMilli()
		old, err := heldClaim(tx, prev.ID)
		if err != nil {
			return nil, err
		}
		move := old != nil && old.LiveAt(now) && (req.Claim == nil || *req.Claim)
		acquireNew := !move && req.Claim != nil && *req.Claim
		if move {
			if err := fence(tx, "resume", prev); err != nil {
				return nil, err
			}
		}
		if acquireNew {
			if _, err := checkClaimable(tx, prev.Work, ""); err != nil {
				return nil, err
			}
		}
		// The checkpoint to inherit: the predecessor's own latest, or the
		// one it inherited itself, back along the chain.
		var last *projections.Checkpoint
		for cur, seen := prev, map[string]bool{}; cur != nil && !seen[cur.ID]; {
			seen[cur.ID] = true
			if cur.LastCheckpointID != "" {
				if last, err = projections.CheckpointAt(tx.Conn, cur.LastCheckpointID, tx.Head()); err != nil {
					return nil, err
				}
				break
			}
			if cur.PredecessorID == "" {
				break
			}
			if cur, err = projections.SessionAt(tx.Conn, cur.PredecessorID, tx.Head()); err != nil {
				return nil, err
			}
		}
		id := tx.NewID()
		if _, err := tx.Append(events.NewEvent{Stream: "session/" + id, Payload: events.SessionStarted{
			SessionID: id, Work: prev.Work, Agent: req.Agent, Provider: req.Provider, Model: req.Model, PredecessorID: prev.ID,
		}}); err != nil {
			return nil, err
		}
		var claim *ClaimView
		if move {
			if _, err := tx.Append(events.NewEvent{Stream: "work/" + old.Work, Payload: events.ClaimReleased{
				ClaimID: old.ID, Work: old.Work, SessionID: prev.ID, Reason: events.ReleaseMoved,
			}}); err != nil {
				return nil, err
			}
			// The moved claim keeps the lease it had, unless a new one is
			// asked for: moving never extends a lease by itself.
			expires := old.ExpiresAt
			if req.TTLms > 0 {
				expires = tx.Now().UnixMilli() + req.TTLms
			}
			if claim, err = acquireUntil(tx, prev.Work, id, req.Agent, expires, prev.ID); err != nil {
				return nil, err
			}
		}
		if prev.Status == projections.SessionActive {
			if _, err := endSession(tx, prev, events.OutcomeInterrupted, "resumed by "+id); err != nil {
				return nil, err
			}
		}
		if acquireNew {
			if claim, err = acquire(tx, prev.Work, id, req.Agent, req.TTLms, ""); err != nil {
				return nil, err
			}
		}
		rp := events.SessionResumed{SessionID: id, FromSession: prev.ID, Work: prev.Work}
		if last != nil {
			rp.CheckpointID = last.ID
		}
		if _, err := tx.Append(events.NewEvent{Stream: "session/" + id, Payload: rp}); err != nil {
			return nil, err
		}
		s, err := projections.SessionAt(tx.Conn, id, tx.Head())
		if err != nil {
			return nil, err
		}
		return &ResumeResult{Session: *s, FromSession: prev.ID, Claim: claim, Checkpoint: last, ProjectRevision: tx.Head()}, nil
	})
}
