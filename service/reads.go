package service

import (
	"context"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fault"
	"github.com/awr-dev/awr/projections"
	"github.com/awr-dev/awr/replay"
)

// At validates an optional --at revision and returns it, or -1 (the head)
// when at is nil. Errors: InvalidInput for a negative revision.
func At(at *int64) (int64, error) {
	if at == nil {
		return -1, nil
	}
	if *at < 0 {
		return 0, fault.New(fault.InvalidInput, "--at %d: a revision is 0 or more", *at).WithHint("awr status")
	}
	return *at, nil
}

// SessionView is `awr session show`: a session with its claims,
// checkpoints and bindings.
type SessionView struct {
	Session         projections.Session      `json:"session"`
	Claims          []projections.Claim      `json:"claims"`
	Checkpoints     []projections.Checkpoint `json:"checkpoints"`
	Bindings        []projections.Binding    `json:"bindings"`
	ProjectRevision int64                    `json:"project_revision"`
}

// ShowSession returns the session id as of revision at (-1: the head).
// Errors: NotFound for a session unknown at that revision.
func (p *Project) ShowSession(ctx context.Context, id string, at int64) (*SessionView, error) {
	v := &SessionView{}
	err := p.Store.Read(ctx, func(r *events.Reader) error {
		rev, _, err := replay.ResolveAt(r, at, p.Env.Now().UnixMilli())
		if err != nil {
			return err
		}
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

// ListOptions filters ListSessions.
type ListOptions struct {
	// Active keeps only active sessions.
	Active bool
	// Work keeps only sessions on this work item.
	Work string
	// At reads as of that revision; -1 is the head.
	At int64
}

// ListSessions lists sessions oldest first.
func (p *Project) ListSessions(ctx context.Context, opts ListOptions) (*SessionList, error) {
	out := &SessionList{Sessions: []projections.Session{}}
	err := p.Store.Read(ctx, func(r *events.Reader) error {
		rev, _, err := replay.ResolveAt(r, opts.At, p.Env.Now().UnixMilli())
		if err != nil {
			return err
		}
		out.ProjectRevision = rev
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

// ClientView is `awr client show`.
type ClientView struct {
	Binding         *projections.Binding `json:"binding"`
	ProjectRevision int64                `json:"project_revision"`
}

// ShowClient returns what a host conversation is bound to.
// Errors: NotFound when it is not bound at that revision.
func (p *Project) ShowClient(ctx context.Context, externalSession string, at int64) (*ClientView, error) {
	v := &ClientView{}
	err := p.Store.Read(ctx, func(r *events.Reader) error {
		rev, _, err := replay.ResolveAt(r, at, p.Env.Now().UnixMilli())
		if err != nil {
			return err
		}
		v.ProjectRevision = rev
		v.Binding, err = projections.BindingAt(r.Conn, externalSession, rev)
		if err == nil && v.Binding == nil {
			err = fault.New(fault.NotFound, "client show: %s is not bound", externalSession).With("external_session", externalSession).
				WithHint("awr client bind --client NAME --external-session %s --work KEY --session ID", externalSession)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return v, nil
}
