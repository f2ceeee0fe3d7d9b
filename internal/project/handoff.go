package project

import (
	"context"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/shellwords"
	"github.com/awr-dev/awr/internal/workcontext"
	"github.com/awr-dev/awr/projections"
)

// The request types of the operations whose decisions live in commands:
// each is declared once there, with the tags both front ends need (kong
// flags and help for the CLI, JSON names for the MCP tools), and named here
// so the front ends need only this door.
type (
	// Read selects the revision a read answers at.
	Read = commands.Read
	// WriteMeta carries a write's expected revision and request id.
	WriteMeta = commands.WriteMeta
	// SessionStartRequest is `awr session start` and awr_session_start.
	SessionStartRequest = commands.StartRequest
	// KnowledgeState is a work item's loops, decisions, facts and
	// hypotheses at a revision.
	KnowledgeState = projections.KnowledgeState
	// RepoCheck compares the repository a checkpoint recorded with the
	// repository now.
	RepoCheck = workcontext.RepoCheck
	// KnowledgeFlags are a checkpoint's loop, decision, fact and
	// hypothesis changes.
	KnowledgeFlags = commands.KnowledgeFlags
	// SessionCheckpointRequest is `awr session checkpoint` and
	// awr_session_checkpoint.
	SessionCheckpointRequest = commands.CheckpointRequest
	// SessionEndRequest is `awr session end` and awr_session_end.
	SessionEndRequest = commands.EndRequest
	// SessionResumeRequest is `awr session resume` and awr_session_resume.
	SessionResumeRequest = commands.ResumeRequest
	// ClaimAcquireRequest is `awr claim acquire` and awr_claim_acquire.
	ClaimAcquireRequest = commands.AcquireRequest
	// ClaimRenewRequest is `awr claim renew` and awr_claim_renew.
	ClaimRenewRequest = commands.RenewRequest
	// ClaimReleaseRequest is `awr claim release` and awr_claim_release.
	ClaimReleaseRequest = commands.ReleaseRequest
	// ClientBindRequest is `awr client bind` and awr_client_bind.
	ClientBindRequest = commands.BindRequest
	// ContextCompileRequest is `awr context compile` and
	// awr_context_compile.
	ContextCompileRequest = commands.CompileRequest
)

// HostClients are the clients whose conversation ids awr takes as the
// host reports them (commands.HostClients); any other client is generic
// and names its conversation HOST:ID.
var HostClients = commands.HostClients

// The results of those operations.
type (
	// SessionStartResult is the new session and its claim.
	SessionStartResult = commands.StartResult
	// CheckpointResult is the recorded checkpoint.
	CheckpointResult = commands.CheckpointResult
	// SessionEndResult is the ended session and the claim it released.
	SessionEndResult = commands.EndResult
	// ResumeResult is the successor session, what it inherited and its
	// compiled context.
	ResumeResult = commands.HandoffResult
	// ClaimResult is a claim after acquire, renew or release.
	ClaimResult = commands.ClaimResult
	// BindResult is a host binding with what the host needs to continue.
	BindResult = commands.BindResult
	// BindingView is a binding with what its host needs to continue.
	BindingView = commands.BindingView
	// CompileResult is a compiled context packet.
	CompileResult = commands.CompileResult
)

// SessionStart starts a session; claiming requires fresh sources.
// Errors: SourceStale; those of commands.StartSession.
func (p *Project) SessionStart(ctx context.Context, req SessionStartRequest) (*SessionStartResult, error) {
	return decided(ctx, p, func(ctx context.Context) (*SessionStartResult, error) { return p.sessionStart(ctx, req) })
}

// sessionStart is one attempt of SessionStart (decided).
func (p *Project) sessionStart(ctx context.Context, req SessionStartRequest) (*SessionStartResult, error) {
	env, err := p.Env(ctx)
	if err != nil {
		return nil, err
	}
	dir, rel, err := p.workdir(req.Workdir)
	if err != nil {
		return nil, fault.As(err).WithHint("awr session start --work %s --agent %s --workdir .", shellwords.Quote(req.Work), shellwords.Quote(req.Agent))
	}
	req.RepoDir = rel
	req.Repo, _ = workcontext.KeptRepo(ctx, dir)
	req.Stale = nil
	if req.Claim {
		if req.Stale, err = p.StaleSources(ctx); err != nil {
			return nil, err
		}
	}
	return commands.StartSession(ctx, env, req)
}

// SessionCheckpoint records what was done, the next action and the open
// loops. Its answer holds what the checkpoint changed whole and a page of
// the items in force (checkpointPage).
// Errors: those of commands.RecordCheckpoint.
func (p *Project) SessionCheckpoint(ctx context.Context, req SessionCheckpointRequest) (*CheckpointResult, error) {
	res, err := decided(ctx, p, func(ctx context.Context) (*CheckpointResult, error) { return p.sessionCheckpoint(ctx, req) })
	if err != nil {
		return nil, err
	}
	return checkpointPage(res), nil
}

// sessionCheckpoint is one attempt of SessionCheckpoint (decided).
func (p *Project) sessionCheckpoint(ctx context.Context, req SessionCheckpointRequest) (*CheckpointResult, error) {
	env, err := p.Env(ctx)
	if err != nil {
		return nil, err
	}
	if req.ContextHash != "" {
		if req.Stale, err = p.StaleSources(ctx); err != nil {
			return nil, err
		}
	}
	if req.Repo, err = p.checkpointRepo(ctx, req.SessionID); err != nil {
		return nil, err
	}
	return commands.RecordCheckpoint(ctx, env, req)
}

// SessionEnd ends a session and releases its claim.
// Errors: those of commands.EndSession.
func (p *Project) SessionEnd(ctx context.Context, req SessionEndRequest) (*SessionEndResult, error) {
	return command(ctx, p, commands.EndSession, req)
}

// SessionResume continues a session in a new one and compiles its context,
// in one transaction (commands.ResumeWithContext). Taking or moving a
// claim requires fresh sources; without a claim, stale sources leave the
// context uncompiled and say so in recovery_gaps.
// Errors: SourceStale; those of commands.ResumeWithContext.
func (p *Project) SessionResume(ctx context.Context, req SessionResumeRequest) (*ResumeResult, error) {
	env, err := p.Env(ctx)
	if err != nil {
		return nil, err
	}
	stale, err := p.StaleSources(ctx)
	if err != nil {
		return nil, err
	}
	if req.Repo, err = p.repoCheck(ctx, "", req.FromSession); err != nil {
		return nil, err
	}
	return commands.ResumeWithContext(ctx, env, req, stale)
}

// ContextCompile compiles the context packet for a work item; with a
// session it records the compile in the same transaction. At the head it
// requires fresh sources. An incomplete packet is returned together with a
// ContextIncomplete error. Its reads catch a shared log's cache up once
// (events.CatchUpOnce).
// Errors: SourceStale; those of commands.CompileContext.
func (p *Project) ContextCompile(ctx context.Context, req ContextCompileRequest) (*CompileResult, error) {
	ctx = events.CatchUpOnce(ctx)
	env, err := p.Env(ctx)
	if err != nil {
		return nil, err
	}
	if req.Work != "" && !req.Past() {
		if err := p.requireFresh(ctx, "context compile"); err != nil {
			return nil, err
		}
		if req.Repo, err = p.repoCheck(ctx, req.Work, req.Session); err != nil {
			return nil, err
		}
	}
	return commands.CompileContext(ctx, env, req)
}

// ClaimAcquire gives an active session the claim on its work item; it
// requires fresh sources, as SessionStart with a claim does.
// Errors: SourceStale; those of commands.AcquireClaim.
func (p *Project) ClaimAcquire(ctx context.Context, req ClaimAcquireRequest) (*ClaimResult, error) {
	return claimFresh(ctx, p, commands.AcquireClaim, &req, &req.Stale)
}

// claimFresh runs a claim's command as command does, with *stale (a
// field of *req) set to the sources changed since they were indexed
// (StaleSources), which the command refuses a claim on.
func claimFresh[Req any](ctx context.Context, p *Project, fn func(context.Context, *commands.Env, Req) (*ClaimResult, error), req *Req, stale *[]string) (*ClaimResult, error) {
	env, err := p.Env(ctx)
	if err != nil {
		return nil, err
	}
	return decided(ctx, p, func(ctx context.Context) (*ClaimResult, error) {
		found, err := p.StaleSources(ctx)
		if err != nil {
			return nil, err
		}
		*stale = found
		return fn(ctx, env, *req)
	})
}

// decidedAttempts bounds how many times decided runs a write whose reads
// moved: each refused attempt leaves the cache caught up to the head it
// locked, so only other processes' writes landing between the next
// attempt's read and its lock move it again.
const decidedAttempts = 4

// decided runs attempt, a write's reads and the write that decides on
// them, with the reads recorded (events.PlanReads): on a shared log's
// cache a server's reads take the cache as it is, with no round trip (a
// process that runs one command catches up on the head its open read),
// and the write checks under the lock that nothing read has moved since.
// When it has (events.ReadMoved), nothing was written, and the write runs
// again on the cache its locked catch-up brought to that head.
// Errors: those of attempt; RevisionConflict when the reads moved on
// every attempt.
func decided[Res any](ctx context.Context, p *Project, attempt func(ctx context.Context) (*Res, error)) (*Res, error) {
	for i := 0; ; i++ {
		res, err := attempt(events.PlanReads(ctx, p.opts.OneCommand))
		if i == decidedAttempts-1 || !events.ReadMoved(err) {
			return res, err
		}
	}
}

// ClaimRenew extends the lease of a session's claim.
// Errors: those of commands.RenewClaim.
func (p *Project) ClaimRenew(ctx context.Context, req ClaimRenewRequest) (*ClaimResult, error) {
	return command(ctx, p, commands.RenewClaim, req)
}

// ClaimRelease lets a session's claim go early.
// Errors: those of commands.ReleaseClaim.
func (p *Project) ClaimRelease(ctx context.Context, req ClaimReleaseRequest) (*ClaimResult, error) {
	return command(ctx, p, commands.ReleaseClaim, req)
}

// ClientBind ties a host conversation to a session.
// Errors: those of commands.BindClient.
func (p *Project) ClientBind(ctx context.Context, req ClientBindRequest) (*BindResult, error) {
	return command(ctx, p, commands.BindClient, req)
}

// SafeText renders a recorded value for a terminal or a packet: control
// characters escaped, further lines of a multi-line value quoted behind
// "  > " (see workcontext.SafeText).
func SafeText(s string) string { return workcontext.SafeText(s) }

// SafeLine renders a recorded name for one cell or line of a text view:
// control characters, newlines and tabs escaped (see
// workcontext.SafeLine).
func SafeLine(s string) string { return workcontext.SafeLine(s) }

// ClosesCommand is the command that lists every knowledge item closed on
// work after since, up to rev (workcontext.ClosesCommand).
func ClosesCommand(work string, since, rev int64) string {
	return workcontext.ClosesCommand(work, since, rev)
}

// Inert escapes what a terminal would act on in a whole text view, its
// newlines and tabs kept (see workcontext.Inert).
func Inert(s string) string { return workcontext.Inert(s) }

// WarmTokenizer starts loading the context tokenizer in the background, so
// a command that will compile a packet overlaps that load with opening the
// project.
func WarmTokenizer() { go workcontext.Warm() }
