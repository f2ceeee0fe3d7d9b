package mcpserver

import (
	"context"
	"reflect"
	"time"

	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/project"
)

// op adapts a door method to a tool handler.
func op[In, Out any](m func(*project.Project, context.Context, In) (*Out, error)) handlerFunc[In, Out] {
	return func(ctx context.Context, p *project.Project, in In) (*Out, error) { return m(p, ctx, in) }
}

// entry is one row of the tool tables: a tool and how it is added to a
// server (add, with the handler's own request and result types).
type entry struct {
	tool
	add func(*Server, tool)
}

// toolOf makes the table row of tool t, whose body is h.
func toolOf[In, Out any](t tool, h handlerFunc[In, Out]) entry {
	return entry{tool: t, add: func(s *Server, t tool) { add(s, t, h) }}
}

// toolTables are every awr tool, in the order a client lists them: one
// per door operation the MCP surface offers, each decoding into that
// operation's own request type.
var toolTables = [][]entry{projectTools, sessionsTools, rigsTools, workTools, adminTools, execTools, auditTools, diffTools}

// register adds every awr tool (toolTables).
func (s *Server) register() {
	for _, table := range toolTables {
		for _, e := range table {
			e.add(s, e.tool)
		}
	}
}

// projectTools are the tools of the project and its sources.
var projectTools = []entry{
	toolOf(tool{name: "awr_status", title: "Project status", readOnly: true,
		desc: "Project status as `awr status --json`: project_revision, work items by status, the current/ready/waiting/blocked queues (a page of each, with *_total counts), live claims, projection freshness and the next step."},
		op((*project.Project).Status)),
	toolOf(tool{name: "awr_ready", title: "Ready work", readOnly: true,
		desc: "The work that can be claimed now, as `awr ready --json`: one page of ready items (limit, default 50) with priority, next action and source, ready_total, and next_cursor to pass as cursor for the next page; with all, every ready item and every other item with why it is not ready."},
		op((*project.Project).Ready)),
	toolOf(tool{name: "awr_intake_inspect", title: "Organization report", readOnly: true,
		desc: "How organized the project is, as `awr intake inspect --json`: gaps, the actions to take before work can start and the next step. Works before the project is initialized."},
		op((*project.Project).IntakeInspect)),
	toolOf(tool{name: "awr_source_reindex", title: "Reindex sources",
		desc: "Index the manifest sources whose content changed since they were last indexed (all with force), as `awr source reindex --json`. The only tool that reads the team's task files into the log; run it when another tool answers SourceStale."},
		op((*project.Project).SourceReindex)),
	toolOf(tool{name: "awr_source_list", title: "List sources", readOnly: true,
		desc: "The project's sources with adapter, content hash, the revision they were indexed at and their freshness (fresh, stale, missing, not_indexed), as `awr source list --json`."},
		op((*project.Project).SourceList)),
	toolOf(tool{name: "awr_source_add", title: "Add a source",
		desc: "Add a file of the project to the manifest and index it, as `awr source add PATH --json`; the manifest changes only once the file is indexed."},
		op((*project.Project).SourceAdd)),
}

// sessionsTools are the tools of sessions, claims, packets and recovery.
var sessionsTools = []entry{
	toolOf(tool{name: "awr_session_start", title: "Start a session",
		desc: "Start a work session on a work item, optionally claiming it (a lease with a fencing token), as `awr session start --json`. Claiming fails with SourceStale when sources changed, ClaimConflict when another session holds the work."},
		op((*project.Project).SessionStart)),
	toolOf(tool{name: "awr_session_checkpoint", title: "Record a checkpoint",
		desc: "Record what was done, the exact next action and the open loops of a session, as `awr session checkpoint --json`. Pass context_hash from awr_context_compile to prove which context the work was based on."},
		op((*project.Project).SessionCheckpoint)),
	toolOf(tool{name: "awr_session_end", title: "End a session",
		desc: "End a session with an outcome and release its claim, as `awr session end --json`. The work item's status in its source file is never changed."},
		op((*project.Project).SessionEnd)),
	toolOf(tool{name: "awr_session_resume", title: "Resume a session",
		desc: "Continue a session in a new one that inherits its checkpoint and claim, as `awr session resume --json`: the successor session, the inherited checkpoint, the compiled context (recorded in the same transaction) and any recovery gaps."},
		func(ctx context.Context, p *project.Project, in project.SessionResumeRequest) (*project.ResumeResult, error) {
			project.WarmTokenizer()
			return op((*project.Project).SessionResume)(ctx, p, in)
		}),
	toolOf(tool{name: "awr_session_show", title: "Show a session", readOnly: true,
		desc: "A session with its claims, checkpoints and host bindings, as `awr session show --json`: its latest checkpoints (limit, default 50; checkpoints_total, and checkpoints_next_cursor to pass as checkpoints_cursor for the older ones) and a page of its work's loops, decisions, facts and hypotheses in force (knowledge_total, and knowledge_next_cursor to pass as knowledge_cursor); all for every one."},
		op((*project.Project).SessionShow)),
	toolOf(tool{name: "awr_session_list", title: "List sessions", readOnly: true,
		desc: "Sessions oldest first, optionally only active ones or those on one work item, as `awr session list --json`: one page (limit, default 50), sessions_total, and next_cursor to pass as cursor for the next page; all for every one."},
		op((*project.Project).SessionList)),
	toolOf(tool{name: "awr_claim_acquire", title: "Acquire a claim",
		desc: "Give an active session the claim on its work item (a lease with a fencing token; the manifest's continuity.claim_ttl_ms unless ttl_ms is given), as `awr claim acquire --json`. " +
			"Fails with SourceStale when sources changed, ClaimConflict when another session holds the work, InvalidTransition when the session already holds it (renew it instead)."},
		op((*project.Project).ClaimAcquire)),
	toolOf(tool{name: "awr_claim_renew", title: "Renew a claim",
		desc: "Extend the lease of a session's claim (the holder only), as `awr claim renew --json`."},
		op((*project.Project).ClaimRenew)),
	toolOf(tool{name: "awr_claim_release", title: "Release a claim",
		desc: "Let a session's claim go early (the session stays active), as `awr claim release --json`."},
		op((*project.Project).ClaimRelease)),
	toolOf(tool{name: "awr_context_compile", title: "Compile the context packet",
		desc: "Compile the bounded context packet for a work item (goal, task, checkpoint, open loops, rules; token budget, completeness, context_hash), as `awr context compile --json`. " +
			"With session, the compile is recorded in the same transaction so a checkpoint can prove its context. Never reindexes: stale sources give SourceStale; an incomplete packet gives ContextIncomplete with the packet in result."},
		func(ctx context.Context, p *project.Project, in project.ContextCompileRequest) (*project.CompileResult, error) {
			project.WarmTokenizer()
			return op((*project.Project).ContextCompile)(ctx, p, in)
		}),
	toolOf(tool{name: "awr_recovery_inspect", title: "Inspect recovery", readOnly: true,
		desc: "Where a session stands and the exact step to take next (read-only), as `awr recovery inspect --json`: claim state, last or inherited checkpoint, bindings, predecessor/successor, changes since the checkpoint. The events changed and the items closed since the checkpoint are pages (limit, 50 by default): changed_next_since and closed_next_since, given as changed_since and closed_since, read the next. So are the loops, decisions, facts and hypotheses in force: knowledge_total counts them, knowledge_next_cursor given as knowledge_cursor reads the next page."},
		op((*project.Project).RecoveryInspect)),
	toolOf(tool{name: "awr_context_hygiene", title: "What deserves pruning", readOnly: true,
		desc: "List what deserves pruning, as `awr context hygiene --json`: each loop, decision, fact or hypothesis that evidence in the log or the repository contradicts or completes, the evidence quoted (a later fact or decision answering it, a commit or a ticked register item closing a loop, its work item's source changed after it, a duplicate), and checkpoints whose recorded HEAD is no longer an ancestor of HEAD; each finding has the exact command that retires it and the one that confirms it still holds. Age alone flags nothing."},
		op((*project.Project).ContextHygiene)),
	toolOf(tool{name: "awr_context_confirm", title: "Confirm an item still holds",
		desc: "Record that a live loop, decision, fact or hypothesis of a work item still holds after checking the evidence hygiene quoted, as `awr context confirm ITEM --work KEY --agent LABEL [--note TEXT] --json`: hygiene stops flagging it for the evidence seen so far (the log by then, the commits HEAD then reached)."},
		op((*project.Project).ContextConfirm)),
	toolOf(tool{name: "awr_recovery_verify", title: "Prove a handoff was understood",
		desc: "Check a successor's restatement of its handoff (next_action, open_loops and decisions as ids or texts, files_touched, remaining_check) against the recorded state and the repository, as `awr recovery verify --json`: verdict verified or attention_required and items[] with field, status (match, missing, extra, mismatch, closed, unverifiable), expected and stated. Records restatement_checked; a verdict other than verified comes as RestatementMismatch with the report in result."},
		func(ctx context.Context, p *project.Project, in project.RecoveryVerifyRequest) (*project.RestatementResult, error) {
			return p.RecoveryVerify(ctx, in, nil)
		}),
}

// rigsTools are the tools of rigs and their seats.
var rigsTools = []entry{
	toolOf(tool{name: "awr_rig_ps", title: "Show a rig", readOnly: true,
		desc: "Each seat of a rig with its state (running, stopped, recoverable, awaiting-decision, attention_required), session, conversation and last restore outcome, as `awr rig ps NAME --json`; at the head it also says whether each seat's tmux pane runs."},
		op((*project.Project).RigPs)),
	toolOf(tool{name: "awr_seat_show", title: "Show a seat", readOnly: true,
		desc: "A seat (ROLE@RIG) with its declaration, state and occupants over time (sessions, conversations, outcomes), as `awr seat show ADDRESS --json`."},
		op((*project.Project).SeatShow)),
	toolOf(tool{name: "awr_seat_list", title: "List seats", readOnly: true,
		desc: "The seats of every rig (or of one) with their state, as `awr seat list --json`."},
		op((*project.Project).SeatList)),
	toolOf(tool{name: "awr_seat_add", title: "Declare a seat",
		desc: "Declare a seat (ROLE@RIG): its runtime, work and restore policy, as `awr seat add --json`; an unchanged declaration writes nothing. " +
			"command and resume_command (the programs rig up starts) are a person's to declare, with the CLI: here they may only repeat the seat's declared ones; any other is InvalidInput, nothing written."},
		func(ctx context.Context, p *project.Project, in project.SeatAddRequest) (*project.SeatResult, error) {
			if err := declaredCommands(ctx, p, in); err != nil {
				return nil, err
			}
			return op((*project.Project).SeatAdd)(ctx, p, in)
		}),
	toolOf(tool{name: "awr_seat_remove", title: "Retire a seat",
		desc: "Retire a stopped seat (its history stays in the log), as `awr seat remove --json`."},
		op((*project.Project).SeatRemove)),
	toolOf(tool{name: "awr_seat_clear_attention", title: "Answer a seat's attention",
		desc: "Answer a seat's attention_required after looking at it: record what was checked and decided (reason), as `awr seat clear-attention ADDRESS --reason TEXT --json`; until then every rig up reports the seat attention_required."},
		op((*project.Project).SeatClearAttention)),
	toolOf(tool{name: "awr_seat_reconcile", title: "Adopt a hand-resumed session",
		desc: "Adopt, as a seat's session, the session someone resumed from it by hand (session: which one, default the newest of the chain), recording who (by, default the user running the server) and why (reason), as `awr seat reconcile ADDRESS --reason TEXT --json`; nothing is typed into the seat's pane. " +
			"Until then rig up reports the seat awaiting-decision. No hand-resumed session is InvalidTransition."},
		op((*project.Project).SeatReconcile)),
	toolOf(tool{name: "awr_rig_up", title: "Bring a rig up",
		desc: "Launch every stopped seat of a rig in tmux, restoring from its latest snapshot, and report one outcome per seat (resumed, fresh-primed, awaiting-decision, attention_required, failed, running), as `awr rig up NAME --json`; waits up to verify_timeout for each agent's report. " +
			"Durations are nanoseconds (omitted or 0: verify_timeout 30s, ttl the project's lease). Anything but fully_restored comes as RestoreIncomplete with the result; a concurrent up gives RevisionConflict, one in progress in another process InvalidTransition."},
		withDefaults(op((*project.Project).RigUp))),
	toolOf(tool{name: "awr_rig_down", title: "Take a rig down",
		desc: "Ask each running seat to checkpoint (its stop message typed into its pane), wait up to grace, optionally record a snapshot, then stop the seats and end their sessions as interrupted, as `awr rig down NAME --json`. " +
			"grace is nanoseconds (omitted or 0: 30s). A message holding a secret is RuleViolation, nothing written."},
		withDefaults(op((*project.Project).RigDown))),
	toolOf(tool{name: "awr_rig_send", title: "Type into a seat",
		desc: "Type a message into a running seat's pane, then Enter, as `awr rig send SEAT TEXT --json`; recorded first as seat_message_sent (seat, session, agent, text) for the audit. " +
			"Plain text and newlines only, at most 16 KiB, no secret; a seat that is not running is InvalidTransition (hint: rig up). Read the answer with awr_rig_capture."},
		op((*project.Project).RigSend)),
	toolOf(tool{name: "awr_rig_capture", title: "Read a seat's pane", readOnly: true,
		desc: "The last lines of a seat's tmux pane (lines 1 to 2000, default 50), each line that looks like a credential replaced by a note, as `awr rig capture SEAT --json`: lines, withheld, running. Writes nothing; a seat without a pane is InvalidTransition."},
		op((*project.Project).RigCapture)),
	toolOf(tool{name: "awr_rig_restore_check", title: "Check a rig before an up", readOnly: true,
		desc: "Before a rig up: for each seat, checks (name, status green|yellow|red, evidence, remediation) of its working directory, program, conversation where its runtime keeps it, repository against its last known state, work, pending attention and hand-resumed sessions, plus tmux and the sources for the rig, and the outcome rig up would give (as rig up --plan), as `awr rig restore-check NAME --json`. " +
			"Writes nothing. Unless the up would be fully_restored with no red check it comes as RestoreIncomplete with the result."},
		op((*project.Project).RigRestoreCheck)),
	toolOf(tool{name: "awr_rig_snapshot", title: "Snapshot a running rig",
		desc: "Record a snapshot of a running rig (the per-seat manifest rig down records: session, last checkpoint, conversation id, repository HEAD) and leave every seat running, as `awr rig snapshot NAME --json`; a later rig up restores from it. " +
			"Refused (InvalidTransition) when no seat runs or a restore is unfinished; RevisionConflict when a restore started meanwhile."},
		op((*project.Project).RigSnapshot)),
}

// workTools are the tools of host bindings, work items and evidence.
var workTools = []entry{
	toolOf(tool{name: "awr_client_bind", title: "Bind a host conversation",
		desc: "Tie a host conversation (its own id for client claude, codex, gemini or opencode; HOST:ID for any other client) to a session so its checkpoints survive compaction, as `awr client bind --json`; from_session binds to that session's latest successor."},
		op((*project.Project).ClientBind)),
	toolOf(tool{name: "awr_client_show", title: "Show a host binding", readOnly: true,
		desc: "What a host conversation is bound to (with the packet-ready summary and, once another agent resumed the session, whether it may follow), as `awr client show --json`."},
		op((*project.Project).ClientShow)),
	toolOf(tool{name: "awr_work_show", title: "Show a work item", readOnly: true,
		desc: "A work item as indexed (title, status, priority, acceptance, next action, dependencies), its provenance (source lines, content hash, indexed seq), progress (the register's next action beside the latest checkpoint's), live claim, sessions, open loops and active decisions and facts (a page: limit, default 50; knowledge_total, and knowledge_next_cursor to pass as knowledge_cursor; all for every one), the latest evidence (evidence_total, and evidence_next_cursor to pass as evidence_cursor for older pieces) and completion state, as `awr work show KEY --json`; at the head evidence is judged against the repository now."},
		op((*project.Project).WorkShow)),
	toolOf(tool{name: "awr_work_history", title: "A work item's history", readOnly: true,
		desc: "Every event that concerns a work item (claims, its sessions' events, bindings, evidence, and the source_indexed events that changed it), oldest first, as `awr work history KEY --json`; since and next_since page on, kind (a list) filters, limit 1 to 10000 (100)."},
		op((*project.Project).WorkHistory)),
	toolOf(tool{name: "awr_work_claim", title: "Claim a work item",
		desc: "Claim a work item for an active session working on it, as `awr work claim KEY --session S --json`; ClaimConflict names the holder."},
		op((*project.Project).WorkClaim)),
	toolOf(tool{name: "awr_work_release", title: "Release a work item",
		desc: "Release a work item's claim, by its holder only, as `awr work release KEY --session S --json`; another holder is ClaimConflict."},
		op((*project.Project).WorkRelease)),
	toolOf(tool{name: "awr_work_handoff", title: "Hand a work item over",
		desc: "Move a work item's live claim from from_session (which must have recorded a checkpoint) to to_session (live, on the same item, holding no claim) in one transaction: a new claim id and fencing token, the same lease, as `awr work handoff KEY --from-session S --to-session T --json`."},
		op((*project.Project).WorkHandoff)),
	toolOf(tool{name: "awr_evidence_add", title: "Record evidence",
		desc: "Record evidence against an acceptance criterion (criterion: its number or text) of a work item, as `awr evidence add --json`: command with exit_code (the result you observed running it yourself; awr never runs it: recorded as level reported, not observed; a command without exit_code is InvalidInput), file (content hash, level reported) or note (level note). Exactly one of them. " +
			"Evidence of level observed comes only from a person's `awr evidence add --command` on the CLI, which runs the command."},
		op((*project.Project).EvidenceAdd)),
	toolOf(tool{name: "awr_work_complete", title: "Complete a work item",
		desc: "Record work_verified for a work item once every acceptance criterion has passing evidence at the current repository state and the project's evidence level (the session holds the live claim), as `awr work complete KEY --session S --json`; otherwise EvidenceMissing lists each criterion and what it lacks. awr never edits the team's source."},
		op((*project.Project).WorkComplete)),
}

// adminTools are the tools of repairs, the log, verification, anchors and forks.
var adminTools = []entry{
	toolOf(tool{name: "awr_doctor_check", title: "Find what needs repair", readOnly: true,
		desc: "What keeps the project from continuing cleanly, as `awr doctor --json`: findings (code, severity error|warning|info, subject, message, repair: the complete command) for projections behind the log, stale sessions, claims of seats whose agent is gone, missing or changed sources, hosts in use without awr's hooks, executions whose process died unfinished, a directory or database others may write, and a latest anchor (git notes) far behind the head; ok is false on any error or warning."},
		op((*project.Project).Doctor)),
	toolOf(tool{name: "awr_doctor_repair_expire_claim", title: "Release a dead claim",
		desc: "Release a held claim no live agent will release (claim_released, reason repaired, the reason recorded), as `awr doctor repair expire-claim ID --reason TEXT --json`."},
		op((*project.Project).DoctorExpireClaim)),
	toolOf(tool{name: "awr_doctor_repair_end_session", title: "End a stale session",
		desc: "End an active session as abandoned with the reason recorded (its claim, if any, released), as `awr doctor repair end-session ID --reason TEXT --json`."},
		op((*project.Project).DoctorEndSession)),
	toolOf(tool{name: "awr_doctor_repair_abandon_execution", title: "Abandon an unknown execution",
		desc: "Record the finish of an execution whose process died without one (exit -1, the reason as its error; the key then runs again only with --retry-failed), as `awr doctor repair abandon-execution ID --reason TEXT --json`; a running one is InvalidTransition."},
		op((*project.Project).DoctorAbandonExecution)),
	toolOf(tool{name: "awr_log", title: "List events", readOnly: true,
		desc: "Events oldest first, filtered by session, work item, kind or revision range, as `awr log --json`; next_since pages on."},
		op((*project.Project).Log)),
	toolOf(tool{name: "awr_verify", title: "Verify the log", readOnly: true,
		desc: "Check seq continuity, the hash chain, the domain's rules and the projection checksums, as `awr verify --json`; a failure names the first bad seq and comes as VerifyFailed with the report in result. " +
			"anchors (with anchors_file, that file; without, every git note under refs/notes/awr of the project's repository) also checks each anchor of this project (awr_anchor) against the chain, naming the first one a rewrite broke in anchors.broken; expect_head checks the head event's hash."},
		op((*project.Project).Verify)),
	toolOf(tool{name: "awr_anchor", title: "Anchor the head outside the log",
		desc: "Record the log's head (project id, seq, hash, time) outside the database, as `awr anchor --json`: to git (the default) appends the line `awr-anchor v1 project=ID seq=N hash=H at=TIME` to the git note under refs/notes/awr on the repository's HEAD commit; to a file path appends it to that file (synced; the path must lie inside the project, outside .awr/, and be no symbolic link: else InvalidInput with details.rule). awr_verify with anchors checks them later. Outside a git repository, or with no commit, InvalidInput: use a file."},
		op((*project.Project).Anchor)),
	toolOf(tool{name: "awr_fork", title: "Fork an imported replica",
		desc: "An imported project is a read-only replica of its origin: every write is refused with ReadOnlyReplica. Without accept, say whether the project is a replica, its origin and what the fork would append, as `awr fork --json`; with accept (and a reason), append project_forked, after which the copy accepts writes and its history diverges from the origin's, as `awr fork --accept --json`."},
		op((*project.Project).Fork)),
}

// declaredCommands refuses a seat declaration over MCP whose start or
// resume command is not the one the seat already declares: the programs a
// rig starts are declared by a person (awr seat add, awr rig apply), never
// on an agent's word. Errors: InvalidInput naming the field; those of
// SeatShow other than NotFound.
func declaredCommands(ctx context.Context, p *project.Project, in project.SeatAddRequest) error {
	if in.Command == "" && in.ResumeCommand == "" {
		return nil
	}
	var command, resume string
	cur, err := p.SeatShow(ctx, project.SeatShowRequest{Address: in.Address})
	switch {
	case err == nil && cur.Seat != nil:
		command, resume = cur.Seat.Command, cur.Seat.ResumeCommand
	case err != nil && !fault.Is(err, fault.NotFound):
		return err
	}
	for _, f := range []struct{ field, flag, got, want string }{
		{"command", "--command", in.Command, command},
		{"resume_command", "--resume-command", in.ResumeCommand, resume},
	} {
		if f.got != "" && f.got != f.want {
			return fault.New(fault.InvalidInput, "seat add: %s: the program a rig starts is declared by a person with awr seat add %s, not over MCP; omit it or repeat the seat's declared one", f.field, f.flag).
				With("field", f.field).WithHint("awr seat show %s", in.Address)
		}
	}
	return nil
}

// isNilPointer reports whether v is a typed nil pointer.
func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// withDefaults fills the zero durations of a request with the defaults
// its CLI flags declare (the `default` tag), so an MCP call that omits
// verify_timeout or grace waits as the CLI does.
func withDefaults[In, Out any](h handlerFunc[In, Out]) handlerFunc[In, Out] {
	return func(ctx context.Context, p *project.Project, in In) (*Out, error) {
		v := reflect.ValueOf(&in).Elem()
		for i := 0; i < v.NumField(); i++ {
			f, tag := v.Field(i), v.Type().Field(i).Tag.Get("default")
			if tag == "" || f.Type() != reflect.TypeFor[time.Duration]() || !f.IsZero() {
				continue
			}
			if d, err := time.ParseDuration(tag); err == nil {
				f.SetInt(int64(d))
			}
		}
		return h(ctx, p, in)
	}
}
