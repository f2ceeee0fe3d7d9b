package rig

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/projections"
)

// Launch actions a plan may take for a seat.
const (
	ActionStart  = "start"  // first launch: new session, claim, new conversation
	ActionResume = "resume" // successor session, resume the conversation by id
	ActionFresh  = "fresh"  // successor session, new conversation primed from the checkpoint
	ActionVerify = "verify" // launched earlier in this attempt and still running: wait for its report
	ActionNone   = "none"   // nothing is launched
)

// SeatPlan is what `rig up` does, or did, for one seat.
type SeatPlan struct {
	Address string `json:"address"`
	Action  string `json:"action"`
	// Outcome is the outcome the plan expects when the agent cooperates;
	// after apply it is the outcome recorded.
	Outcome      string               `json:"outcome"`
	Reason       string               `json:"reason"`
	SessionID    string               `json:"session_id,omitempty"`
	FromSession  string               `json:"from_session,omitempty"`
	Conversation string               `json:"conversation,omitempty"`
	Evidence     *events.SeatEvidence `json:"evidence,omitempty"`
	Hint         string               `json:"hint,omitempty"`

	// decide: a --fresh decision to record; attention: launch, then ask a
	// person to look (attnWhy says why, for the agent); current is the
	// repository at the decision, recorded with the launch.
	decide    bool
	scope     string
	attention bool
	attnWhy   string
	current   *events.SeatRepo
	seat      *seatState
	// deadSince is when the launched pane was first seen dead without
	// an exit status.
	deadSince time.Time
	// tellPane and tellWhy: the tmux session of an agent left running
	// with attention_required, and why, typed into its pane once the
	// outcome is in the log (so what the agent does about it comes after
	// the record it may read).
	tellPane, tellWhy string
}

// Launches reports whether the plan launches an agent.
func (p *SeatPlan) Launches() bool {
	return p.Action == ActionStart || p.Action == ActionResume || p.Action == ActionFresh
}

// decide chooses what to do with one seat. It reads the environment (the
// seat's directory, its program, the repository) but writes nothing, so
// `rig up --plan` and `rig up` decide alike.
func (m *Manager) decide(ctx context.Context, st *rigState, ss *seatState, fresh bool) *SeatPlan {
	s := &ss.seat
	p := &SeatPlan{Address: s.Address, Action: ActionNone, seat: ss, scope: st.scope(ss)}
	awaiting := func(reason string) *SeatPlan {
		p.Outcome, p.Reason = events.SeatAwaitingDecision, reason
		p.Hint = fmt.Sprintf("awr rig up %s --fresh %s", st.rig, s.Address)
		return p
	}
	decided := s.Decision == events.DecisionFresh && s.DecisionScope == p.scope
	if fresh && !decided {
		p.decide = true
	}
	fresh = fresh || decided
	if m.decideLive(ctx, ss, p, fresh) {
		return p
	}
	if n := len(ss.successors); n > 0 {
		// Relaunching would resume the seat's session a second time, or
		// run a second agent beside the one resumed by hand.
		awaiting(fmt.Sprintf("session %s was resumed by hand as %s; adopt it, so it is not resumed twice", s.SessionID, ss.successors[n-1]))
		p.Hint = reconcileHint(s.Address)
		return p
	}
	// The seat is stopped, or its session is active but its agent is gone
	// (a machine restart): it needs a launch.
	cwd := m.seatDir(s.Cwd)
	if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
		p.Outcome, p.Reason = events.SeatFailed, fmt.Sprintf("working directory %s does not exist", cwd)
		p.Evidence = &events.SeatEvidence{Error: "cwd missing: " + cwd}
		p.Hint = fmt.Sprintf("awr seat add %s --runtime %s --cwd DIR", s.Address, s.Runtime)
		return p
	}
	start, resume := seatCommands(&s.SeatDeclared)
	conv := s.LastConversation
	if ss.snap != nil {
		conv = ss.snap.Conversation
	}
	everHad := s.LastConversation != "" || conv != ""
	p.FromSession = s.SessionID
	tmpl := start
	cannotTell := false
	switch {
	case s.SessionID == "":
		p.Action, p.Outcome, p.Reason = ActionStart, events.SeatFreshPrimed, "first launch: a new conversation primed with the compiled context"
	case fresh:
		p.Action, p.Outcome = ActionFresh, events.SeatFreshPrimed
		p.Reason = "decided: --fresh; a new conversation primed with the context compiled from the last checkpoint"
		if decided {
			p.Reason = "decision recorded earlier: fresh; a new conversation primed with the context compiled from the last checkpoint"
		}
	case s.Policy == events.PolicyCheckpointOnly:
		return awaiting("policy checkpoint_only: the checkpoint is kept and nothing is launched until someone decides")
	case s.LastOutcome == events.SeatAwaitingDecision && s.LastOutcomeSeq > s.LaunchedSeq:
		return awaiting("still awaiting a decision: " + s.LastReason)
	case s.Policy == events.PolicyRelaunchFresh:
		p.Action, p.Outcome, p.Reason = ActionFresh, events.SeatFreshPrimed, "policy relaunch_fresh: a new conversation primed with the context compiled from the last checkpoint"
	case !everHad:
		p.Action, p.Outcome, p.Reason = ActionFresh, events.SeatFreshPrimed, "the seat never had a conversation: a new one primed with the context compiled from the last checkpoint"
	case conv == "":
		return awaiting("the conversation id is unknown, so the original conversation cannot be resumed")
	case resume == "":
		return awaiting(fmt.Sprintf("runtime %s has no resume command, so conversation %s cannot be resumed", s.Runtime, conv))
	default:
		found, where := m.conversationExists(&s.SeatDeclared, cwd, conv, os.Getenv) // internal/rig/conversation.go
		if !found {
			return awaiting(missingConversation(&s.SeatDeclared, conv, where))
		}
		p.Action, p.Outcome, p.Conversation, tmpl = ActionResume, events.SeatResumed, conv, resume
		p.Reason = fmt.Sprintf("resume conversation %s", conv)
		cannotTell = where == ""
	}
	if s.SessionID == "" {
		p.FromSession = ""
	}
	if ss.workIssue != "" {
		p.Action, p.Outcome, p.Reason = ActionNone, events.SeatFailed, ss.workIssue
		p.Evidence = &events.SeatEvidence{Error: ss.workIssue}
		p.Hint = "awr ready --all"
		if s.Work == "" {
			p.Hint = fmt.Sprintf("awr seat add %s --runtime %s --work KEY", s.Address, s.Runtime)
		}
		return p
	}
	if prog, ok := findProgram(tmpl, cwd, m.agentPath()); !ok {
		p.Action, p.Outcome, p.Reason = ActionNone, events.SeatFailed, fmt.Sprintf("command not found: %s", prog)
		p.Evidence = &events.SeatEvidence{Error: "command not found: " + prog, Command: tmpl}
		p.Hint = fmt.Sprintf("awr seat add %s --runtime %s --command 'my-agent {context_file}'", s.Address, s.Runtime)
		return p
	}
	if cannotTell {
		p.untold(conv)
	}
	p.compareRepo(ctx, m, ss, cwd)
	p.pendingAttention(s)
	return p
}

// decideLive decides for a seat this attempt already restored, or whose
// agent runs: it reports whether it decided.
func (m *Manager) decideLive(ctx context.Context, ss *seatState, p *SeatPlan, fresh bool) bool {
	s := &ss.seat
	switch {
	case ss.attempt != nil && !(fresh && ss.attempt.Outcome == events.SeatAwaitingDecision) && attemptHolds(ss):
		p.Outcome, p.Reason, p.SessionID, p.Conversation = ss.attempt.Outcome, "restored earlier in this attempt: "+ss.attempt.Reason, ss.attempt.SessionID, ss.attempt.Conversation
		p.Evidence = ss.attempt.Evidence
		return true
	case ss.alive && ss.launched:
		p.Action, p.SessionID, p.Conversation = ActionVerify, s.SessionID, s.ExpectedConversation
		p.Outcome, p.Reason = events.SeatFreshPrimed, "launched earlier in this attempt; waiting for its report"
		if s.LaunchMode == events.LaunchResume {
			p.Outcome = events.SeatResumed
			if found, where := m.conversationExists(&s.SeatDeclared, m.seatDir(s.Cwd), s.ExpectedConversation, os.Getenv); found && where == "" {
				p.untold(s.ExpectedConversation)
			}
		}
		p.compareRepo(ctx, m, ss, m.seatDir(s.Cwd))
		p.pendingAttention(s)
		return true
	case ss.alive:
		p.Outcome, p.SessionID, p.Conversation = events.SeatRunning, s.SessionID, s.Conversation
		p.Reason = fmt.Sprintf("already running in tmux session %s; nothing launched", s.TmuxSession)
		if s.AttentionSeq != 0 {
			p.Outcome = events.SeatAttentionRequired
			p.Reason = fmt.Sprintf("running in tmux session %s, but the attention_required recorded at seq %d is not answered yet: %s", s.TmuxSession, s.AttentionSeq, s.AttentionReason)
			p.Evidence = &events.SeatEvidence{PendingAttention: s.AttentionReason}
		}
		return true
	}
	return false
}

// pendingAttention carries an unanswered attention_required into a
// launch's outcome.
func (p *SeatPlan) pendingAttention(s *projections.Seat) {
	if s.AttentionSeq == 0 {
		return
	}
	why := fmt.Sprintf("the attention_required recorded at seq %d is not answered yet", s.AttentionSeq)
	p.attend(why, why)
	if p.Evidence == nil {
		p.Evidence = &events.SeatEvidence{}
	}
	p.Evidence.PendingAttention = s.AttentionReason
}

// attend marks a launch that must end in attention_required, and says
// why: to a person in the reason, to the agent in forAgent (typed into its
// pane, so it names nothing the agent would take as a request).
func (p *SeatPlan) attend(why, forAgent string) {
	p.attention = true
	p.Outcome = events.SeatAttentionRequired
	p.Reason += "; but " + why + ": look before work continues"
	if p.attnWhy != "" {
		p.attnWhy += "; "
	}
	p.attnWhy += forAgent
}

// compareRepo compares the seat's repository now with the newest state
// recorded for it (snapshot, checkpoint, launch): a moved HEAD or changed
// dirty content asks a person to look, with both states in the evidence.
func (p *SeatPlan) compareRepo(ctx context.Context, m *Manager, ss *seatState, cwd string) {
	d := m.repoDrift(ctx, ss, cwd)
	if d.current == nil {
		return
	}
	p.current = d.current
	if d.change == "" {
		return
	}
	p.Evidence = d.evidence
	why, forAgent := d.change+" since the "+ss.ref.label, d.change+" since awr last recorded it"
	if !ss.stopConfirmed() {
		why += ", and no checkpoint confirmed the seat's last stop: the difference may be work its agent never recorded"
		forAgent += "; your predecessor stopped without a checkpoint, so this may be its unrecorded work"
	}
	p.attend(why, forAgent)
}

// untold marks a resume awr cannot check: the runtime keeps its
// conversations where awr cannot look (a generic seat without
// --conversation-store), so an agent that silently starts an empty
// conversation under the old id would pass for resumed. The agent is
// launched, then a person must look.
func (p *SeatPlan) untold(conv string) {
	p.attend(fmt.Sprintf("awr cannot tell whether conversation %s was resumed with its history (the seat declares no --conversation-store)", conv),
		fmt.Sprintf("awr cannot tell whether conversation %s was resumed with its history", conv))
}

// drift is a seat's repository now against its reference.
type drift struct {
	// current is the repository now; nil when the seat has no reference
	// or its directory is not a git work tree.
	current *events.SeatRepo
	// want is the reference, without the project's .awr.
	want events.SeatRepo
	// change says what changed ("" when nothing did); evidence holds both
	// states.
	change   string
	evidence *events.SeatEvidence
}

// repoDrift compares the seat's repository in cwd with its reference. A
// reference recorded dirty without a fingerprint (before they were
// recorded) is compared by its dirty flag only.
func (m *Manager) repoDrift(ctx context.Context, ss *seatState, cwd string) drift {
	ref := ss.ref
	if ref == nil {
		return drift{}
	}
	cur, awrRel, ok := m.repoState(ctx, cwd)
	if !ok {
		return drift{}
	}
	want := ref.repo
	if ref.state != nil && awrRel != "" {
		st := ref.state.Without(awrRel)
		want = events.SeatRepo{Head: st.Head, Dirty: st.Dirty, DirtyFingerprint: st.DirtyFingerprint}
	}
	d := drift{current: cur, want: want}
	content := want.Dirty != cur.Dirty
	if !content && (!want.Dirty || want.DirtyFingerprint != "") {
		content = want.DirtyFingerprint != cur.DirtyFingerprint
	}
	if want.Head == cur.Head && !content {
		return d
	}
	d.evidence = &events.SeatEvidence{Reference: ref.label, SnapshotHead: want.Head, CurrentHead: cur.Head, SnapshotDirty: want.Dirty, CurrentDirty: cur.Dirty,
		SnapshotFingerprint: want.DirtyFingerprint, CurrentFingerprint: cur.DirtyFingerprint}
	d.change = repoChange(want, *cur)
	return d
}

// attemptHolds says whether the outcome recorded for the seat earlier in
// the unfinished attempt still describes it: an agent reported running
// must still run (after a crash and a machine restart it may not); a seat
// left stopped (awaiting a decision, failed) stays as recorded.
func attemptHolds(ss *seatState) bool {
	switch ss.attempt.Outcome {
	case events.SeatAwaitingDecision, events.SeatFailed:
		return true
	}
	return ss.alive
}

func repoChange(old, cur events.SeatRepo) string {
	switch {
	case old.Head != cur.Head:
		return fmt.Sprintf("the repository HEAD moved from %s to %s", short(old.Head), short(cur.Head))
	case cur.Dirty && old.Dirty:
		return "the worktree's uncommitted changes are different"
	case cur.Dirty:
		return "the worktree changed"
	default:
		return "the worktree's uncommitted changes are gone"
	}
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// seatDir resolves a seat's --cwd against the project directory.
func (m *Manager) seatDir(cwd string) string {
	if cwd == "" {
		return m.Dir
	}
	if filepath.IsAbs(cwd) {
		return cwd
	}
	return filepath.Join(m.Dir, cwd)
}

// agentPath is the PATH agents get: awr's own directory first.
func (m *Manager) agentPath() string {
	path := os.Getenv("PATH")
	if m.AwrBin != "" {
		path = filepath.Dir(m.AwrBin) + string(os.PathListSeparator) + path
	}
	return path
}
