package commands

import (
	"context"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/shellwords"
	"github.com/awr-dev/awr/internal/workcontext"
	"github.com/awr-dev/awr/projections"
)

// ResumeRequest continues a session in a new one: `awr session resume` and
// the awr_session_resume tool.
type ResumeRequest struct {
	FromSession string `name:"from-session" required:"" json:"from_session" help:"The session to continue." placeholder:"ID"`
	Agent       string `name:"agent" required:"" json:"agent" help:"Who continues (a label)." placeholder:"LABEL"`
	Provider    string `name:"provider" json:"provider,omitempty" help:"The successor's provider (a label)." placeholder:"NAME"`
	Model       string `name:"model" json:"model,omitempty" help:"The successor's model (a label)." placeholder:"LABEL"`
	// Budget is the token budget of the successor's context packet
	// (ResumeWithContext); 0 is the default.
	Budget *int `name:"budget" json:"budget,omitempty" help:"Token budget of the context packet, 1 to 1000000 (default 5000)." placeholder:"N"`
	// Claim: nil (the default) and true take the claim: the predecessor's
	// live claim moves, otherwise the work is acquired when free; false
	// resumes without a claim.
	Claim *bool `name:"claim" negatable:"" json:"claim,omitempty" help:"Take the claim (the default): move the predecessor's live claim, or acquire the work when it is free (ClaimConflict when another session holds it); false (--no-claim) resumes without one and releases the predecessor's."`
	// TTLms is the lease of a new or moved claim; nil gives a new claim
	// the project's lease and lets a moved claim keep the lease it had.
	// TTL is the lease as a duration (--ttl 30m); leaseMs folds it into
	// TTLms, the form MCP and the log use.
	TTL   *time.Duration `name:"ttl" json:"-" help:"Lease of a new or moved claim (30m, 2h; default: a moved claim keeps its lease, a new one gets the manifest's continuity.claim_ttl_ms, 1h when unset; 0, no expiry, only when that setting is 0)." placeholder:"DURATION"`
	TTLms *int64         `name:"ttl-ms" hidden:"" json:"ttl_ms,omitempty" help:"Lease of a new or moved claim in milliseconds (default: a moved claim keeps its lease, a new one gets the manifest's continuity.claim_ttl_ms, 3600000 when unset; 0, no expiry, only when that setting is 0)." placeholder:"N"`
	// Repo is the door's comparison of the inherited checkpoint's
	// repository with the repository now. No front end sets it.
	Repo *workcontext.RepoCheck `kong:"-" json:"-"`
	// Client and ExternalSession name the host conversation the resume is
	// made for (see ConversationKey): recorded in session_resumed, they
	// let that conversation's binding, and no other, follow the resume.
	Client          string `name:"client" json:"client,omitempty" help:"The host of the conversation the resume is made for: claude, codex, gemini or generic." placeholder:"NAME"`
	ExternalSession string `name:"external-session" json:"external_session,omitempty" help:"The conversation the resume is made for (as with client bind); only its binding may follow the resume." placeholder:"ID"`
	WriteMeta
}

// ResumeResult is the successor session with what it inherited.
type ResumeResult struct {
	Replay
	Session         projections.Session     `json:"session"`
	FromSession     string                  `json:"from_session"`
	Claim           *ClaimView              `json:"claim"`
	Checkpoint      *projections.Checkpoint `json:"checkpoint"`
	ProjectRevision int64                   `json:"project_revision"`
}

// ResumeSession creates a successor session linked to its predecessor. An
// active predecessor is ended as interrupted in the same transaction.
// Unless Claim is false, the successor takes the claim: the predecessor's
// live claim moves to it with a new fencing token (keeping its lease unless
// TTLms names one); otherwise (an expired or released claim, or none) the
// work is acquired with the policy's lease when it is free. With Claim
// false the successor holds no claim, and a live claim of an active
// predecessor is released when it ends.
// Errors: InvalidInput for missing fields and a refused --ttl-ms; NotFound
// for an unknown predecessor; InvalidTransition when it already has a
// successor (named in details) or when the work's status forbids a claim;
// ClaimConflict when another session holds a live claim on the work or the
// predecessor's claim was superseded; DependencyBlocked for an open
// required dependency. Nothing is written on any error.
func ResumeSession(ctx context.Context, env *Env, req ResumeRequest) (*ResumeResult, error) {
	if err := leaseMs("resume", &req.TTL, &req.TTLms); err != nil {
		return nil, err
	}
	if err := checkResume(env, req); err != nil {
		return nil, err
	}
	pol := env.policy()
	return write(ctx, env, req.Agent, req.WriteMeta, []string{"session/" + req.FromSession}, req, func(tx *events.Tx) (*ResumeResult, error) {
		return resume(tx, pol, req)
	})
}

// checkResume checks a resume request's fields. An explicit TTLms is
// checked against the policy; a missing one is left nil (not filled in
// before the request's fingerprint), because for a moved claim it means
// "keep the lease", which no length says.
func checkResume(env *Env, req ResumeRequest) error {
	for _, f := range [][2]string{{"from_session", req.FromSession}, {"agent", req.Agent}} {
		if err := required(f[0], f[1]); err != nil {
			return err
		}
	}
	if req.TTLms != nil {
		if _, err := leaseTTL("resume", env.policy(), req.TTLms); err != nil {
			return err
		}
	}
	if req.Client != "" && req.ExternalSession == "" {
		return fault.New(fault.InvalidInput, "resume: --client names the host of --external-session; give both").With("field", "external_session")
	}
	if req.ExternalSession != "" {
		if _, err := ConversationKey("resume", req.Client, req.ExternalSession); err != nil {
			return err
		}
	}
	return refuseSecrets("resume", [2]string{"agent", req.Agent}, [2]string{"provider", req.Provider}, [2]string{"model", req.Model},
		[2]string{"client", req.Client}, [2]string{"external_session", req.ExternalSession})
}

// resume appends the successor session inside tx (see ResumeSession); pol
// gives the lease of a new claim.
func resume(tx *events.Tx, pol Policy, req ResumeRequest) (*ResumeResult, error) {
	prev, err := resumable(tx, req)
	if err != nil {
		return nil, err
	}
	if err := tx.Guard("work/" + prev.Work); err != nil {
		return nil, err
	}
	now := tx.Now().UnixMilli()
	old, err := heldClaim(tx, prev.ID)
	if err != nil {
		return nil, err
	}
	want := req.Claim == nil || *req.Claim
	move := want && old != nil && old.LiveAt(now)
	acquireNew := want && !move
	if move {
		if err := fence(tx, "resume", prev); err != nil {
			return nil, err
		}
	}
	var checked *claimable
	if acquireNew {
		if checked, err = checkClaimable(tx, prev.Work, ""); err != nil {
			if fe := fault.As(err); fe.Code == fault.ClaimConflict {
				fe.WithHint("awr session resume --from-session %s --agent %s --no-claim", prev.ID, req.Agent)
			}
			return nil, err
		}
	}
	last, err := inheritedCheckpoint(tx, prev)
	if err != nil {
		return nil, err
	}
	// The successor works where its predecessor did.
	prevStart, err := projections.SessionStartOf(tx.Conn, prev)
	if err != nil {
		return nil, err
	}
	id := tx.NewID()
	if _, err := tx.Append(events.NewEvent{Stream: "session/" + id, Payload: events.SessionStarted{
		SessionID: id, Work: prev.Work, Agent: req.Agent, Provider: req.Provider, Model: req.Model, PredecessorID: prev.ID,
		Workdir: prevStart.Workdir,
	}}); err != nil {
		return nil, err
	}
	var claim *ClaimView
	if move {
		if claim, err = moveClaim(tx, pol, req, prev, old, id, now); err != nil {
			return nil, err
		}
	}
	if prev.Status == projections.SessionActive {
		if _, err := endSession(tx, prev, events.OutcomeInterrupted, "resumed by "+id); err != nil {
			return nil, err
		}
	}
	if acquireNew {
		ttl := pol.ClaimTTLms
		if req.TTLms != nil {
			ttl = *req.TTLms
		}
		if claim, err = acquire(tx, prev.Work, id, req.Agent, ttl, "", checked); err != nil {
			return nil, err
		}
	}
	rp := events.SessionResumed{SessionID: id, FromSession: prev.ID, Work: prev.Work}
	if req.ExternalSession != "" {
		// Checked by checkResume.
		if rp.ExternalSession, err = ConversationKey("resume", req.Client, req.ExternalSession); err != nil {
			return nil, err
		}
	}
	if last != nil {
		rp.CheckpointID = last.ID
	}
	if _, err := tx.Append(events.NewEvent{Stream: "session/" + id, Payload: rp}); err != nil {
		return nil, err
	}
	// A session started in this write has recorded no checkpoint and no
	// context: its row is all SessionAt would give.
	s, err := projections.SessionRowAt(tx.Conn, id, tx.Head())
	if err != nil {
		return nil, err
	}
	return &ResumeResult{Session: *s, FromSession: prev.ID, Claim: claim, Checkpoint: last, ProjectRevision: tx.Head()}, nil
}

// resumable returns the session req resumes: it must exist and not have
// been resumed already.
func resumable(tx *events.Tx, req ResumeRequest) (*projections.Session, error) {
	prev, err := projections.SessionAt(tx.Conn, req.FromSession, tx.Head())
	if err != nil {
		return nil, err
	}
	if prev == nil {
		return nil, fault.New(fault.NotFound, "resume: session %s not found", req.FromSession).With("session_id", req.FromSession).WithHint("awr session list")
	}
	if prev.SuccessorID == "" {
		return prev, nil
	}
	e := fault.New(fault.InvalidTransition, "resume: session %s was already resumed by %s", prev.ID, prev.SuccessorID).
		With("session_id", prev.ID).With("successor_id", prev.SuccessorID)
	// Resuming the successor while it is active would take its work from
	// the agent working in it: the hint only reads it then.
	succ, err := projections.SessionAt(tx.Conn, prev.SuccessorID, tx.Head())
	if err != nil {
		return nil, err
	}
	if succ != nil && succ.Status != projections.SessionActive && succ.SuccessorID == "" {
		return nil, e.WithHint("awr session resume --from-session %s --agent %s", prev.SuccessorID, shellwords.Quote(req.Agent))
	}
	return nil, e.WithHint("awr recovery inspect --session %s", prev.SuccessorID)
}

// inheritedCheckpoint is the checkpoint a successor of prev inherits:
// prev's own latest, or the one prev inherited itself, back along the
// chain (nil: none).
func inheritedCheckpoint(tx *events.Tx, prev *projections.Session) (*projections.Checkpoint, error) {
	for cur, seen := prev, map[string]bool{}; cur != nil && !seen[cur.ID]; {
		seen[cur.ID] = true
		if cur.LastCheckpointID != "" {
			return projections.CheckpointAt(tx.Conn, cur.LastCheckpointID, tx.Head())
		}
		if cur.PredecessorID == "" {
			return nil, nil
		}
		var err error
		if cur, err = projections.SessionAt(tx.Conn, cur.PredecessorID, tx.Head()); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// moveClaim moves prev's live claim old to the successor id: released as
// moved, acquired again with the same fencing lineage. The moved claim
// keeps the lease it had, and its length, unless a new one is asked for:
// moving never extends a lease by itself. A claim without expiry gets the
// policy's lease when the policy has one: only the manifest keeps claims
// from expiring.
func moveClaim(tx *events.Tx, pol Policy, req ResumeRequest, prev *projections.Session, old *projections.Claim, id string, now int64) (*ClaimView, error) {
	if _, err := tx.Append(events.NewEvent{Stream: "work/" + old.Work, Payload: events.ClaimReleased{
		ClaimID: old.ID, Work: old.Work, SessionID: prev.ID, Reason: events.ReleaseMoved,
	}}); err != nil {
		return nil, err
	}
	expires, ttl := old.ExpiresAt, leaseLength(old)
	switch {
	case req.TTLms != nil:
		expires, ttl = 0, *req.TTLms
		if ttl > 0 {
			expires = now + ttl
		}
	case expires == 0 && pol.ClaimTTLms > 0:
		expires, ttl = now+pol.ClaimTTLms, pol.ClaimTTLms
	}
	return acquireUntil(tx, prev.Work, id, req.Agent, expires, ttl, prev.ID, nil)
}

// HandoffResult is `awr session resume`: the successor session, what it
// inherited, its compiled context and what it could not recover.
type HandoffResult struct {
	Replay
	Resumed struct {
		Session     projections.Session `json:"session"`
		FromSession string              `json:"from_session"`
		Claim       *ClaimView          `json:"claim"`
	} `json:"resumed"`
	Checkpoint *projections.Checkpoint `json:"checkpoint"`
	// Knowledge is the work item's loops, decisions, facts and hypotheses
	// the successor inherits, with those the inherited checkpoint closed.
	Knowledge *projections.KnowledgeState `json:"knowledge"`
	// ContextReady is true only when the compiled context is complete and
	// within budget.
	ContextReady    bool                      `json:"context_ready"`
	Context         *workcontext.Packet       `json:"context"`
	Completeness    *workcontext.Completeness `json:"completeness"`
	RecoveryGaps    []string                  `json:"recovery_gaps"`
	ProjectRevision int64                     `json:"project_revision"`
}

// ResumeWithContext is the handoff as one command: in one IMMEDIATE
// transaction it resumes req.FromSession (as ResumeSession does), compiles
// the successor's context packet at the new head and records it with
// context_compiled, so the hash the successor sees is the one recorded. A
// packet that cannot be compiled (over budget) or is incomplete does not
// undo the resume: the reason is listed in RecoveryGaps. stale lists the
// sources that changed since they were indexed; when there are any, no
// context is compiled and the gap names them. A retried request id
// returns the first answer, context included.
// Errors: those of ResumeSession; Storage when the packet cannot be read.
func ResumeWithContext(ctx context.Context, env *Env, req ResumeRequest, stale []string) (*HandoffResult, error) {
	if err := leaseMs("resume", &req.TTL, &req.TTLms); err != nil {
		return nil, err
	}
	if err := checkResume(env, req); err != nil {
		return nil, err
	}
	pol := env.policy()
	budget, err := BudgetOf("resume", req.Budget)
	if err != nil {
		return nil, err
	}
	req.Budget = &budget // the same request whether the default is said or not
	return write(ctx, env, req.Agent, req.WriteMeta, []string{"session/" + req.FromSession}, req, func(tx *events.Tx) (*HandoffResult, error) {
		// Decided here, after a retried request id has had its first
		// answer: taking or moving a claim needs fresh sources.
		if len(stale) > 0 && (req.Claim == nil || *req.Claim) {
			return nil, StaleError("resume", stale)
		}
		r, err := resume(tx, pol, req)
		if err != nil {
			return nil, err
		}
		out := &HandoffResult{Checkpoint: r.Checkpoint, RecoveryGaps: []string{}, ProjectRevision: r.ProjectRevision}
		out.Resumed.Session, out.Resumed.FromSession, out.Resumed.Claim = r.Session, r.FromSession, r.Claim
		if r.Checkpoint == nil {
			out.RecoveryGaps = append(out.RecoveryGaps, "the predecessor recorded no checkpoint: there is no digest, next action or open loops to inherit")
		}
		since := tx.Head()
		if r.Checkpoint != nil {
			since = r.Checkpoint.Seq - 1
		}
		if out.Knowledge, err = projections.KnowledgeStateAt(tx.Conn, r.Session.Work, tx.Head(), since); err != nil {
			return nil, err
		}
		out.Knowledge = out.Knowledge.Listed(projections.MaxClosedListed)
		if r.Claim == nil {
			out.RecoveryGaps = append(out.RecoveryGaps, "the successor holds no claim on "+r.Session.Work+" (resumed with --no-claim); take it with: awr claim acquire --session "+r.Session.ID)
		}
		if len(stale) > 0 {
			out.RecoveryGaps = append(out.RecoveryGaps, "context not compiled: "+StaleError("context compile", stale).Error())
			return out, nil
		}
		c, err := compileAt(tx.Conn, tx.Head(), true, r.Session.Work, r.Session.ID, compileOpts{budget: budget, loopCap: env.policy().OpenLoopCap, repo: req.Repo})
		if err != nil {
			if code := fault.As(err).Code; code == fault.Storage || code == fault.Internal {
				return nil, err
			}
			// The session exists; say why its context is not ready rather
			// than hide the resume. Nothing of the packet was appended.
			out.RecoveryGaps = append(out.RecoveryGaps, "context not compiled: "+fault.As(err).Message)
			return out, nil
		}
		if err := recordCompiled(tx, c, r.Session.ID); err != nil {
			return nil, err
		}
		out.ContextReady = c.Completeness.Complete
		out.RecoveryGaps = append(out.RecoveryGaps, c.Completeness.Issues...)
		out.Context, out.Completeness, out.ProjectRevision = c.WorkContext, c.Completeness, c.ProjectRevision
		return out, nil
	})
}
