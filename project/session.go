package project

import (
	"context"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fault"
	"github.com/awr-dev/awr/projections"
)

// SessionView is `awr session show`: a session with its claims,
// checkpoints and bindings.
type SessionView struct {
	Session     projections.Session      `json:"session"`
	Claims      []projections.Claim      `json:"claims"`
	Checkpoints []projections.Checkpoint `json:"checkpoints"`
	Bindings    []projections.Binding    `json:"bindings"`
	// Knowledge is the session's work item's loops, decisions, facts and
	// hypotheses at the revision.
	Knowledge       *projections.KnowledgeState `json:"knowledge"`
	ProjectRevision int64                       `json:"project_revision"`
}

// SessionShowRequest is `awr session show` and awr_session_show.
type SessionShowRequest struct {
	Session string `arg:"" name:"session" json:"session" help:"Session id." placeholder:"ID"`
	Read
}

// SessionShow returns a session with its claims, checkpoints and bindings
// as of the request's revision.
// Errors: NotFound for a session unknown at that revision.
func (p *Project) SessionShow(ctx context.Context, req SessionShowRequest) (*SessionView, error) {
	id := req.Session
	v := &SessionView{}
	err := p.read(ctx, req.Read, func(r *events.Reader, rev, _ int64) error {
		v.ProjectRevision = rev
		s, err := projections.SessionAt(r.Conn, id, rev)
		if err != nil {
			return err
		}
		if s == nil {
			return fault.New(fault.NotFound, "session show: session %s not found at revision %d", id, rev).With("session_id", id).WithHint("awr session list")
		}
		v.Session = *s
		if v.Claims, err = projections.SessionClaimsAt(r.Conn, s.ID, rev); err != nil {
			return err
		}
		if v.Checkpoints, err = projections.SessionCheckpointsAt(r.Conn, s.ID, rev); err != nil {
			return err
		}
		since := rev
		if n := len(v.Checkpoints); n > 0 {
			since = v.Checkpoints[n-1].Seq - 1
		}
		if v.Knowledge, err = projections.KnowledgeStateAt(r.Conn, s.Work, rev, since); err != nil {
			return err
		}
		v.Bindings, err = projections.SessionBindingsAt(r.Conn, s.ID, rev)
		return err
	})
	if err != nil {
		return nil, err
	}
	if v.Claims == nil {
		v.Claims = []projections.Claim{}
	}
	if v.Checkpoints == nil {
		v.Checkpoints = []projections.Checkpoint{}
	}
	if v.Bindings == nil {
		v.Bindings = []projections.Binding{}
	}
	return v, nil
}

// SessionList is `awr session list`.
type SessionList struct {
	Sessions        []projections.Session `json:"sessions"`
	ProjectRevision int64                 `json:"project_revision"`
}

// SessionListRequest is `awr session list` and awr_session_list.
type SessionListRequest struct {
	Active bool   `name:"active" json:"active,omitempty" help:"Only active sessions."`
	Work   string `name:"work" json:"work,omitempty" help:"Only sessions on this work item." placeholder:"KEY"`
	Read
}

// SessionList lists sessions oldest first.
func (p *Project) SessionList(ctx context.Context, opts SessionListRequest) (*SessionList, error) {
	out := &SessionList{Sessions: []projections.Session{}}
	err := p.read(ctx, opts.Read, func(r *events.Reader, rev, _ int64) error {
		out.ProjectRevision = rev
		if opts.Work != "" {
			if err := commands.KnownWork(r.Conn, "session list", opts.Work, rev); err != nil {
				return err
			}
		}
		ss, err := projections.SessionsAt(r.Conn, rev, opts.Work)
		for _, s := range ss {
			if !opts.Active || s.Status == projections.SessionActive {
				out.Sessions = append(out.Sessions, s)
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ClientView is `awr client show`: the binding, what its host needs to
// continue (Summary: checkpoint, next action, open loops, context hash,
// the same view client bind returns) and, when the bound session has been
// resumed, its successor and whether the conversation may follow it.
type ClientView struct {
	Binding         *projections.Binding    `json:"binding"`
	Summary         *commands.BindingView   `json:"summary"`
	Successor       *commands.SuccessorView `json:"successor,omitempty"`
	ProjectRevision int64                   `json:"project_revision"`
}

// ClientShowRequest is `awr client show` and awr_client_show.
type ClientShowRequest struct {
	Client          string `name:"client" json:"client,omitempty" help:"The host: claude, codex or gemini (the id as the host reports it); omit it for a generic HOST:ID." placeholder:"NAME"`
	ExternalSession string `name:"external-session" required:"" json:"external_session" help:"The host's conversation id: as claude, codex or gemini report it (with --client); HOST:ID otherwise." placeholder:"ID"`
	Read
}

// ClientShow returns what a host conversation is bound to, with what its
// host needs to continue.
// Errors: InvalidInput for a malformed id (see commands.ConversationKey);
// NotFound when it is not bound at that revision.
func (p *Project) ClientShow(ctx context.Context, req ClientShowRequest) (*ClientView, error) {
	key := req.ExternalSession
	if req.Client != "" {
		var err error
		if key, err = commands.ConversationKey("client show", req.Client, req.ExternalSession); err != nil {
			return nil, err
		}
	}
	v := &ClientView{}
	err := p.read(ctx, req.Read, func(r *events.Reader, rev, _ int64) error {
		v.ProjectRevision = rev
		var err error
		v.Binding, err = projections.BindingAt(r.Conn, key, rev)
		if err == nil && v.Binding == nil {
			hint := fault.New(fault.NotFound, "client show: %s is not bound", key).With("external_session", key)
			if req.Client != "" {
				return hint.WithHint("awr client bind --client %s --external-session %s --work KEY --session ID", req.Client, req.ExternalSession)
			}
			return hint.WithHint("awr client bind --client NAME --external-session %s --work KEY --session ID", key)
		}
		if err != nil {
			return err
		}
		v.Summary, v.Successor, err = commands.BindingSummary(r.Conn, rev, v.Binding)
		return err
	})
	if err != nil {
		return nil, err
	}
	return v, nil
}
