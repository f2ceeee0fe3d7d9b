package projections

import (
	"fmt"

	"github.com/awr-dev/awr/events"
	"zombiezen.com/go/sqlite"
)

// Claim states as stored. Whether a held claim is live depends on the
// reader's clock: see Claim.LiveAt.
const (
	ClaimHeld     = "held"
	ClaimReleased = "released"
	ClaimMoved    = "moved"
)

// Claim is the read model of one reservation of a work item.
type Claim struct {
	ID         string `json:"id"`
	Work       string `json:"work"`
	SessionID  string `json:"session_id"`
	Agent      string `json:"agent"`
	AcquiredAt int64  `json:"acquired_at"`
	ExpiresAt  int64  `json:"expires_at,omitempty"`
	// TTLms is the lease length recorded with the claim or its latest
	// renewal (0 when none was recorded or the claim has no lease).
	TTLms         int64  `json:"ttl_ms,omitempty"`
	FencingToken  int64  `json:"fencing_token"`
	State         string `json:"state"`
	ReleaseReason string `json:"release_reason,omitempty"`
	ReleasedAt    int64  `json:"released_at,omitempty"`
	Revision      int64  `json:"revision"`
}

// LiveAt reports whether the claim holds its work item at clock reading now
// (UTC ms): it is held and its lease, if any, has not expired.
func (c *Claim) LiveAt(now int64) bool {
	return c.State == ClaimHeld && (c.ExpiresAt == 0 || now < c.ExpiresAt)
}

// StateAt is the claim's state for a reader at now: held, expired,
// released or moved.
func (c *Claim) StateAt(now int64) string {
	if c.State == ClaimHeld && !c.LiveAt(now) {
		return "expired"
	}
	return c.State
}

type claims struct {
	versioned[Claim]
}

func newClaims() *claims {
	p := &claims{}
	p.base, p.step = base{name: "claims", version: 10, schema: "claims", tables: []Table{
		{Name: "p_claims", Key: []string{"claim_id"}, Temporal: true},
	}, fold: []string{"p_claims_key"}}, p.apply
	p.rows = versions[Claim]{insert: putClaim, load: ClaimAt, close: func(conn *sqlite.Conn, id string, seq int64) error {
		return closeInterval(conn, "claim_open_from", "claim_close", ":claim_id", id, seq)
	}}
	return p
}

// apply folds claim acquisitions, renewals and releases into claim versions.
func (p *claims) apply(conn *sqlite.Conn, e *events.Event, v events.Payload) error {
	switch pl := v.(type) {
	case *events.ClaimAcquired:
		return p.rows.put(conn, pl.ClaimID, e.Seq, &Claim{
			ID: pl.ClaimID, Work: pl.Work, SessionID: pl.SessionID, Agent: pl.Agent, AcquiredAt: e.OccurredAt,
			ExpiresAt: pl.ExpiresAt, TTLms: pl.TTLms, FencingToken: pl.FencingToken, State: ClaimHeld, Revision: e.Seq,
		})
	case *events.ClaimRenewed:
		return p.update(conn, e.Seq, pl.ClaimID, func(c *Claim) {
			c.ExpiresAt = pl.ExpiresAt
			// A renewal that names its length sets it; an older one keeps
			// the length the claim had, unless it removed the lease.
			if pl.TTLms > 0 || pl.ExpiresAt == 0 {
				c.TTLms = pl.TTLms
			}
		})
	case *events.ClaimReleased:
		return p.update(conn, e.Seq, pl.ClaimID, func(c *Claim) {
			c.State, c.ReleaseReason, c.ReleasedAt = ClaimReleased, pl.Reason, e.OccurredAt
			if pl.Reason == events.ReleaseMoved {
				c.State = ClaimMoved
			}
		})
	}
	return nil
}

func putClaim(conn *sqlite.Conn, c *Claim, from, to int64) error {
	return exec(conn, "claim_insert", func(st *sqlite.Stmt) {
		st.SetText(":claim_id", c.ID)
		st.SetText(":work", c.Work)
		st.SetText(":session_id", c.SessionID)
		st.SetText(":agent", c.Agent)
		st.SetInt64(":acquired_at", c.AcquiredAt)
		st.SetInt64(":expires_at", c.ExpiresAt)
		st.SetInt64(":ttl_ms", c.TTLms)
		st.SetInt64(":fencing_token", c.FencingToken)
		st.SetText(":state", c.State)
		st.SetText(":release_reason", c.ReleaseReason)
		st.SetInt64(":released_at", c.ReleasedAt)
		st.SetInt64(":valid_from", from)
		setValidTo(st, to)
		setInterval(st, from, to)
	})
}

func (p *claims) update(conn *sqlite.Conn, seq int64, id string, change func(c *Claim)) error {
	cur, err := p.rows.get(conn, id, seq)
	if err != nil {
		return err
	}
	if cur == nil {
		return fmt.Errorf("claim %s: never acquired", id)
	}
	change(cur)
	cur.Revision = seq
	return p.rows.put(conn, id, seq, cur)
}

func scanClaim(st *sqlite.Stmt) *Claim {
	return &Claim{
		ID: st.GetText("claim_id"), Work: st.GetText("work"), SessionID: st.GetText("session_id"), Agent: st.GetText("agent"),
		AcquiredAt: st.GetInt64("acquired_at"), ExpiresAt: st.GetInt64("expires_at"), TTLms: st.GetInt64("ttl_ms"), FencingToken: st.GetInt64("fencing_token"),
		State: st.GetText("state"), ReleaseReason: st.GetText("release_reason"), ReleasedAt: st.GetInt64("released_at"),
		Revision: st.GetInt64("valid_from"),
	}
}

func claimsBy(conn *sqlite.Conn, name string, bind func(st *sqlite.Stmt)) ([]Claim, error) {
	return queryRows(conn, name, bind, deref(scanClaim))
}

// ClaimAt returns claim id as of rev, or nil.
func ClaimAt(conn *sqlite.Conn, id string, rev int64) (*Claim, error) {
	return firstRow(claimsBy(conn, "claim_at", keyAt(":claim_id", id, rev)))
}

// LiveClaimAt returns the claim holding work at rev for a reader at now, or
// nil when the work item is free; head says rev is the log's head, which
// reads only the current held claims whose lease has not expired at now.
func LiveClaimAt(conn *sqlite.Conn, work string, rev, now int64, head bool) (*Claim, error) {
	name, bind := "claim_held_by_work_at", keyAt(":work", work, rev)
	if head {
		name, bind = "claim_live_by_work_head", func(st *sqlite.Stmt) {
			st.SetText(":work", work)
			st.SetInt64(":now", now)
		}
	}
	cs, err := claimsBy(conn, name, bind)
	if err != nil {
		return nil, err
	}
	for i := range cs {
		if cs[i].LiveAt(now) {
			return &cs[i], nil
		}
	}
	return nil, nil
}

// HeldClaimsAt lists claims in state held at rev (live or expired); head
// says rev is the log's head, which lets the read use the index of current
// held claims.
func HeldClaimsAt(conn *sqlite.Conn, rev int64, head bool) ([]Claim, error) {
	if head {
		return claimsBy(conn, "claim_held_head", func(st *sqlite.Stmt) {})
	}
	return claimsBy(conn, "claim_held_at", func(st *sqlite.Stmt) { st.SetInt64(":rev", rev) })
}

// LiveClaimsAt lists the claims holding their work at rev for a reader at
// now (held, lease not expired); head says rev is the log's head.
func LiveClaimsAt(conn *sqlite.Conn, rev, now int64, head bool) ([]Claim, error) {
	if head {
		return claimsBy(conn, "claim_live_head", func(st *sqlite.Stmt) { st.SetInt64(":now", now) })
	}
	return claimsBy(conn, "claim_live_at", func(st *sqlite.Stmt) {
		st.SetInt64(":rev", rev)
		st.SetInt64(":now", now)
	})
}

// ClaimsAt lists every claim version current at rev.
func ClaimsAt(conn *sqlite.Conn, rev int64) ([]Claim, error) {
	return claimsBy(conn, "claim_list_at", func(st *sqlite.Stmt) { st.SetInt64(":rev", rev) })
}

// SessionClaimsAt lists the claims of a session at rev, newest token first.
func SessionClaimsAt(conn *sqlite.Conn, session string, rev int64) ([]Claim, error) {
	return claimsBy(conn, "claim_by_session_at", keyAt(":session_id", session, rev))
}

// MaxFencingToken returns the highest fencing token issued for work up to
// rev (0 when none).
func MaxFencingToken(conn *sqlite.Conn, work string, rev int64) (int64, error) {
	return queryInt64(conn, "claim_max_token", "token", keyAt(":work", work, rev))
}
