package commands

import (
	"context"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
)

// WorkClaimRequest claims a work item for a session working on it.
type WorkClaimRequest struct {
	Key       string `arg:"" name:"key" json:"key" help:"Work item key." placeholder:"KEY"`
	SessionID string `name:"session" required:"" json:"session" help:"Session id (active, working on KEY)." placeholder:"ID"`
	// TTL is the lease as a duration (--ttl 30m); leaseMs folds it into
	// TTLms, the form MCP and the log use.
	TTL   *time.Duration `name:"ttl" json:"-" help:"Lease (30m, 2h; default: the manifest's continuity.claim_ttl_ms, 1h when unset; 0, no expiry, only when that setting is 0)." placeholder:"DURATION"`
	TTLms *int64         `name:"ttl-ms" hidden:"" json:"ttl_ms,omitempty" help:"Lease in milliseconds (default: the manifest's continuity.claim_ttl_ms, 3600000 when unset; 0, no expiry, only when that setting is 0)." placeholder:"N"`
	// Stale: see AcquireRequest.
	Stale []string `kong:"-" json:"-"`
	WriteMeta
}

// WorkReleaseRequest releases a work item's claim; only its holder may.
type WorkReleaseRequest struct {
	Key       string `arg:"" name:"key" json:"key" help:"Work item key." placeholder:"KEY"`
	SessionID string `name:"session" required:"" json:"session" help:"Session id (the claim's holder)." placeholder:"ID"`
	WriteMeta
}

// ClaimWork is AcquireClaim for the session req.SessionID, which must work
// on req.Key. Errors: those of AcquireClaim; InvalidInput when the session
// works on another item.
func ClaimWork(ctx context.Context, env *Env, req WorkClaimRequest) (*ClaimResult, error) {
	if err := required("key", req.Key); err != nil {
		return nil, err
	}
	return AcquireClaim(ctx, env, AcquireRequest{SessionID: req.SessionID, TTL: req.TTL, TTLms: req.TTLms, Stale: req.Stale, WriteMeta: req.WriteMeta, ForWork: req.Key})
}

// ReleaseWork is ReleaseClaim by the session req.SessionID of the claim on
// req.Key. Errors: those of ReleaseClaim; InvalidInput when the session
// works on another item; ClaimConflict when another session holds the
// item's live claim (details name the holder).
func ReleaseWork(ctx context.Context, env *Env, req WorkReleaseRequest) (*ClaimResult, error) {
	if err := required("key", req.Key); err != nil {
		return nil, err
	}
	return ReleaseClaim(ctx, env, ReleaseRequest{SessionID: req.SessionID, WriteMeta: req.WriteMeta, ForWork: req.Key})
}

// onWork refuses a session that works on another item than key ("" skips
// the check).
func onWork(op, key string, s *projections.Session) error {
	if key == "" || s.Work == key {
		return nil
	}
	return fault.New(fault.InvalidInput, "%s: session %s works on %s, not %s", op, s.ID, s.Work, key).
		With("session_id", s.ID).With("work", s.Work).With("key", key).WithHint("awr work show %s", s.Work)
}

// WorkHandoffRequest moves a work item's live claim from one live session to
// another working on it.
type WorkHandoffRequest struct {
	Key         string `arg:"" name:"key" json:"key" help:"Work item key." placeholder:"KEY"`
	FromSession string `name:"from-session" required:"" json:"from_session" help:"The session holding the live claim (it must have recorded a checkpoint)." placeholder:"ID"`
	ToSession   string `name:"to-session" required:"" json:"to_session" help:"The live session that takes the claim (working on KEY, holding none)." placeholder:"ID"`
	WriteMeta
}

// WorkHandoffResult is both ends of a handoff: the claim released by the
// giver and the claim the taker acquired (new id, next fencing token, the
// same lease), with the checkpoint the taker inherits.
type WorkHandoffResult struct {
	Replay
	Work            string    `json:"work"`
	FromSession     string    `json:"from_session"`
	ToSession       string    `json:"to_session"`
	Released        ClaimView `json:"released"`
	Claim           ClaimView `json:"claim"`
	CheckpointID    string    `json:"checkpoint_id"`
	ProjectRevision int64     `json:"project_revision"`
}

// HandoffWork moves the live claim on req.Key from req.FromSession to
// req.ToSession atomically: claim_released (reason moved, to_session) and
// claim_acquired (moved_from, a new claim id and the next fencing token,
// the lease it had), in one transaction. Both sessions keep running.
// Errors: InvalidInput for missing fields, the same session twice, or a
// session on another item; NotFound for an unknown session or item;
// InvalidTransition for an ended session, a giver without a checkpoint or
// without a live claim, or a taker that holds a claim; ClaimConflict for a
// giver whose claim was superseded; RevisionConflict when a session's or
// the item's stream moved past the expected revision.
func HandoffWork(ctx context.Context, env *Env, req WorkHandoffRequest) (*WorkHandoffResult, error) {
	for _, f := range [][2]string{{"key", req.Key}, {"from_session", req.FromSession}, {"to_session", req.ToSession}} {
		if err := required(f[0], f[1]); err != nil {
			return nil, err
		}
	}
	if req.FromSession == req.ToSession {
		return nil, fault.New(fault.InvalidInput, "work handoff: --from-session and --to-session are both %s", req.FromSession).
			With("field", "to_session").WithHint("awr session list --work %s --active", req.Key)
	}
	const op = "work handoff"
	streams := []string{"session/" + req.FromSession, "session/" + req.ToSession, "work/" + req.Key}
	return write(ctx, env, "awr", req.WriteMeta, streams, req, func(tx *events.Tx) (*WorkHandoffResult, error) {
		if err := KnownWork(tx.Conn, op, req.Key, tx.Head()); err != nil {
			return nil, err
		}
		from, err := activeSession(tx, op, req.FromSession)
		if err != nil {
			return nil, err
		}
		to, err := activeSession(tx, op, req.ToSession)
		if err != nil {
			return nil, err
		}
		for _, s := range []*projections.Session{from, to} {
			if err := onWork(op, req.Key, s); err != nil {
				return nil, err
			}
		}
		// The handover names from's latest checkpoint, which
		// activeSession does not read.
		if from, err = projections.SessionAt(tx.Conn, from.ID, tx.Head()); err != nil {
			return nil, err
		}
		if from.LastCheckpointID == "" {
			return nil, fault.New(fault.InvalidTransition, "work handoff: session %s recorded no checkpoint, so there is nothing for %s to take over from", from.ID, to.ID).
				With("session_id", from.ID).WithHint("awr session checkpoint --session %s --agent %s --digest 'WHAT YOU DID' --next-action 'WHAT COMES NEXT'", from.ID, from.Agent)
		}
		old, err := heldClaim(tx, from.ID)
		if err != nil {
			return nil, err
		}
		now := tx.Now().UnixMilli()
		if old == nil || !old.LiveAt(now) {
			return nil, fault.New(fault.InvalidTransition, "work handoff: session %s holds no live claim on %s", from.ID, req.Key).
				With("session_id", from.ID).WithHint("awr work show %s", req.Key)
		}
		if err := fence(tx, op, from); err != nil {
			return nil, err
		}
		if held, err := heldClaim(tx, to.ID); err != nil {
			return nil, err
		} else if held != nil {
			return nil, fault.New(fault.InvalidTransition, "work handoff: session %s already holds claim %s", to.ID, held.ID).
				With("session_id", to.ID).With("claim_id", held.ID).WithHint("awr work show %s", req.Key)
		}
		prev := tx.SetActor(from.Agent)
		defer tx.SetActor(prev)
		if _, err := tx.Append(events.NewEvent{Stream: "work/" + req.Key, Payload: events.ClaimReleased{
			ClaimID: old.ID, Work: req.Key, SessionID: from.ID, Reason: events.ReleaseMoved, ToSession: to.ID,
		}}); err != nil {
			return nil, err
		}
		c, err := acquireUntil(tx, req.Key, to.ID, to.Agent, old.ExpiresAt, leaseLength(old), old.ID, nil)
		if err != nil {
			return nil, err
		}
		return &WorkHandoffResult{Work: req.Key, FromSession: from.ID, ToSession: to.ID,
			Released: ClaimView{ID: old.ID, Work: old.Work, SessionID: from.ID, Agent: old.Agent, ExpiresAt: old.ExpiresAt, TTLms: old.TTLms, FencingToken: old.FencingToken},
			Claim:    *c, CheckpointID: from.LastCheckpointID, ProjectRevision: tx.Head()}, nil
	})
}
