package commands

import (
	"context"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
	"zombiezen.com/go/sqlite"
)

// HostClients are the clients whose conversation ids awr takes as the host
// reports them (a hook's session_id): a binding of one is keyed
// "CLIENT:ID", so the ids of different hosts never collide. Any other
// client name is generic and names its conversation as HOST:ID itself.
var HostClients = []string{"claude", "codex", "gemini", "opencode"}

func isHostClient(client string) bool {
	for _, c := range HostClients {
		if c == client {
			return true
		}
	}
	return false
}

// ConversationKey returns the key of a host conversation: "CLIENT:ID" for
// a client of HostClients given the id as the host reports it, the
// "HOST:ID" given for any other (generic) client. The key names the
// binding and its stream ("client/<key>").
// Errors: InvalidInput for an id that is empty, a host client's id given
// with its own prefix, a generic id that is not HOST:ID, or a generic id
// whose HOST is one of HostClients (bind it with that client instead).
func ConversationKey(op, client, external string) (string, error) {
	if isHostClient(client) {
		if strings.TrimSpace(external) == "" {
			return "", fault.New(fault.InvalidInput, "%s: external_session is required", op).With("field", "external_session")
		}
		if rest, ok := strings.CutPrefix(external, client+":"); ok {
			return "", fault.New(fault.InvalidInput, "%s: give --external-session as %s reports it, without the %s: prefix (%q)", op, client, client, rest).
				With("field", "external_session")
		}
		return client + ":" + external, nil
	}
	host, id, ok := strings.Cut(external, ":")
	if !ok || host == "" || id == "" {
		return "", fault.New(fault.InvalidInput, "%s: --external-session %q is not HOST:ID", op, external).With("field", "external_session")
	}
	if isHostClient(host) {
		return "", fault.New(fault.InvalidInput, "%s: %s is a known client: give --client %s --external-session %s", op, host, host, id).
			With("field", "client")
	}
	return external, nil
}

// BindRequest ties a host conversation to an awr session.
type BindRequest struct {
	Client          string `name:"client" required:"" json:"client" help:"The host: claude, codex, gemini or opencode (the id as the host reports it), or generic (any other name; the id as HOST:ID)." placeholder:"NAME"`
	ExternalSession string `name:"external-session" required:"" json:"external_session" help:"The host's conversation id: as claude, codex, gemini or opencode report it; HOST:ID for a generic client." placeholder:"ID"`
	Work            string `name:"work" required:"" json:"work" help:"Work item key." placeholder:"KEY"`
	SessionID       string `name:"session" json:"session,omitempty" help:"Bind to this session." placeholder:"ID"`
	FromSession     string `name:"from-session" json:"from_session,omitempty" help:"Bind to the latest successor of this session that was resumed for this conversation." placeholder:"ID"`
	WriteMeta
}

// BindingView is a binding with what a host needs to continue.
type BindingView struct {
	Client string `json:"client"`
	// ExternalSession is the conversation's key (see ConversationKey).
	ExternalSession string `json:"external_session"`
	SessionID       string `json:"session_id"`
	Work            string `json:"work"`
	CheckpointID    string `json:"checkpoint_id"`
	NextAction      string `json:"next_action"`
	// OpenLoops are the work item's open loops, with their ids: the first
	// DefaultPage of them, in the order session show pages them;
	// OpenLoopsTotal counts every one, and when more follow,
	// OpenLoopsNextCursor is session show's --knowledge-cursor of the next
	// page and OpenLoopsNextCommand that whole command.
	OpenLoops            []projections.Knowledge `json:"open_loops"`
	OpenLoopsTotal       int                     `json:"open_loops_total"`
	OpenLoopsNextCursor  string                  `json:"open_loops_next_cursor,omitempty"`
	OpenLoopsNextCommand string                  `json:"open_loops_next_command,omitempty"`
	ContextHash          string                  `json:"context_hash"`
}

// BindResult reports the binding and whether an event was written.
type BindResult struct {
	Replay
	Binding         BindingView `json:"binding"`
	Changed         bool        `json:"changed"`
	ProjectRevision int64       `json:"project_revision"`
}

// BindClient binds a host conversation (keyed by ConversationKey) to a
// session: the one named, or the latest successor of FromSession, or (when
// neither is given) the latest successor of the session it is already
// bound to. A binding follows a resume only when the resume was made for
// this conversation (its session_resumed names it, see
// ResumeRequest.ExternalSession): a stale conversation cannot write into
// the session another agent resumed. Binding an active session renews the
// lease of the claim it holds (see renewHeld). Binding to the session it
// already points at writes no client_bound.
// Errors: InvalidInput for missing or malformed fields, an unbound
// conversation without a session, or a session of another work item;
// NotFound for an unknown session; InvalidTransition when following would
// cross a resume made for another conversation (details name the
// successor and its agent).
func BindClient(ctx context.Context, env *Env, req BindRequest) (*BindResult, error) {
	for _, f := range [][2]string{{"client", req.Client}, {"external_session", req.ExternalSession}, {"work", req.Work}} {
		if err := required(f[0], f[1]); err != nil {
			return nil, err
		}
	}
	key, err := ConversationKey("bind client", req.Client, req.ExternalSession)
	if err != nil {
		return nil, err
	}
	if err := refuseSecrets("bind client", [2]string{"client", req.Client}, [2]string{"external_session", req.ExternalSession}); err != nil {
		return nil, err
	}
	if req.SessionID != "" && req.FromSession != "" {
		return nil, fault.New(fault.InvalidInput, "bind client: give --session or --from-session, not both")
	}
	stream := "client/" + key
	return write(ctx, env, req.Client, req.WriteMeta, []string{stream}, req, func(tx *events.Tx) (*BindResult, error) {
		rev := tx.Head()
		if err := KnownWork(tx.Conn, "bind client", req.Work, rev); err != nil {
			return nil, err
		}
		cur, err := projections.BindingAt(tx.Conn, key, rev)
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
			return nil, fault.New(fault.InvalidInput, "bind client: %s is not bound yet; name --session or --from-session", key).
				WithHint("awr session list --active --work %s", req.Work)
		}
		if req.SessionID == "" {
			if target, err = follow(tx.Conn, rev, "bind client", key, target); err != nil {
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
		view, err := bindingView(tx.Conn, tx.Head(), "", req.Client, key, s)
		if err != nil {
			return nil, err
		}
		res := &BindResult{Binding: *view}
		if cur == nil || cur.SessionID != s.ID || cur.Client != req.Client || cur.CheckpointID != view.CheckpointID {
			if _, err := tx.Append(events.NewEvent{Stream: stream, Payload: events.ClientBound{
				Client: req.Client, ExternalSession: key, SessionID: s.ID, Work: s.Work, CheckpointID: view.CheckpointID,
			}}); err != nil {
				return nil, err
			}
			res.Changed = true
		}
		res.ProjectRevision = tx.Head()
		return res, nil
	})
}

// resumedFor returns the conversation key the resume that created session
// id was made for ("" when it named none), read from the log at rev.
func resumedFor(conn *sqlite.Conn, rev int64, id string) (string, error) {
	e, err := events.LastOfKind(conn, "session/"+id, events.KindSessionResumed, 0)
	if err != nil || e == nil || e.Seq > rev {
		return "", err
	}
	v, err := events.Decode(e)
	if err != nil {
		return "", err
	}
	return v.(*events.SessionResumed).ExternalSession, nil
}

// follow walks successor links from session id to the newest, as
// conversation key may: it crosses a resume only when that resume was made
// for key. op prefixes the error.
// Errors: InvalidTransition naming the first successor (and its agent)
// whose resume was made for another conversation, or for none.
func follow(conn *sqlite.Conn, rev int64, op, key, id string) (string, error) {
	seen := map[string]bool{}
	for !seen[id] {
		seen[id] = true
		s, err := projections.SessionAt(conn, id, rev)
		if err != nil {
			return "", err
		}
		if s == nil || s.SuccessorID == "" {
			return id, nil
		}
		forKey, err := resumedFor(conn, rev, s.SuccessorID)
		if err != nil {
			return "", err
		}
		if forKey != key {
			return "", staleError(conn, rev, op, key, s, forKey)
		}
		id = s.SuccessorID
	}
	return id, nil
}

// staleError refuses conversation key a successor of s it was not resumed for.
func staleError(conn *sqlite.Conn, rev int64, op, key string, s *projections.Session, forKey string) error {
	agent := ""
	if succ, err := projections.SessionAt(conn, s.SuccessorID, rev); err != nil {
		return err
	} else if succ != nil {
		agent = succ.Agent
	}
	whom := "no conversation"
	if forKey != "" {
		whom = forKey
	}
	return fault.New(fault.InvalidTransition, "%s: session %s was resumed by %s (agent %s) for %s; %s cannot follow it there",
		op, s.ID, s.SuccessorID, agent, whom, key).
		With("session_id", s.ID).With("successor_id", s.SuccessorID).With("successor_agent", agent).
		With("external_session", key).With("resumed_for", forKey).
		WithHint("awr recovery inspect --session %s", s.SuccessorID)
}

// bindingView assembles what a host needs from a session at rev: its
// latest checkpoint (its own, or the one it inherited), and the first page
// of its work item's open loops; at is what the next page's command adds
// to read at rev (" --at REV", or "" at the head).
func bindingView(conn *sqlite.Conn, rev int64, at, client, external string, s *projections.Session) (*BindingView, error) {
	v := &BindingView{Client: client, ExternalSession: external, SessionID: s.ID, Work: s.Work, ContextHash: s.LastContextHash}
	cpID := s.LastCheckpointID
	for cur := s; cpID == "" && cur != nil && cur.PredecessorID != ""; {
		prev, err := projections.SessionAt(conn, cur.PredecessorID, rev)
		if err != nil {
			return nil, err
		}
		cur = prev
		if prev != nil {
			cpID = prev.LastCheckpointID
		}
	}
	if cpID != "" {
		cp, err := projections.CheckpointAt(conn, cpID, rev)
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
	k, err := projections.KnowledgeStateAt(conn, s.Work, rev, rev)
	if err != nil {
		return nil, err
	}
	loops, total, last := (&projections.KnowledgeState{OpenLoops: k.OpenLoops}).InForcePage(nil, DefaultPage)
	v.OpenLoops, v.OpenLoopsTotal = loops.OpenLoops, total
	if last != nil {
		v.OpenLoopsNextCursor, v.OpenLoopsNextCommand = KnowledgeNext(s.ID, *last, at)
	}
	return v, nil
}

// SuccessorView is the session that resumed the one a binding points at.
type SuccessorView struct {
	SessionID string `json:"session_id"`
	Agent     string `json:"agent"`
	// ResumedFor is the conversation the resume was made for, "" for none.
	ResumedFor string `json:"resumed_for"`
	// MayFollow says a bare re-bind of the conversation follows the
	// resume (the resume was made for it); otherwise it is refused.
	MayFollow bool `json:"may_follow"`
}

// BindingSummary returns what the host of binding b needs to continue, as
// of rev: the bound session's checkpoint, next action, open loops (a
// page; at is what the next page's command adds to read at rev: " --at
// REV", or "" at the head) and context hash, and, when that session has
// been resumed, its successor and whether the conversation may follow
// it.
// Errors: NotFound when the bound session is missing at rev.
func BindingSummary(conn *sqlite.Conn, rev int64, at string, b *projections.Binding) (*BindingView, *SuccessorView, error) {
	s, err := projections.SessionAt(conn, b.SessionID, rev)
	if err != nil {
		return nil, nil, err
	}
	if s == nil {
		return nil, nil, fault.New(fault.NotFound, "client show: session %s not found", b.SessionID).With("session_id", b.SessionID)
	}
	view, err := bindingView(conn, rev, at, b.Client, b.ExternalSession, s)
	if err != nil || s.SuccessorID == "" {
		return view, nil, err
	}
	succ := &SuccessorView{SessionID: s.SuccessorID}
	if n, err := projections.SessionAt(conn, s.SuccessorID, rev); err != nil {
		return nil, nil, err
	} else if n != nil {
		succ.Agent = n.Agent
	}
	if succ.ResumedFor, err = resumedFor(conn, rev, s.SuccessorID); err != nil {
		return nil, nil, err
	}
	succ.MayFollow = succ.ResumedFor == b.ExternalSession
	return view, succ, nil
}
