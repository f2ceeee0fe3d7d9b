package project

import (
	"context"
	"strings"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/workcontext"
	"github.com/awr-dev/awr/projections"
)

// ContextPacketRequest asks for a context packet that is only read, never
// recorded: for a session (Session; the packet its chain's checkpoints
// give, as `context compile --session` would compile it) or for a work
// item (Work; the packet of the latest session's chain on it, as `context
// compile` without a session). It is the request of the MCP resources,
// which must not write; no CLI command takes it.
type ContextPacketRequest struct {
	Session string `json:"session,omitempty"`
	Work    string `json:"work,omitempty"`
	// Budget is the token budget (nil: workcontext.DefaultBudget).
	Budget *int `json:"budget,omitempty"`
	Read
}

// ContextPacket compiles a context packet without appending anything: no
// context_compiled event, no lease renewal, so its hash proves nothing to a
// checkpoint (compile with ContextCompile and a session for that). A
// session's packet may be read whatever the session's status, an ended
// one's too. At the head, sources that changed since they were indexed do
// not fail the read: the packet says so (completeness source_fresh false,
// "CONTEXT INCOMPLETE" in its rendering), and the repository is compared
// with the latest checkpoint's as ContextCompile does. An incomplete
// packet is returned without an error; Completeness says why. Its reads
// catch a shared log's cache up once (events.CatchUpOnce).
// Errors: InvalidInput without a session or a work item, or for a session
// on another work item than Work, or a budget out of range; NotFound for a
// session or a work item the log does not know at the revision;
// BudgetExceeded.
func (p *Project) ContextPacket(ctx context.Context, req ContextPacketRequest) (*CompileResult, error) {
	ctx = events.CatchUpOnce(ctx)
	session, work := strings.TrimSpace(req.Session), strings.TrimSpace(req.Work)
	if session == "" && work == "" {
		return nil, fault.New(fault.InvalidInput, "context packet: a session or a work item is required").WithHint("awr session list --active")
	}
	budget, err := commands.BudgetOf("context packet", req.Budget)
	if err != nil {
		return nil, err
	}
	env, err := p.Env(ctx)
	if err != nil {
		return nil, err
	}
	loopCap := env.Policy.OpenLoopCap
	if loopCap < 1 {
		loopCap = commands.DefaultOpenLoopCap
	}
	var stale []string
	var check *RepoCheck
	if !req.Past() {
		if stale, _, err = p.sourceFreshness(ctx, false); err != nil {
			return nil, err
		}
		if check, err = p.repoCheck(ctx, work, session); err != nil {
			return nil, err
		}
	}
	var res *CompileResult
	err = p.read(ctx, req.Read, func(r *events.Reader, rev, _ int64) error {
		if session != "" {
			s, err := projections.SessionAt(r.Conn, session, rev)
			if err != nil {
				return err
			}
			if s == nil {
				return fault.New(fault.NotFound, "context packet: session %s not found at revision %d", session, rev).
					With("session_id", session).WithHint("awr session list")
			}
			if work != "" && s.Work != work {
				return fault.New(fault.InvalidInput, "context packet: session %s works on %s, not %s", s.ID, s.Work, work).With("session_id", s.ID)
			}
			work = s.Work
		}
		items, err := projections.WorkItemAt(r.Conn, work, rev)
		if err != nil {
			return err
		}
		if len(items) == 0 {
			return fault.New(fault.NotFound, "context packet: work item %s not found at revision %d", work, rev).
				With("work", work).WithHint("awr ready --all")
		}
		in, err := workcontext.Gather(r.Conn, rev, rev == r.Head, work, session)
		if err != nil {
			return err
		}
		in.Budget, in.LoopCap, in.StaleSources = budget, loopCap, stale
		if check != nil && in.Latest == nil && check.SinceStart != "" {
			in.Repo = check
		}
		if check != nil && in.Latest != nil && check.SinceStart == "" {
			in.Repo = check
			if check.Checkpoint != in.Latest.ID {
				in.Repo = workcontext.Unverifiable(in.Latest.ID, in.Latest.Seq, "checkpoint "+in.Latest.ID+" was recorded while the repository was being read: read again")
			}
		}
		packet, comp, err := workcontext.Compile(in)
		if err != nil {
			return err
		}
		res = &CompileResult{WorkContext: packet, Completeness: comp, ProjectRevision: rev}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}
