package commands

import (
	"context"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fault"
	"github.com/awr-dev/awr/projections"
)

// RenewRequest extends the lease of a session's claim.
type RenewRequest struct {
	SessionID string `name:"session" required:"" json:"session" help:"Session id (the claim's holder)." placeholder:"ID"`
	// TTLms is the new lease from now; nil is DefaultTTLms, 0 no expiry.
	TTLms *int64 `name:"ttl-ms" json:"ttl_ms,omitempty" help:"New lease from now in milliseconds (default 1800000; 0: no expiry)." placeholder:"N"`
	WriteMeta
}

// DefaultTTLms is the lease a renewal gives when it names none: 30 minutes.
const DefaultTTLms = 1800000

// ClaimResult reports a claim after renew or release.
type ClaimResult struct {
	Replay
	Claim           ClaimView `json:"claim"`
	State           string    `json:"state"`
	ProjectRevision int64     `json:"project_revision"`
}

// RenewClaim extends the lease of the session's live claim by TTLms from
// now (DefaultTTLms when nil; 0 removes the expiry). Only the holder renews: a session whose lease
// expired and was taken by another gets ClaimConflict; a session without a
// live claim gets InvalidTransition.
func RenewClaim(ctx context.Context, env *Env, req RenewRequest) (*ClaimResult, error) {
	if err := required("session", req.SessionID); err != nil {
		return nil, err
	}
	ttl := int64(DefaultTTLms)
	if req.TTLms != nil {
		ttl = *req.TTLms
	}
	if ttl < 0 {
		return nil, fault.New(fault.InvalidInput, "renew claim: --ttl-ms %d is negative", ttl).With("field", "ttl_ms")
	}
	req.TTLms = &ttl // the same request whether the default is said or not
	return write(ctx, env, "awr", req.WriteMeta, []string{"session/" + req.SessionID}, req, func(tx *events.Tx) (*ClaimResult, error) {
		s, err := activeSession(tx, "renew claim", req.SessionID)
		if err != nil {
			return nil, err
		}
		if err := tx.Guard("work/" + s.Work); err != nil {
			return nil, err
		}
		c, err := heldClaim(tx, s.ID)
		if err != nil {
			return nil, err
		}
		if c == nil {
			return nil, fault.New(fault.InvalidTransition, "renew claim: session %s holds no claim", s.ID).With("session_id", s.ID).
				WithHint("awr session resume --from-session %s --claim", s.ID)
		}
		now := tx.Now().UnixMilli()
		if err := fence(tx, "renew claim", s); err != nil {
			return nil, err
		}
		// Past the fence no later claim exists, so an expired lease is
		// still this session's to renew.
		r := events.ClaimRenewed{ClaimID: c.ID, Work: c.Work, SessionID: s.ID}
		if ttl > 0 {
			r.ExpiresAt = now + ttl
		}
		if _, err := tx.Append(events.NewEvent{Stream: "work/" + c.Work, Payload: r}); err != nil {
			return nil, err
		}
		return &ClaimResult{Claim: ClaimView{ID: c.ID, Work: c.Work, SessionID: s.ID, Agent: c.Agent, ExpiresAt: r.ExpiresAt, FencingToken: c.FencingToken},
			State: projections.ClaimHeld, ProjectRevision: tx.Head()}, nil
	})
}

// ReleaseRequest lets a session's claim go early.
type ReleaseRequest struct {
	SessionID string `name:"session" required:"" json:"session" help:"Session id (the claim's holder)." placeholder:"ID"`
	WriteMeta
}

// ReleaseClaim releases the session's claim. The session stays active.
func ReleaseClaim(ctx context.Context, env *Env, req ReleaseRequest) (*ClaimResult, error) {
	if err := required("session", req.SessionID); err != nil {
		return nil, err
	}
	return write(ctx, env, "awr", req.WriteMeta, []string{"session/" + req.SessionID}, req, func(tx *events.Tx) (*ClaimResult, error) {
		s, err := activeSession(tx, "release claim", req.SessionID)
		if err != nil {
			return nil, err
		}
		c, err := heldClaim(tx, s.ID)
		if err != nil {
			return nil, err
		}
		if c == nil {
			return nil, fault.New(fault.InvalidTransition, "release claim: session %s holds no claim", s.ID).With("session_id", s.ID)
		}
		if _, err := tx.Append(events.NewEvent{Stream: "work/" + c.Work, Payload: events.ClaimReleased{
			ClaimID: c.ID, Work: c.Work, SessionID: s.ID, Reason: events.ReleaseExplicit,
		}}); err != nil {
			return nil, err
		}
		return &ClaimResult{Claim: ClaimView{ID: c.ID, Work: c.Work, SessionID: s.ID, Agent: c.Agent, ExpiresAt: c.ExpiresAt, FencingToken: c.FencingToken},
			State: projections.ClaimReleased, ProjectRevision: tx.Head()}, nil
	})
}
