package commands

import (
	"context"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/workcontext"
	"github.com/awr-dev/awr/projections"
	"zombiezen.com/go/sqlite"
)

// CompileRequest is `awr context compile` and the awr_context_compile tool.
type CompileRequest struct {
	Work    string `name:"work" required:"" json:"work" help:"Work item key." placeholder:"KEY"`
	Session string `name:"session" json:"session,omitempty" help:"Record the compile for this session, so checkpoints can prove their context (not with --at)." placeholder:"ID"`
	Budget  *int   `name:"budget" json:"budget,omitempty" help:"Token budget, o200k_base, 1 to 1000000 (default 5000)." placeholder:"N"`
	// Repo is the door's comparison of the latest checkpoint's repository
	// with the repository now. No front end sets it.
	Repo *workcontext.RepoCheck `kong:"-" json:"-"`
	Read
}

// CompileResult is the compiled packet and, when it was recorded, the seq
// of its context_compiled event.
type CompileResult struct {
	WorkContext     *workcontext.Packet       `json:"work_context"`
	Completeness    *workcontext.Completeness `json:"completeness"`
	RecordedSeq     int64                     `json:"recorded_seq,omitempty"`
	ProjectRevision int64                     `json:"project_revision"`
}

// CompileContext renders the context packet for a work item. With a
// session (at the head only) it is one command: the packet is compiled and
// its context_compiled event appended in one IMMEDIATE transaction, so the
// hash recorded is the one compiled at that revision. Without a session,
// or at a past revision, it only reads. An incomplete packet is still
// recorded and returned, together with a ContextIncomplete error.
// Errors: InvalidInput without a work item, or for a session on another
// work item; Usage for a session with an at revision; NotFound for an
// unknown session; InvalidTransition for an ended one; BudgetExceeded;
// ContextIncomplete.
func CompileContext(ctx context.Context, env *Env, req CompileRequest) (*CompileResult, error) {
	if strings.TrimSpace(req.Work) == "" {
		return nil, fault.New(fault.InvalidInput, "context compile: --work is required").With("flag", "--work")
	}
	if req.Past() && req.Session != "" {
		return nil, fault.New(fault.Usage, "context compile: --at reads the past and cannot record a compile for --session").WithHint("awr context compile --help")
	}
	budget, err := BudgetOf("context compile", req.Budget)
	if err != nil {
		return nil, err
	}
	req.Budget = &budget // the same request whether the default is said or not
	var res *CompileResult
	if req.Session == "" {
		err = env.Store.Read(ctx, func(r *events.Reader) error {
			rev, _, err := req.Resolve(r, env.Now().UnixMilli())
			if err != nil {
				return err
			}
			res, err = compileAt(r.Conn, rev, rev == r.Head, req.Work, "", compileOpts{budget: budget, loopCap: env.policy().OpenLoopCap, repo: req.Repo})
			return err
		})
	} else {
		res, err = write(ctx, env, "awr", WriteMeta{}, []string{"session/" + req.Session}, req, func(tx *events.Tx) (*CompileResult, error) {
			return compileInTx(tx, req.Work, req.Session, compileOpts{budget: budget, loopCap: env.policy().OpenLoopCap, repo: req.Repo})
		})
	}
	if err != nil {
		return nil, err
	}
	return res, incomplete(res)
}

// compileInTx compiles work's packet for an active session at the
// transaction's head and appends its context_compiled event.
func compileInTx(tx *events.Tx, work, session string, opts compileOpts) (*CompileResult, error) {
	res, err := compileAt(tx.Conn, tx.Head(), true, work, session, opts)
	if err != nil {
		return nil, err
	}
	return res, recordCompiled(tx, res, session)
}

// recordCompiled appends, as awr, the context_compiled event of a packet
// compiled at the transaction's head for an active session.
func recordCompiled(tx *events.Tx, res *CompileResult, session string) error {
	s, err := activeSession(tx, "record context", session)
	if err != nil {
		return err
	}
	if err := renewHeld(tx, s); err != nil {
		return err
	}
	held, err := holdsLive(tx, s.ID)
	if err != nil {
		return err
	}
	prev := tx.SetActor("awr")
	defer tx.SetActor(prev)
	p := res.WorkContext
	e, err := tx.Append(events.NewEvent{Stream: "session/" + s.ID, Payload: events.ContextCompiled{
		SessionID: s.ID, Work: s.Work, ContextHash: p.ContextHash, TokenEstimate: p.TokenEstimate,
		TokenBudget: p.TokenBudget, Complete: res.Completeness.Complete,
		Held: held,
	}})
	if err != nil {
		return err
	}
	res.RecordedSeq, res.ProjectRevision = e.Seq, tx.Head()
	return nil
}

// StaleError is the SourceStale error of an operation that relies on
// sources that changed since they were indexed.
func StaleError(op string, stale []string) error {
	return fault.New(fault.SourceStale, "%s: sources changed since they were indexed: %s", op, strings.Join(stale, ", ")).
		With("sources", stale).WithHint("awr source reindex")
}

// compileOpts is how a packet is compiled: its token budget (0: the
// default), the open-loop cap it warns above, and the door's comparison of
// the repository with the latest checkpoint's (nil: not compared).
type compileOpts struct {
	budget, loopCap int
	repo            *workcontext.RepoCheck
}

// compileAt compiles work's packet (for session's chain, if set) from the
// projections at rev. The repository comparison goes into the packet when
// it was made against the checkpoint the packet inherits.
func compileAt(conn *sqlite.Conn, rev int64, head bool, work, session string, opts compileOpts) (*CompileResult, error) {
	if session != "" {
		s, err := projections.SessionAt(conn, session, rev)
		if err != nil {
			return nil, err
		}
		if s == nil {
			return nil, fault.New(fault.NotFound, "context compile: session %s not found", session).With("session_id", session).WithHint("awr session list --work %s", work)
		}
		if s.Work != work {
			return nil, fault.New(fault.InvalidInput, "context compile: session %s works on %s, not %s", s.ID, s.Work, work).With("session_id", s.ID)
		}
	}
	in, err := workcontext.Gather(conn, rev, head, work, session)
	if err != nil {
		return nil, err
	}
	if in.Item == nil {
		// The same answer as session start gives for an unknown key.
		return nil, fault.New(fault.NotFound, "context compile: work item %q not found at revision %d", work, rev).
			With("work", work).WithHint("awr ready --all")
	}
	in.Budget, in.LoopCap = opts.budget, opts.loopCap
	if check := opts.repo; check != nil && in.Latest == nil && check.SinceStart != "" {
		in.Repo = check
	}
	if check := opts.repo; check != nil && in.Latest != nil && check.SinceStart == "" {
		in.Repo = check
		if check.Checkpoint != in.Latest.ID {
			in.Repo = workcontext.Unverifiable(in.Latest.ID, in.Latest.Seq, "checkpoint "+in.Latest.ID+" was recorded while the repository was being read: compile again")
		}
	}
	packet, comp, err := workcontext.Compile(in)
	if err != nil {
		return nil, err
	}
	return &CompileResult{WorkContext: packet, Completeness: comp, ProjectRevision: rev}, nil
}

// incomplete is the ContextIncomplete error of an incomplete packet, or nil.
func incomplete(res *CompileResult) error {
	if res.Completeness.Complete {
		return nil
	}
	return fault.New(fault.ContextIncomplete, "context compile: the packet for %s is incomplete: %s", res.WorkContext.Work, strings.Join(res.Completeness.Issues, "; ")).
		With("issues", res.Completeness.Issues).WithHint("awr intake inspect")
}
