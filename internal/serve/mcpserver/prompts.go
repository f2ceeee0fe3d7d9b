package mcpserver

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/project"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ResumeWorkPrompt is the prompt that hands an agent a session's or a
// work item's context packet with the steps of a proven handoff.
const ResumeWorkPrompt = "resume_work"

// registerPrompts adds resume_work.
func (s *Server) registerPrompts() {
	s.mcp.AddPrompt(&mcp.Prompt{Name: ResumeWorkPrompt, Title: "Resume work",
		Description: "Resume a session or a work item: its context packet (read, not recorded) and the exact awr steps to continue it, " +
			"restate the handoff and prove it with `awr recovery verify`, and checkpoint with `awr session checkpoint`. Give session or work.",
		Arguments: []*mcp.PromptArgument{
			{Name: "session", Title: "Session id", Description: "The session to resume (awr session list --active); its chain's packet is used."},
			{Name: "work", Title: "Work item key", Description: "The work item to resume when no session is given (awr ready)."},
		}}, s.resumeWork)
}

// resumeWork answers prompts/get resume_work. Bad arguments are
// invalid-params errors carrying awr's InvalidInput; an unknown session or
// work item carries NotFound.
func (s *Server) resumeWork(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	args := req.Params.Arguments
	var unknown []string
	for k := range args {
		if k != "session" && k != "work" {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	session, work := strings.TrimSpace(args["session"]), strings.TrimSpace(args["work"])
	var bad *fault.Error
	switch {
	case len(unknown) > 0:
		bad = fault.New(fault.InvalidInput, "%s: unknown argument(s): %s", ResumeWorkPrompt, strings.Join(unknown, ", ")).
			With("unknown_arguments", unknown).With("accepted_arguments", []string{"session", "work"})
	case session == "" && work == "":
		bad = fault.New(fault.InvalidInput, "%s: give session or work", ResumeWorkPrompt).With("accepted_arguments", []string{"session", "work"})
	case session != "" && work != "":
		bad = fault.New(fault.InvalidInput, "%s: give session or work, not both", ResumeWorkPrompt).With("accepted_arguments", []string{"session", "work"})
	}
	if bad != nil {
		return nil, rpcError(jsonrpc.CodeInvalidParams, bad.WithHint("awr session list --active"), "")
	}
	project.WarmTokenizer()
	packet, err := s.project.ContextPacket(ctx, project.ContextPacketRequest{Session: session, Work: work})
	if err != nil {
		return nil, s.promptError(err)
	}
	work = packet.WorkContext.Work
	uri := WorkContextURI(work)
	var steps string
	if session != "" {
		uri = SessionContextURI(session)
		rep, err := s.project.RecoveryInspect(ctx, project.RecoveryInspectRequest{Session: session})
		if err != nil {
			return nil, s.promptError(err)
		}
		steps = sessionSteps(rep, work)
	} else {
		list, err := s.project.SessionList(ctx, project.SessionListRequest{Work: work, All: true})
		if err != nil {
			return nil, s.promptError(err)
		}
		var rep *project.RecoveryReport
		if n := len(list.Sessions); n > 0 {
			if rep, err = s.project.RecoveryInspect(ctx, project.RecoveryInspectRequest{Session: list.Sessions[n-1].ID}); err != nil {
				return nil, s.promptError(err)
			}
		}
		steps = workSteps(rep, work)
	}
	desc := fmt.Sprintf("Resume %s as of project_revision %d", work, packet.ProjectRevision)
	if session != "" {
		desc = fmt.Sprintf("Resume session %s on %s as of project_revision %d", session, work, packet.ProjectRevision)
	}
	return &mcp.GetPromptResult{Description: desc, Messages: []*mcp.PromptMessage{
		{Role: "user", Content: &mcp.TextContent{Text: "The awr context packet (" + uri + ", read without recording it):\n\n" + packet.WorkContext.RenderedContext}},
		{Role: "user", Content: &mcp.TextContent{Text: steps}},
	}}, nil
}

// promptError is the JSON-RPC error of a prompt the door refused:
// InvalidInput, Usage and NotFound are invalid params, anything else an
// internal error; its data is awr's error object.
func (s *Server) promptError(err error) error {
	s.debug("prompt error", err)
	code := int64(jsonrpc.CodeInternalError)
	switch fault.CodeOf(err) {
	case fault.NotFound, fault.InvalidInput, fault.Usage:
		code = jsonrpc.CodeInvalidParams
	}
	return rpcError(code, err, "")
}

// sessionSteps are the steps of resuming session rep.Session.
func sessionSteps(rep *project.RecoveryReport, work string) string {
	s := rep.Session
	var b strings.Builder
	fmt.Fprintf(&b, "You are resuming awr session %s on %s (status %s", s.ID, work, s.Status)
	if s.Outcome != "" {
		fmt.Fprintf(&b, ", outcome %s", s.Outcome)
	}
	fmt.Fprintf(&b, ") as of project_revision %d. awr's next step for it: `%s`.\n\n", rep.ProjectRevision, rep.NextStep)
	id := s.ID
	if s.Status != "active" {
		id = "NEW_ID"
		fmt.Fprintf(&b, "1. The session has ended: continue it in a successor, `awr session resume --from-session %s --agent NAME --provider NAME --model LABEL` (tool awr_session_resume, from_session %q). Use the successor's id as NEW_ID below.\n", s.ID, s.ID)
	} else {
		b.WriteString("1. The session is active: continue in it.\n")
	}
	b.WriteString(commonSteps(id, work))
	return b.String()
}

// workSteps are the steps of resuming work, whose latest session (if
// any) is rep.Session.
func workSteps(rep *project.RecoveryReport, work string) string {
	var b strings.Builder
	id := "ID"
	switch {
	case rep == nil:
		fmt.Fprintf(&b, "You are starting work item %s; no session has worked on it yet.\n\n", work)
		fmt.Fprintf(&b, "1. Start a session with a claim: `awr session start --work %s --agent NAME --provider NAME --model LABEL --claim` (tool awr_session_start, claim true). Use its id as ID below.\n", work)
	case rep.Session.Status == "active":
		fmt.Fprintf(&b, "You are resuming work item %s. Its latest session %s (agent %s) is active; awr's next step for it: `%s`.\n\n", work, rep.Session.ID, project.SafeText(rep.Session.Agent), rep.NextStep)
		fmt.Fprintf(&b, "1. If you are that session's agent, continue in it (ID = %s); otherwise `awr recovery inspect --session %s` says who holds the claim, and the prompt resume_work with session %q gives its packet.\n", rep.Session.ID, rep.Session.ID, rep.Session.ID)
		id = rep.Session.ID
	default:
		fmt.Fprintf(&b, "You are resuming work item %s. Its latest session %s ended (outcome %s); awr's next step: `%s`.\n\n", work, rep.Session.ID, rep.Session.Outcome, rep.NextStep)
		fmt.Fprintf(&b, "1. Continue it in a successor: `awr session resume --from-session %s --agent NAME --provider NAME --model LABEL` (tool awr_session_resume); or, for completed work, pick other work with `awr ready`. Use the successor's id as ID below.\n", rep.Session.ID)
	}
	b.WriteString(commonSteps(id, work))
	return b.String()
}

// commonSteps are the steps after the session is known: compile and
// record the packet, prove the handoff, checkpoint, end.
func commonSteps(id, work string) string {
	return fmt.Sprintf(`2. Compile and record the packet for your session, so a checkpoint can prove which context it was based on: `+"`awr context compile --work %[2]s --session %[1]s --json`"+` (tool awr_context_compile with work and session); keep its context_hash. The packet above was only read: its hash is not recorded.
3. Before changing anything, restate the handoff as JSON with exactly these fields: {"next_action": "...", "open_loops": ["L-1", "..."], "decisions": ["D-1", "..."], "files_touched": ["path", "..."], "remaining_check": "..."} (loops and decisions as ids or texts), and prove it: `+"`awr recovery verify --session %[1]s --input FILE`"+` (or --input - for stdin; tool awr_recovery_verify). The verdict must be verified; on attention_required, read each item (match, missing, extra, mismatch, closed, unverifiable) against the packet and the repository before going on.
4. Do the next action the packet names, and only what the work item asks.
5. After each meaningful step, checkpoint: `+"`awr session checkpoint --session %[1]s --agent NAME --digest 'what was actually done' --next-action 'the exact next action' --context-hash HASH`"+`, adding --open-loop TEXT, --resolve-loop ID[=RESOLUTION], --drop-loop ID[=REASON], --decision TEXT, --fact TEXT or --hypothesis TEXT as they apply (tool awr_session_checkpoint). The digest says only what was done: never that tests passed unless they ran.
6. When you stop: `+"`awr session end --session %[1]s --outcome completed|incomplete|interrupted|abandoned --agent NAME`"+` (tool awr_session_end).
`, id, work)
}
