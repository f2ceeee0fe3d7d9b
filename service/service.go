package service

import (
	"context"
	"sort"
	"strings"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fault"
	"github.com/awr-dev/awr/intake"
	"github.com/awr-dev/awr/projections"
	"github.com/awr-dev/awr/queries"
	"github.com/awr-dev/awr/replay"
	"github.com/awr-dev/awr/workcontext"
)

// Project is an open project: its directory, its log and the command
// environment (clock and entropy).
type Project struct {
	Dir   string
	Store *events.Store
	Env   *commands.Env
}

// StaleSources returns the manifest sources whose files changed (or
// vanished) since they were indexed. A project without a manifest has none.
func (p *Project) StaleSources(ctx context.Context) ([]string, error) {
	m, ok, err := intake.ReadManifest(p.Dir)
	if err != nil || !ok {
		return nil, err
	}
	var stale []string
	err = p.Store.Read(ctx, func(r *events.Reader) error {
		indexed, err := projections.SourcesAt(r.Conn, r.Head, true)
		if err != nil {
			return err
		}
		for _, s := range intake.Compare(p.Dir, m, indexed) {
			if s.Freshness != intake.Fresh {
				stale = append(stale, s.Path)
			}
		}
		return nil
	})
	sort.Strings(stale)
	return stale, err
}

// requireFresh fails with SourceStale naming the changed files.
func (p *Project) requireFresh(ctx context.Context, op string) error {
	stale, err := p.StaleSources(ctx)
	if err != nil {
		return err
	}
	if len(stale) > 0 {
		return fault.New(fault.SourceStale, "%s: sources changed since they were indexed: %s", op, strings.Join(stale, ", ")).
			With("sources", stale).WithHint("awr source reindex")
	}
	return nil
}

// StartSession starts a session; claiming requires fresh sources.
func (p *Project) StartSession(ctx context.Context, req commands.StartRequest) (*commands.StartResult, error) {
	if req.Claim {
		if err := p.requireFresh(ctx, "start session"); err != nil {
			return nil, err
		}
	}
	return commands.StartSession(ctx, p.Env, req)
}

// CompileResult is `awr context compile`.
type CompileResult struct {
	WorkContext     *workcontext.Packet       `json:"work_context"`
	Completeness    *workcontext.Completeness `json:"completeness"`
	RecordedSeq     int64                     `json:"recorded_seq,omitempty"`
	ProjectRevision int64                     `json:"project_revision"`
}

// CompileOptions selects what to compile.
type CompileOptions struct {
	Work    string
	Session string
	Budget  int
	// At, when >= 0, compiles as of that revision (read-only).
	At int64
}

// Compile renders the context packet for a work item. At the head it
// checks that sources are fresh (SourceStale otherwise) and, with a
// session, records the compile as a context_compiled event so checkpoints
// can prove which context they were based on. An incomplete packet is
// returned together with a ContextIncomplete error.
// Errors: NotFound for an unknown session; InvalidInput for a session on
// another work item; BudgetExceeded; SourceStale; ContextIncomplete.
func (p *Project) Compile(ctx context.Context, opts CompileOptions) (*CompileResult, error) {
	if opts.Work == "" {
		return nil, fault.New(fault.InvalidInput, "context compile: --work is required").With("flag", "--work")
	}
	if opts.At >= 0 && opts.Session != "" {
		return nil, fault.New(fault.Usage, "context compile: --at reads the past and cannot record a compile for --session").WithHint("drop --session or --at")
	}
	head := opts.At < 0
	if head {
		if err := p.requireFresh(ctx, "context compile"); err != nil {
			return nil, err
		}
	}
	res := &CompileResult{}
	var in workcontext.Input
	err := p.Store.Read(ctx, func(r *events.Reader) error {
		rev, _, err := replay.ResolveAt(r, opts.At, p.Env.Now().UnixMilli())
		if err != nil {
			return err
		}
		if opts.Session != "" {
			s, err := projections.SessionAt(r.Conn, opts.Session, rev)
			if err != nil {
				return err
			}
			if s == nil {
				return fault.New(fault.NotFound, "context compile: session %s not found", opts.Session).With("session_id", opts.Session).WithHint("awr session list --work %s", opts.Work)
			}
			if s.Work != opts.Work {
				return fault.New(fault.InvalidInput, "context compile: session %s works on %s, not %s", s.ID, s.Work, opts.Work).With("session_id", s.ID)
			}
		}
		in, err = queries.ContextInput(r.Conn, rev, opts.Work, opts.Session)
		res.ProjectRevision = rev
		return err
	})
	if err != nil {
		return nil, err
	}
	in.Budget = opts.Budget
	packet, comp, err := workcontext.Compile(in)
	if err != nil {
		return nil, err
	}
	res.WorkContext, res.Completeness = packet, comp
	if head && opts.Session != "" {
		rec, err := commands.RecordContext(ctx, p.Env, commands.ContextRecordRequest{SessionID: opts.Session, ContextHash: packet.ContextHash,
			TokenEstimate: packet.TokenEstimate, TokenBudget: packet.TokenBudget, Complete: comp.Complete})
		if err != nil {
			return nil, err
		}
		res.RecordedSeq, res.ProjectRevision = rec.Seq, rec.ProjectRevision
	}
	if !comp.Complete {
		return res, fault.New(fault.ContextIncomplete, "context compile: the packet for %s is incomplete: %s", opts.Work, strings.Join(comp.Issues, "; ")).
			With("issues", comp.Issues).WithHint("awr intake inspect")
	}
	return res, nil
}
