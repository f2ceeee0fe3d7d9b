package mcpserver

import (
	"context"
	"os"
	"reflect"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/queries"
	"github.com/awr-dev/awr/rig"
	"github.com/awr-dev/awr/service"
	"github.com/awr-dev/awr/workcontext"
)

// Read is the revision input every read tool accepts.
type Read struct {
	At *int64 `json:"at,omitempty" jsonschema:"answer as of the state right after event REV (0 or more); omit for the head"`
}

// Write is the concurrency and retry input every write tool accepts.
type Write struct {
	ExpectedRevision *int64 `json:"expected_revision,omitempty" jsonschema:"fail with RevisionConflict if what this write depends on changed after this project_revision"`
	RequestID        string `json:"request_id,omitempty" jsonschema:"idempotency key: a retried call with the same request_id appends nothing and returns the first result"`
}

func (w Write) meta() commands.WriteMeta {
	return commands.WriteMeta{ExpectedRevision: w.ExpectedRevision, RequestID: w.RequestID}
}

// StatusInput is awr_status's input.
type StatusInput struct {
	Read
}

// ReadyInput is awr_ready's input.
type ReadyInput struct {
	Read
	All   bool `json:"all,omitempty" jsonschema:"also list every other item with the reasons it is not ready"`
	Limit int  `json:"limit,omitempty" jsonschema:"at most N ready items (0 or omitted: all)"`
}

// IntakeInspectInput is awr_intake_inspect's input.
type IntakeInspectInput struct {
	Read
}

// SourceReindexInput is awr_source_reindex's input.
type SourceReindexInput struct {
	Force bool `json:"force,omitempty" jsonschema:"index every source, changed or not"`
	Write
}

// SessionStartInput is awr_session_start's input.
type SessionStartInput struct {
	Work     string `json:"work" jsonschema:"work item key"`
	Agent    string `json:"agent" jsonschema:"who works (a label)"`
	Provider string `json:"provider,omitempty" jsonschema:"the agent's provider (a label)"`
	Model    string `json:"model,omitempty" jsonschema:"the model (a label; awr never calls a model)"`
	Claim    bool   `json:"claim,omitempty" jsonschema:"reserve the work item for this session (requires fresh sources)"`
	TTLms    int64  `json:"ttl_ms,omitempty" jsonschema:"lease length of the claim in milliseconds (0: no expiry)"`
	Write
}

// SessionCheckpointInput is awr_session_checkpoint's input.
type SessionCheckpointInput struct {
	Session     string   `json:"session" jsonschema:"session id"`
	Agent       string   `json:"agent" jsonschema:"who records it"`
	ContextHash string   `json:"context_hash,omitempty" jsonschema:"hash of the context packet the work was based on (from awr_context_compile)"`
	Digest      string   `json:"digest" jsonschema:"what was actually done (never a claim that tests passed unless they ran)"`
	NextAction  string   `json:"next_action" jsonschema:"the exact next action"`
	OpenLoops   []string `json:"open_loops,omitempty" jsonschema:"open loops: unfinished threads a successor must know"`
	Write
}

// SessionEndInput is awr_session_end's input.
type SessionEndInput struct {
	Session string `json:"session" jsonschema:"session id"`
	Outcome string `json:"outcome" jsonschema:"completed, incomplete, interrupted or abandoned (the work item's status in its source is never changed)"`
	Agent   string `json:"agent,omitempty" jsonschema:"who ends it"`
	Write
}

// SessionResumeInput is awr_session_resume's input.
type SessionResumeInput struct {
	FromSession string `json:"from_session" jsonschema:"the session to continue"`
	Agent       string `json:"agent" jsonschema:"who continues"`
	Provider    string `json:"provider,omitempty" jsonschema:"the successor's provider (a label)"`
	Model       string `json:"model,omitempty" jsonschema:"the successor's model (a label)"`
	Budget      *int   `json:"budget,omitempty" jsonschema:"token budget of the context packet (default 5000)"`
	Claim       *bool  `json:"claim,omitempty" jsonschema:"true also takes a free claim; false resumes without one; omitted moves a live claim"`
	TTLms       int64  `json:"ttl_ms,omitempty" jsonschema:"lease of a new or moved claim in milliseconds"`
	Write
}

// SessionShowInput is awr_session_show's input.
type SessionShowInput struct {
	Session string `json:"session" jsonschema:"session id"`
	Read
}

// SessionListInput is awr_session_list's input.
type SessionListInput struct {
	Active bool   `json:"active,omitempty" jsonschema:"only active sessions"`
	Work   string `json:"work,omitempty" jsonschema:"only sessions on this work item"`
	Read
}

// ClaimRenewInput is awr_claim_renew's input.
type ClaimRenewInput struct {
	Session string `json:"session" jsonschema:"session id (the claim's holder)"`
	TTLms   *int64 `json:"ttl_ms,omitempty" jsonschema:"new lease from now in milliseconds (default 1800000; 0: no expiry)"`
	Write
}

// ContextCompileInput is awr_context_compile's input.
type ContextCompileInput struct {
	Work    string `json:"work" jsonschema:"work item key"`
	Session string `json:"session,omitempty" jsonschema:"record the compile for this session, so checkpoints can prove their context (not with at)"`
	Budget  *int   `json:"budget,omitempty" jsonschema:"token budget, o200k_base (default 5000)"`
	Read
}

// RecoveryInspectInput is awr_recovery_inspect's input.
type RecoveryInspectInput struct {
	Session string `json:"session" jsonschema:"session id"`
	Read
}

// RigPsInput is awr_rig_ps's input.
type RigPsInput struct {
	Rig string `json:"rig" jsonschema:"rig name"`
	Read
}

// SeatShowInput is awr_seat_show's input.
type SeatShowInput struct {
	Address string `json:"address" jsonschema:"seat address ROLE@RIG"`
	Read
}

// ClientBindInput is awr_client_bind's input.
type ClientBindInput struct {
	Client          string `json:"client" jsonschema:"the host (e.g. claude-code)"`
	ExternalSession string `json:"external_session" jsonschema:"the host's conversation id, as HOST:ID"`
	Work            string `json:"work" jsonschema:"work item key"`
	Session         string `json:"session,omitempty" jsonschema:"bind to this session"`
	FromSession     string `json:"from_session,omitempty" jsonschema:"bind to the latest successor of this session"`
	Write
}

// LogInput is awr_log's input.
type LogInput struct {
	Read
	Session string `json:"session,omitempty" jsonschema:"only events concerning this session"`
	Work    string `json:"work,omitempty" jsonschema:"only events concerning this work item"`
	Kind    string `json:"kind,omitempty" jsonschema:"only events of this kind"`
	Since   int64  `json:"since,omitempty" jsonschema:"only events after this revision"`
	Until   int64  `json:"until,omitempty" jsonschema:"only events up to and including this revision"`
	Limit   *int   `json:"limit,omitempty" jsonschema:"at most N events (default 1000; 0 for all)"`
}

// The CLI's flag defaults, shared so both surfaces answer alike.
const (
	defaultBudget = 5000
	defaultTTLms  = 1800000
)

func orDefault[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

func at(p *service.Project, r Read) (queries.At, error) {
	rev, err := service.At(r.At)
	return queries.At{Rev: rev, Now: p.Env.Now()}, err
}

// register adds every awr tool.
func (s *Server) register() {
	add(s, tool{name: "awr_status", title: "Project status", readOnly: true,
		desc: "Project status as `awr status --json`: project_revision, work items by status, the current/ready/waiting/blocked queues, live claims, projection freshness and the next step."},
		true, func(ctx context.Context, p *service.Project, in StatusInput) (any, error) {
			a, err := at(p, in.Read)
			if err != nil {
				return nil, err
			}
			return queries.Status(ctx, p.Store, a)
		})
	add(s, tool{name: "awr_ready", title: "Ready work", readOnly: true,
		desc: "The work that can be claimed now, as `awr ready --json`: ready items with priority, next action and source; with all, every other item and why it is not ready."},
		true, func(ctx context.Context, p *service.Project, in ReadyInput) (any, error) {
			a, err := at(p, in.Read)
			if err != nil {
				return nil, err
			}
			return queries.Ready(ctx, p.Store, a, in.Limit, in.All)
		})
	add(s, tool{name: "awr_intake_inspect", title: "Organization report", readOnly: true,
		desc: "How organized the project is, as `awr intake inspect --json`: gaps, the actions to take before work can start and the next step. Works before the project is initialized."},
		false, func(ctx context.Context, p *service.Project, in IntakeInspectInput) (any, error) {
			a, err := at(p, in.Read)
			if err != nil {
				return nil, err
			}
			return queries.Intake(ctx, p.Store, p.Dir, a)
		})
	add(s, tool{name: "awr_source_reindex", title: "Reindex sources",
		desc: "Index the manifest sources whose content changed since they were last indexed (all with force), as `awr source reindex --json`. The only tool that reads the team's task files into the log; run it when another tool answers SourceStale."},
		true, func(ctx context.Context, p *service.Project, in SourceReindexInput) (any, error) {
			return p.Reindex(ctx, in.Force, in.meta())
		})
	add(s, tool{name: "awr_session_start", title: "Start a session",
		desc: "Start a work session on a work item, optionally claiming it (a lease with a fencing token), as `awr session start --json`. Claiming fails with SourceStale when sources changed, ClaimConflict when another session holds the work."},
		true, func(ctx context.Context, p *service.Project, in SessionStartInput) (any, error) {
			return p.StartSession(ctx, commands.StartRequest{Work: in.Work, Agent: in.Agent, Provider: in.Provider, Model: in.Model,
				Claim: in.Claim, TTLms: in.TTLms, WriteMeta: in.meta()})
		})
	add(s, tool{name: "awr_session_checkpoint", title: "Record a checkpoint",
		desc: "Record what was done, the exact next action and the open loops of a session, as `awr session checkpoint --json`. Pass context_hash from awr_context_compile to prove which context the work was based on."},
		true, func(ctx context.Context, p *service.Project, in SessionCheckpointInput) (any, error) {
			return commands.RecordCheckpoint(ctx, p.Env, commands.CheckpointRequest{SessionID: in.Session, Agent: in.Agent, ContextHash: in.ContextHash,
				Digest: in.Digest, NextAction: in.NextAction, OpenLoops: in.OpenLoops, WriteMeta: in.meta()})
		})
	add(s, tool{name: "awr_session_end", title: "End a session",
		desc: "End a session with an outcome and release its claim, as `awr session end --json`. The work item's status in its source file is never changed."},
		true, func(ctx context.Context, p *service.Project, in SessionEndInput) (any, error) {
			return commands.EndSession(ctx, p.Env, commands.EndRequest{SessionID: in.Session, Outcome: in.Outcome, Agent: in.Agent, WriteMeta: in.meta()})
		})
	add(s, tool{name: "awr_session_resume", title: "Resume a session",
		desc: "Continue a session in a new one that inherits its checkpoint and claim, as `awr session resume --json`: the successor session, the inherited checkpoint, the compiled context and any recovery gaps."},
		true, func(ctx context.Context, p *service.Project, in SessionResumeInput) (any, error) {
			go workcontext.Warm()
			return p.Resume(ctx, commands.ResumeRequest{FromSession: in.FromSession, Agent: in.Agent, Provider: in.Provider, Model: in.Model,
				Claim: in.Claim, TTLms: in.TTLms, WriteMeta: in.meta()}, orDefault(in.Budget, defaultBudget))
		})
	add(s, tool{name: "awr_session_show", title: "Show a session", readOnly: true,
		desc: "A session with its claims, checkpoints and host bindings, as `awr session show --json`."},
		true, func(ctx context.Context, p *service.Project, in SessionShowInput) (any, error) {
			rev, err := service.At(in.At)
			if err != nil {
				return nil, err
			}
			return p.ShowSession(ctx, in.Session, rev)
		})
	add(s, tool{name: "awr_session_list", title: "List sessions", readOnly: true,
		desc: "Sessions oldest first, optionally only active ones or those on one work item, as `awr session list --json`."},
		true, func(ctx context.Context, p *service.Project, in SessionListInput) (any, error) {
			rev, err := service.At(in.At)
			if err != nil {
				return nil, err
			}
			return p.ListSessions(ctx, service.ListOptions{Active: in.Active, Work: in.Work, At: rev})
		})
	add(s, tool{name: "awr_claim_renew", title: "Renew a claim",
		desc: "Extend the lease of a session's claim (the holder only), as `awr claim renew --json`."},
		true, func(ctx context.Context, p *service.Project, in ClaimRenewInput) (any, error) {
			return commands.RenewClaim(ctx, p.Env, commands.RenewRequest{SessionID: in.Session, TTLms: orDefault(in.TTLms, defaultTTLms), WriteMeta: in.meta()})
		})
	add(s, tool{name: "awr_context_compile", title: "Compile the context packet",
		desc: "Compile the bounded context packet for a work item (goal, task, checkpoint, open loops, rules; token budget, completeness, context_hash), as `awr context compile --json`. " +
			"With session, the compile is recorded so a checkpoint can prove its context. Never reindexes: stale sources give SourceStale; an incomplete packet gives ContextIncomplete with the packet in result."},
		true, func(ctx context.Context, p *service.Project, in ContextCompileInput) (any, error) {
			go workcontext.Warm()
			rev, err := service.At(in.At)
			if err != nil {
				return nil, err
			}
			return p.Compile(ctx, service.CompileOptions{Work: in.Work, Session: in.Session, Budget: orDefault(in.Budget, defaultBudget), At: rev})
		})
	add(s, tool{name: "awr_recovery_inspect", title: "Inspect recovery", readOnly: true,
		desc: "Where a session stands and the exact step to take next (read-only), as `awr recovery inspect --json`: claim state, last or inherited checkpoint, bindings, predecessor/successor, changes since the checkpoint."},
		true, func(ctx context.Context, p *service.Project, in RecoveryInspectInput) (any, error) {
			rev, err := service.At(in.At)
			if err != nil {
				return nil, err
			}
			return p.Recovery(ctx, in.Session, rev)
		})
	add(s, tool{name: "awr_rig_ps", title: "Show a rig", readOnly: true,
		desc: "Each seat of a rig with its state (running, stopped, recoverable, attention_required), session, conversation and last restore outcome, as `awr rig ps NAME --json`; at the head it also says whether each seat's tmux pane runs."},
		true, func(ctx context.Context, p *service.Project, in RigPsInput) (any, error) {
			rev, err := service.At(in.At)
			if err != nil {
				return nil, err
			}
			return rigManager(p).Ps(ctx, in.Rig, rev)
		})
	add(s, tool{name: "awr_seat_show", title: "Show a seat", readOnly: true,
		desc: "A seat (ROLE@RIG) with its declaration, state and occupants over time (sessions, conversations, outcomes), as `awr seat show ADDRESS --json`."},
		true, func(ctx context.Context, p *service.Project, in SeatShowInput) (any, error) {
			rev, err := service.At(in.At)
			if err != nil {
				return nil, err
			}
			return rigManager(p).Show(ctx, in.Address, rev)
		})
	add(s, tool{name: "awr_client_bind", title: "Bind a host conversation",
		desc: "Tie a host conversation (HOST:ID) to a session so its checkpoints survive compaction, as `awr client bind --json`; from_session binds to that session's latest successor."},
		true, func(ctx context.Context, p *service.Project, in ClientBindInput) (any, error) {
			return commands.BindClient(ctx, p.Env, commands.BindRequest{Client: in.Client, ExternalSession: in.ExternalSession, Work: in.Work,
				SessionID: in.Session, FromSession: in.FromSession, WriteMeta: in.meta()})
		})
	add(s, tool{name: "awr_log", title: "List events", readOnly: true,
		desc: "Events oldest first, filtered by session, work item, kind or revision range, as `awr log --json`; next_since pages on."},
		true, func(ctx context.Context, p *service.Project, in LogInput) (any, error) {
			a, err := at(p, in.Read)
			if err != nil {
				return nil, err
			}
			limit, err := service.LogLimit(in.Limit)
			if err != nil {
				return nil, err
			}
			return queries.Log(ctx, p.Store, a, queries.LogFilter{Session: in.Session, Work: in.Work, Kind: in.Kind, Since: in.Since, Until: in.Until, Limit: limit})
		})
}

// isNilPointer reports whether v is a typed nil pointer.
func isNilPointer(v any) bool {
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// rigManager reads seats and rigs of p; AWR_TMUX_SOCKET selects the tmux
// server their panes run on, as for the CLI.
func rigManager(p *service.Project) *rig.Manager {
	return &rig.Manager{P: p, Tmux: rig.Tmux{Socket: os.Getenv("AWR_TMUX_SOCKET")}}
}
