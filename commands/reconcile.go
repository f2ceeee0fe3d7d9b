package commands

import (
	"context"
	"slices"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
	"zombiezen.com/go/sqlite"
)

// ReconcileRequest adopts, as a seat's session, the successor someone
// resumed from the seat's session by hand.
type ReconcileRequest struct {
	Address string `arg:"" name:"address" json:"address" help:"Seat address ROLE@RIG." placeholder:"ROLE@RIG"`
	// Session is the session to adopt; empty adopts the newest session of
	// the chain that continues the seat's session.
	Session string `name:"session" json:"session,omitempty" help:"The session to adopt (default: the newest session continuing the seat's)." placeholder:"ID"`
	By      string `name:"by" json:"by,omitempty" help:"Who adopts it (recorded in the log; default: your login name)." placeholder:"NAME"`
	Reason  string `name:"reason" required:"" json:"reason" help:"Why the hand-resumed session is the seat's (recorded in the log)." placeholder:"TEXT"`
	WriteMeta
	// Repo is the seat's repository now (nil outside a git work tree),
	// recorded as the reference the next restore compares with. The rig
	// manager fills it.
	Repo *events.SeatRepo `kong:"-" json:"-"`
}

// ReconcileResult is the seat after the adoption.
type ReconcileResult struct {
	Replay
	Address     string `json:"address"`
	FromSession string `json:"from_session"`
	SessionID   string `json:"session_id"`
	// Chain lists the sessions from the seat's old one to the adopted one.
	Chain []string `json:"chain"`
	// Agent is the agent the adopted session was resumed for.
	Agent           string            `json:"agent"`
	SessionActive   bool              `json:"session_active"`
	ClaimID         string            `json:"claim_id,omitempty"`
	Conversation    string            `json:"conversation,omitempty"`
	By              string            `json:"by"`
	Reason          string            `json:"reason"`
	Seat            *projections.Seat `json:"seat"`
	ProjectRevision int64             `json:"project_revision"`
}

// ReconcileSeat records that the session resumed from the seat's session
// by hand (directly or through further resumes) is now the seat's
// (seat_reconciled, actor By): the next `rig up` finds the seat running in
// it, or resumes from it, instead of refusing to resume the seat's old
// session a second time. It types nothing into the seat's pane.
// Errors: InvalidInput for a malformed address, an empty reason or by, or
// a --session outside the seat's chain; RuleViolation for a reason that
// holds a secret; NotFound for an unknown seat; InvalidTransition when the
// seat's session was never resumed by hand (nothing to adopt) or the
// session to adopt belongs to another seat.
func ReconcileSeat(ctx context.Context, env *Env, req ReconcileRequest) (*ReconcileResult, error) {
	_, rig, err := ParseAddress(req.Address)
	if err != nil {
		return nil, err
	}
	if err := required("reason", req.Reason); err != nil {
		return nil, err
	}
	if err := required("by", req.By); err != nil {
		return nil, err
	}
	if err := refuseSecrets("seat reconcile", [2]string{"reason", req.Reason}, [2]string{"by", req.By}); err != nil {
		return nil, err
	}
	return write(ctx, env, req.By, req.WriteMeta, []string{"seat/" + req.Address}, req, func(tx *events.Tx) (*ReconcileResult, error) {
		rev := tx.Head()
		cur, err := RequireSeat(tx.Conn, req.Address, rev)
		if err != nil {
			return nil, err
		}
		if cur.SessionID == "" {
			return nil, fault.New(fault.InvalidTransition, "seat reconcile: %s was never launched, so it has no session to adopt a successor of", req.Address).
				With("address", req.Address).WithHint("awr rig up %s", rig)
		}
		chain, err := SuccessorChain(tx.Conn, cur.SessionID, rev)
		if err != nil {
			return nil, err
		}
		if len(chain) == 1 {
			return nil, fault.New(fault.InvalidTransition, "seat reconcile: %s's session %s was never resumed by hand, so there is nothing to adopt", req.Address, cur.SessionID).
				With("address", req.Address).With("session_id", cur.SessionID).WithHint("awr rig ps %s", rig)
		}
		if req.Session != "" {
			i := slices.Index(chain, req.Session)
			if i < 1 {
				return nil, fault.New(fault.InvalidInput, "seat reconcile: --session %s does not continue %s's session %s (its successors: %s)", req.Session, req.Address, cur.SessionID, strings.Join(chain[1:], ", ")).
					With("field", "session").With("chain", chain).WithHint("awr seat reconcile %s --session %s --reason 'WHAT YOU CHECKED'", req.Address, chain[len(chain)-1])
			}
			chain = chain[:i+1]
		}
		adopt := chain[len(chain)-1]
		if other, err := projections.SeatOfSession(tx.Conn, adopt); err != nil {
			return nil, err
		} else if other != "" && other != req.Address {
			return nil, fault.New(fault.InvalidTransition, "seat reconcile: session %s belongs to seat %s", adopt, other).
				With("address", req.Address).With("session_id", adopt).With("seat", other).WithHint("awr seat show %s", other)
		}
		s, err := projections.SessionAt(tx.Conn, adopt, rev)
		if err != nil {
			return nil, err
		}
		pl := events.SeatReconciled{Address: req.Address, Rig: rig, FromSession: cur.SessionID, SessionID: adopt,
			SessionActive: s.Status == projections.SessionActive, Repo: req.Repo, By: req.By, Reason: req.Reason}
		if pl.SessionActive {
			if cl, err := projections.LiveClaimAt(tx.Conn, cur.Work, rev, env.Now().UnixMilli(), true); err != nil {
				return nil, err
			} else if cl != nil && cl.SessionID == adopt {
				pl.ClaimID = cl.ID
			}
		}
		if bs, err := projections.SessionBindingsAt(tx.Conn, adopt, rev); err != nil {
			return nil, err
		} else if b := latestBinding(bs); b != nil {
			pl.Host, pl.Conversation, _ = strings.Cut(b.ExternalSession, ":")
		}
		if _, err := tx.Append(events.NewEvent{Stream: "seat/" + req.Address, Payload: pl}); err != nil {
			return nil, err
		}
		res := &ReconcileResult{Address: req.Address, FromSession: cur.SessionID, SessionID: adopt, Chain: chain, Agent: s.Agent,
			SessionActive: pl.SessionActive, ClaimID: pl.ClaimID, Conversation: pl.Conversation, By: req.By, Reason: req.Reason, ProjectRevision: tx.Head()}
		if res.Seat, err = projections.SeatAt(tx.Conn, req.Address, tx.Head()); err != nil {
			return nil, err
		}
		return res, nil
	})
}

// SuccessorChain lists session and the sessions that continue it, one
// resume after another, as of rev: [session, its successor, ...].
// Errors: NotFound for an unknown session.
func SuccessorChain(conn *sqlite.Conn, session string, rev int64) ([]string, error) {
	chain := []string{session}
	seen := map[string]bool{session: true}
	for id := session; ; {
		s, err := projections.SessionAt(conn, id, rev)
		if err != nil {
			return nil, err
		}
		if s == nil {
			return nil, fault.New(fault.NotFound, "session %s not found", id).With("session_id", id).WithHint("awr session list")
		}
		if s.SuccessorID == "" || seen[s.SuccessorID] {
			return chain, nil
		}
		id = s.SuccessorID
		seen[id] = true
		chain = append(chain, id)
	}
}

func latestBinding(bs []projections.Binding) *projections.Binding {
	var out *projections.Binding
	for i := range bs {
		if out == nil || bs[i].Revision > out.Revision {
			out = &bs[i]
		}
	}
	return out
}
