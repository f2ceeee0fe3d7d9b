package commands

import (
	"context"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fault"
	"github.com/awr-dev/awr/projections"
)

// BindRequest ties a host conversation to an awr session.
type BindRequest struct {
	Client          string `name:"client" required:"" json:"client" help:"The host (e.g. claude-code)." placeholder:"NAME"`
	ExternalSession string `name:"external-session" required:"" json:"external_session" help:"The host's conversation id, as HOST:ID." placeholder:"HOST:ID"`
	Work            string `name:"work" required:"" json:"work" help:"Work item key." placeholder:"KEY"`
	SessionID       string `name:"session" json:"session,omitempty" help:"Bind to this session." placeholder:"ID"`
	FromSession     string `name:"from-session" json:"from_session,omitempty" help:"Bind to the latest successor of this session." placeholder:"ID"`
	WriteMeta
}

// BindingView is a binding with what a host needs to continue.
type BindingView struct {
	Client          string `json:"client"`
	ExternalSession string `json:"external_session"`
	SessionID       string `json:"session_id"`
	Work            string `json:"work"`
	CheckpointID    string `json:"checkpoint_id"`
	NextAction      string `json:"next_action"`
	// OpenLoops are the work item's open loops, with their ids.
	OpenLoops   []projections.Knowledge `json:"open_loops"`
	ContextHash string                  `json:"context_hash"`
}

// BindResult reports the binding and whether an event was written.
type BindResult struct {
	Replay
	Binding         BindingView `json:"binding"`
	Changed         bool        `json:"changed"`
	ProjectRevision int64       `json:"project_revision"`
}

// BindClient binds external session "HOST:ID" to a session: the one named,
// the latest successor of FromSession, or (when neither is given) the
// latest successor of the session it is already bound to. Binding an
// active session renews the lease of the claim it holds (see renewHeld).
// Binding to the session it already points at writes no client_bound.
func BindClient(ctx context.Context, env *Env, req BindRequest) (*BindResult, error) {
	for _, f := range [][2]string{{"client", req.Client}, {"external_session", req.ExternalSession}, {"work", req.Work}} {
		if err := required(f[0], f[1]); err != nil {
			return nil, err
		}
	}
	if host, id, ok := strings.Cut(req.ExternalSession, ":"); !ok || host == "" || id == "" {
		return nil, fault.New(fault.InvalidInput, "bind client: --external-session %q is not HOST:ID", req.ExternalSession).With("field", "external_session")
	}
	if err := refuseSecrets("bind client", [2]string{"client", req.Client}, [2]string{"external_session", req.ExternalSession}); err != nil {
		return nil, err
	}
	if req.SessionID != "" && req.FromSession != "" {
		return nil, fault.New(fault.InvalidInput, "bind client: give --session or --from-session, not both")
	}
	stream := "client/" + req.ExternalSession
	return write(ctx, env, req.Client, req.WriteMeta, []string{stream}, req, func(tx *events.Tx) (*BindResult, error) {
		rev := tx.Head()
		cur, err := projections.BindingAt(tx.Conn, req.ExternalSession, rev)
		if err != nil {
			return nil, err
		}
		target := req.SessionID
		switch {
		case target != "":
		case req.FromSession != "":
			target = req.FromSession
		case cur != nil:
			target = cur.SessionID
		default:
			return nil, fault.New(fault.InvalidInput, "bind client: %s is not bound yet; name --session or --from-session", req.ExternalSession).
				WithHint("awr session list --active --work %s", req.Work)
		}
		if req.SessionID == "" {
			if target, err = latestSuccessor(tx, target); err != nil {
				return nil, err
			}
		}
		s, err := projections.SessionAt(tx.Conn, target, rev)
		if err != nil {
			return nil, err
		}
		if s == nil {
			return nil, fault.New(fault.NotFound, "bind client: session %s not found", target).With("session_id", target).WithHint("awr session list")
		}
		if s.Work != req.Work {
			return nil, fault.New(fault.InvalidInput, "bind client: session %s works on %s, not %s", s.ID, s.Work, req.Work).With("session_id", s.ID).With("work", s.Work)
		}
		// A bind is the holder's sign of life: it renews the lease of the
		// claim an active session holds.
		if s.Status == projections.SessionActive {
			if err := renewHeld(tx, s); err != nil {
				return nil, err
			}
		}
		view, err := bindingView(tx, req.Client, req.ExternalSession, s)
		if err != nil {
			return nil, err
		}
		res := &BindResult{Binding: *view}
		if cur == nil || cur.SessionID != s.ID || cur.Client != req.Client || cur.CheckpointID != view.CheckpointID {
			if _, err := tx.Append(events.NewEvent{Stream: stream, Payload: events.ClientBound{
				Client: req.Client, ExternalSession: req.ExternalSession, SessionID: s.ID, Work: s.Work, CheckpointID: view.CheckpointID,
			}}); err != nil {
				return nil, err
			}
			res.Changed = true
		}
		res.ProjectRevision = tx.Head()
		return res, nil
	})
}

// latestSuccessor follows successor links from session id to the newest.
func latestSuccessor(tx *events.Tx, id string) (string, error) {
	seen := map[string]bool{}
	for !seen[id] {
		seen[id] = true
		s, err := projections.SessionAt(tx.Conn, id, tx.Head())
		if err != nil {
			return "", err
		}
		if s == nil || s.SuccessorID == "" {
			return id, nil
		}
		id = s.SuccessorID
	}
	return id, nil
}

// bindingView assembles what a host needs from a session: its latest
// checkpoint (its own, or the one it inherited).
func bindingView(tx *events.Tx, client, external string, s *projections.Session) (*BindingView, error) {
	v := &BindingView{Client: client, ExternalSession: external, SessionID: s.ID, Work: s.Work, ContextHash: s.LastContextHash}
	cpID := s.LastCheckpointID
	for cur := s; cpID == "" && cur != nil && cur.PredecessorID != ""; {
		prev, err := projections.SessionAt(tx.Conn, cur.PredecessorID, tx.Head())
		if err != nil {
			return nil, err
		}
		cur = prev
		if prev != nil {
			cpID = prev.LastCheckpointID
		}
	}
	if cpID != "" {
		cp, err := projections.CheckpointAt(tx.Conn, cpID, tx.Head())
		if err != nil {
			return nil, err
		}
		if cp != nil {
			v.CheckpointID, v.NextAction = cp.ID, cp.NextAction
			if v.ContextHash == "" {
				v.ContextHash = cp.ContextHash
			}
		}
	}
	k, err := projections.KnowledgeStateAt(tx.Conn, s.Work, tx.Head(), tx.Head())
	if err != nil {
		return nil, err
	}
	v.OpenLoops = k.OpenLoops
	return v, nil
}
