package commands

import (
	"context"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
)

// RenewRequest extends the lease of a session's claim.
type RenewRequest struct {
	SessionID string `name:"session" required:"" json:"session" help:"Session id (the claim's holder)." placeholder:"ID"`
	// TTLms is the new lease from now; nil is the project's lease
	// (Policy.ClaimTTLms), 0 no expiry (only when the policy is 0 too).
	// TTL is the lease as a duration (--ttl 30m); leaseMs folds it into
	// TTLms, the form MCP and the log use.
	TTL   *time.Duration `name:"ttl" json:"-" help:"New lease from now (30m, 2h; default: the manifest's continuity.claim_ttl_ms, 1h when unset; 0, no expiry, only when that setting is 0)." placeholder:"DURATION"`
	TTLms *int64         `name:"ttl-ms" hidden:"" json:"ttl_ms,omitempty" help:"New lease from now in milliseconds (default: the manifest's continuity.claim_ttl_ms, 3600000 when unset; 0, no expiry, only when that setting is 0)." placeholder:"N"`
	WriteMeta
}

// ClaimResult reports a claim after acquire, renew or release.
type ClaimResult struct {
	Replay
	Claim           ClaimView `json:"claim"`
	State           string    `json:"state"`
	ProjectRevision int64     `json:"project_revision"`
}

// leaseMs folds a lease given as a duration (--ttl) into the request's
// milliseconds (ttl_ms, the form MCP and the log use), so a request reads
// the same whichever way its lease was said. --ttl and --ttl-ms (the
// former spelling, kept hidden for a release) together are refused, and
// so is a duration that is not a whole number of milliseconds.
func leaseMs(op string, ttl **time.Duration, ms **int64) error {
	if *ttl == nil {
		return nil
	}
	d := **ttl
	*ttl = nil
	switch {
	case *ms != nil:
		return fault.New(fault.Usage, "%s: --ttl and --ttl-ms say the same thing: give --ttl (a duration, 30m) alone", op).
			With("flag", "--ttl")
	case d%time.Millisecond != 0:
		return fault.New(fault.InvalidInput, "%s: --ttl %s is not a whole number of milliseconds", op, d).With("flag", "--ttl").With("field", "ttl")
	}
	v := d.Milliseconds()
	*ms = &v
	return nil
}

// claimLease settles the lease of a claim taken or renewed: --ttl folded
// into ms (leaseMs), then ms set to the length leaseTTL gives, so that the
// request is the same whether the default is said or not.
func claimLease(op string, p Policy, ttl **time.Duration, ms **int64) error {
	if err := leaseMs(op, ttl, ms); err != nil {
		return err
	}
	v, err := leaseTTL(op, p, *ms)
	if err != nil {
		return err
	}
	*ms = &v
	return nil
}

// leaseTTL returns the lease length a request asks for: the policy's when
// ttl is nil. A negative length is refused, and so is 0 (a claim that never
// expires) unless the policy is 0 itself: only the manifest can make claims
// without expiry.
func leaseTTL(op string, p Policy, ttl *int64) (int64, error) {
	if ttl == nil {
		return p.ClaimTTLms, nil
	}
	switch {
	case *ttl < 0:
		return 0, fault.New(fault.InvalidInput, "%s: --ttl %s is negative", op, msDuration(*ttl)).With("field", "ttl_ms").With("flag", "--ttl")
	case *ttl > MaxTTLms:
		return 0, fault.New(fault.InvalidInput, "%s: --ttl %s is longer than the longest lease, %s (30 days)", op, msDuration(*ttl), msDuration(MaxTTLms)).
			With("field", "ttl_ms").With("flag", "--ttl").With("max", MaxTTLms)
	case *ttl == 0 && p.ClaimTTLms != 0:
		return 0, fault.New(fault.InvalidInput, "%s: --ttl 0 asks for a claim that never expires, which only the manifest's continuity.claim_ttl_ms = 0 allows; omit --ttl for the project's lease (%s), or set claim_ttl_ms = 0 under [continuity] in .awr/project.toml", op, msDuration(p.ClaimTTLms)).
			With("field", "ttl_ms").With("setting", "continuity.claim_ttl_ms").With("claim_ttl_ms", p.ClaimTTLms)
	}
	return *ttl, nil
}

// msDuration shows a lease of ms milliseconds as a duration (1h0m0s).
func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

// leaseLength is what a renewal by the holder extends c's lease by: the
// length recorded with the claim or its latest renewal, or, for a claim
// recorded before lengths were, the lease it was acquired with
// (expires_at - acquired_at, the best the log says). 0 for a claim without
// a lease.
func leaseLength(c *projections.Claim) int64 {
	switch {
	case c.ExpiresAt == 0:
		return 0
	case c.TTLms > 0:
		return c.TTLms
	}
	return max(c.ExpiresAt-c.AcquiredAt, 0)
}

// renewHeld extends the lease of the claim session s holds to now plus
// its length (leaseLength): every write by the holder (a checkpoint, a
// bind, a recorded context) renews it, so a claim follows the work and
// lapses only when the work stops. A claim without a lease, a session
// without a claim, and a claim superseded by a later one (a higher fencing
// token: the fence decides that case, and a renewal never revives it) are
// left alone. A lease that lapsed while no one took the work is the
// holder's still and is renewed. A renewal that would move the expiry by
// less than 1% of the lease length is skipped, so a burst of writes does
// not append one claim_renewed each: the lease is then at least 99% of its
// length from now.
func renewHeld(tx *events.Tx, s *projections.Session) error {
	c, err := heldClaim(tx, s.ID)
	if err != nil || c == nil {
		return err
	}
	if leaseLength(c) <= 0 {
		return nil
	}
	top, err := projections.MaxFencingToken(tx.Conn, c.Work, tx.Head())
	if err != nil {
		return err
	}
	return renewLease(tx, s, c, top)
}

// renewFenced is renewHeld for a command that has just read what it
// reads (fenced): c, the claim s holds (nil when none), and top, the
// highest fencing token issued on s's work item. Nothing may be appended
// between that read and this call.
func renewFenced(tx *events.Tx, s *projections.Session, c *projections.Claim, top int64) error {
	if c == nil {
		return nil
	}
	if c.Work != s.Work { // top is the token of s's work item, not of c's
		return renewHeld(tx, s)
	}
	return renewLease(tx, s, c, top)
}

// renewLease appends the renewal renewHeld decides for c, the claim s
// holds, given top, the highest fencing token issued on c's work item.
func renewLease(tx *events.Tx, s *projections.Session, c *projections.Claim, top int64) error {
	ttl := leaseLength(c)
	if ttl <= 0 || top > c.FencingToken {
		return nil
	}
	expires := tx.Now().UnixMilli() + ttl
	if expires-c.ExpiresAt < ttl/100 {
		return nil
	}
	_, err := tx.Append(events.NewEvent{Stream: "work/" + c.Work, Payload: events.ClaimRenewed{
		ClaimID: c.ID, Work: c.Work, SessionID: s.ID, ExpiresAt: expires, TTLms: ttl,
	}})
	return err
}

// RenewClaim extends the lease of the session's live claim by TTLms from
// now (the policy's lease when nil; 0 removes the expiry, allowed only
// when the policy is 0). The length is recorded, so later renewals by the
// holder's writes extend by it. Only the holder renews: a session whose
// lease expired and was taken by another gets ClaimConflict; a session
// without a live claim gets InvalidTransition; a refused --ttl-ms is
// InvalidInput.
func RenewClaim(ctx context.Context, env *Env, req RenewRequest) (*ClaimResult, error) {
	if err := required("session", req.SessionID); err != nil {
		return nil, err
	}
	if err := claimLease("renew claim", env.policy(), &req.TTL, &req.TTLms); err != nil {
		return nil, err
	}
	ttl := *req.TTLms
	return sessionWrite(ctx, env, "awr", "renew claim", req.SessionID, req.WriteMeta, req, func(tx *events.Tx) (*ClaimResult, error) {
		s, err := activeSession(tx, "renew claim", req.SessionID)
		if err != nil {
			return nil, err
		}
		if err := tx.Guard("work/" + s.Work); err != nil {
			return nil, err
		}
		// fenced refuses a superseded claim (ClaimConflict) and gives
		// the claim s holds, nil when none.
		c, _, err := fenced(tx, "renew claim", s)
		if err != nil {
			return nil, err
		}
		if c == nil {
			return nil, fault.New(fault.InvalidTransition, "renew claim: session %s holds no claim", s.ID).With("session_id", s.ID).
				WithHint("awr claim acquire --session %s", s.ID)
		}
		now := tx.Now().UnixMilli()
		// Past the fence no later claim exists, so an expired lease is
		// still this session's to renew.
		r := events.ClaimRenewed{ClaimID: c.ID, Work: c.Work, SessionID: s.ID}
		if ttl > 0 {
			r.ExpiresAt, r.TTLms = now+ttl, ttl
		}
		if _, err := tx.Append(events.NewEvent{Stream: "work/" + c.Work, Payload: r}); err != nil {
			return nil, err
		}
		return &ClaimResult{Claim: ClaimView{ID: c.ID, Work: c.Work, SessionID: s.ID, Agent: c.Agent, ExpiresAt: r.ExpiresAt, TTLms: r.TTLms, FencingToken: c.FencingToken},
			State: projections.ClaimHeld, ProjectRevision: tx.Head()}, nil
	})
}

// AcquireRequest gives an active session the claim on its work item:
// `awr claim acquire` and the awr_claim_acquire tool.
type AcquireRequest struct {
	SessionID string `name:"session" required:"" json:"session" help:"Session id (active; it takes the claim on its own work item)." placeholder:"ID"`
	// TTLms is the lease from now; nil is the project's lease.
	// TTL is the lease as a duration (--ttl 30m); leaseMs folds it into
	// TTLms, the form MCP and the log use.
	TTL   *time.Duration `name:"ttl" json:"-" help:"Lease (30m, 2h; default: the manifest's continuity.claim_ttl_ms, 1h when unset; 0, no expiry, only when that setting is 0)." placeholder:"DURATION"`
	TTLms *int64         `name:"ttl-ms" hidden:"" json:"ttl_ms,omitempty" help:"Lease in milliseconds (default: the manifest's continuity.claim_ttl_ms, 3600000 when unset; 0, no expiry, only when that setting is 0)." placeholder:"N"`
	// Stale lists the sources the door found changed since they were
	// indexed; the claim is refused on them (after a retried request id
	// has had its first answer). No front end sets it.
	Stale []string `kong:"-" json:"-"`
	WriteMeta
	// ForWork, when set (awr work claim), is the item the session must
	// work on; no front end sets it.
	ForWork string `kong:"-" json:"-"`
}

// AcquireClaim gives the active session req.SessionID the claim on its
// work item, with a lease of TTLms (the policy's when nil), as `session
// start --claim` would have. Nothing is written on any error.
// Errors: InvalidInput for a missing session or a refused --ttl-ms;
// SourceStale when the door found changed sources; NotFound for an
// unknown session; InvalidTransition for an ended session, for one that
// already holds its claim (hint: renew it) and for work whose status or
// blocker forbid it; ClaimConflict when another session holds a live claim
// (details name the holder) or when this session's claim was superseded;
// DependencyBlocked for an open required dependency; RevisionConflict when
// the session's or the work item's stream moved past the expected
// revision.
func AcquireClaim(ctx context.Context, env *Env, req AcquireRequest) (*ClaimResult, error) {
	if err := required("session", req.SessionID); err != nil {
		return nil, err
	}
	if err := claimLease("acquire claim", env.policy(), &req.TTL, &req.TTLms); err != nil {
		return nil, err
	}
	ttl := *req.TTLms
	return sessionWrite(ctx, env, "awr", "acquire claim", req.SessionID, req.WriteMeta, req, func(tx *events.Tx) (*ClaimResult, error) {
		if len(req.Stale) > 0 {
			return nil, StaleError("acquire claim", req.Stale)
		}
		s, err := activeSession(tx, "acquire claim", req.SessionID)
		if err != nil {
			return nil, err
		}
		if err := onWork("work claim", req.ForWork, s); err != nil {
			return nil, err
		}
		if err := tx.Guard("work/" + s.Work); err != nil {
			return nil, err
		}
		held, err := heldClaim(tx, s.ID)
		if err != nil {
			return nil, err
		}
		if held != nil {
			if err := fence(tx, "acquire claim", s); err != nil {
				return nil, err
			}
			state := "holds"
			if !held.LiveAt(tx.Now().UnixMilli()) {
				state = "still holds (its lease lapsed, no one took the work)"
			}
			return nil, fault.New(fault.InvalidTransition, "acquire claim: session %s %s claim %s on %s", s.ID, state, held.ID, s.Work).
				With("session_id", s.ID).With("claim_id", held.ID).With("expires_at", held.ExpiresAt).With("fencing_token", held.FencingToken).
				WithHint("awr claim renew --session %s", s.ID)
		}
		checked, err := checkClaimable(tx, s.Work, "")
		if err != nil {
			return nil, err
		}
		prev := tx.SetActor(s.Agent)
		defer tx.SetActor(prev)
		c, err := acquire(tx, s.Work, s.ID, s.Agent, ttl, "", checked)
		if err != nil {
			return nil, err
		}
		return &ClaimResult{Claim: *c, State: projections.ClaimHeld, ProjectRevision: tx.Head()}, nil
	})
}

// ReleaseRequest lets a session's claim go early.
type ReleaseRequest struct {
	SessionID string `name:"session" required:"" json:"session" help:"Session id (the claim's holder)." placeholder:"ID"`
	WriteMeta
	// ForWork, when set (awr work release), is the item the session must
	// work on and hold; no front end sets it.
	ForWork string `kong:"-" json:"-"`
}

// ReleaseClaim releases the session's claim. The session stays active.
func ReleaseClaim(ctx context.Context, env *Env, req ReleaseRequest) (*ClaimResult, error) {
	if err := required("session", req.SessionID); err != nil {
		return nil, err
	}
	return sessionWrite(ctx, env, "awr", "release claim", req.SessionID, req.WriteMeta, req, func(tx *events.Tx) (*ClaimResult, error) {
		s, err := activeSession(tx, "release claim", req.SessionID)
		if err != nil {
			return nil, err
		}
		if err := onWork("work release", req.ForWork, s); err != nil {
			return nil, err
		}
		c, err := heldClaim(tx, s.ID)
		if err != nil {
			return nil, err
		}
		if c == nil && req.ForWork != "" {
			live, err := projections.LiveClaimAt(tx.Conn, req.ForWork, tx.Head(), tx.Now().UnixMilli(), true)
			if err != nil {
				return nil, err
			}
			if live != nil {
				return nil, fault.New(fault.ClaimConflict, "work release: %s is held by session %s (%s), not %s; only the holder releases it", req.ForWork, live.SessionID, live.Agent, s.ID).
					With("work", req.ForWork).With("holder_session", live.SessionID).With("holder_agent", live.Agent).WithHint("awr work show %s", req.ForWork)
			}
		}
		if c == nil {
			return nil, fault.New(fault.InvalidTransition, "release claim: session %s holds no claim", s.ID).With("session_id", s.ID)
		}
		if _, err := tx.Append(events.NewEvent{Stream: "work/" + c.Work, Payload: events.ClaimReleased{
			ClaimID: c.ID, Work: c.Work, SessionID: s.ID, Reason: events.ReleaseExplicit,
		}}); err != nil {
			return nil, err
		}
		return &ClaimResult{Claim: ClaimView{ID: c.ID, Work: c.Work, SessionID: s.ID, Agent: c.Agent, ExpiresAt: c.ExpiresAt, TTLms: c.TTLms, FencingToken: c.FencingToken},
			State: projections.ClaimReleased, ProjectRevision: tx.Head()}, nil
	})
}
