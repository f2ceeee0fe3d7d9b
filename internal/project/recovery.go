package project

import (
	"context"
	"fmt"
	"strings"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/exec"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/idle"
	"github.com/awr-dev/awr/internal/workcontext"
	"github.com/awr-dev/awr/projections"
)

// ClaimState is a session's claim as a reader sees it.
type ClaimState struct {
	projections.Claim
	// StateNow is live, expired, released or moved, judged at the read's
	// clock.
	StateNow string `json:"state_now"`
}

// RecoveryReport is `awr recovery inspect`.
type RecoveryReport struct {
	Session       projections.Session     `json:"session"`
	Claim         *ClaimState             `json:"claim"`
	Checkpoint    *projections.Checkpoint `json:"checkpoint"`
	Inherited     bool                    `json:"checkpoint_inherited"`
	Bindings      []projections.Binding   `json:"bindings"`
	PredecessorID string                  `json:"predecessor_id,omitempty"`
	SuccessorID   string                  `json:"successor_id,omitempty"`
	ChangedSince  []LogEvent              `json:"changed_since_checkpoint"`
	// Knowledge is the work item's loops, decisions, facts and
	// hypotheses, with those closed since the checkpoint (the
	// projections.MaxClosedListed that closed last; closed_since_more
	// counts the others).
	Knowledge *projections.KnowledgeState `json:"knowledge"`
	// RegisterChanges lists the fields of the work item that changed in
	// its source after the latest checkpoint; NextAction puts the
	// register's next action beside the checkpoint's.
	RegisterChanges []workcontext.FieldChange `json:"register_changed_since_checkpoint"`
	NextAction      workcontext.NextAction    `json:"next_action"`
	// Executions are the latest side effects run on the work item through
	// `awr exec run` (newest first, at most workcontext.MaxExecutions) of
	// ExecutionCount in all: what a successor must not do twice.
	Executions     []ExecutionView `json:"executions"`
	ExecutionCount int             `json:"execution_count"`
	// Repository compares the repository the checkpoint recorded with the
	// repository now (null at a past revision, or without a checkpoint).
	Repository *workcontext.RepoCheck `json:"repository"`
	// StaleSources lists the sources not as indexed at the head (their
	// packet is incomplete and a compile refuses until they are
	// reindexed), MissingSources those among them that cannot be read.
	StaleSources    []string `json:"stale_sources,omitempty"`
	MissingSources  []string `json:"missing_sources,omitempty"`
	NextStep        string   `json:"next_step"`
	ProjectRevision int64    `json:"project_revision"`
}

// RecoveryChangedLimit bounds the events a recovery report lists as changed
// since the checkpoint (the first ones after it).
const RecoveryChangedLimit = 50

// RecoveryInspectRequest is `awr recovery inspect` and awr_recovery_inspect.
type RecoveryInspectRequest struct {
	Session string `name:"session" required:"" json:"session" help:"Session id." placeholder:"ID"`
	Read
}

// RecoveryInspect answers, for a session at a revision, where
// it stands: status, claim, last checkpoint (its own or inherited), the
// host bindings, its predecessor and successor, what changed on its work
// since that checkpoint, and the exact command to run next. It never
// writes.
func (p *Project) RecoveryInspect(ctx context.Context, req RecoveryInspectRequest) (*RecoveryReport, error) {
	session := req.Session
	rep := &RecoveryReport{Bindings: []projections.Binding{}, ChangedSince: []LogEvent{}}
	err := p.read(ctx, req.Read, func(r *events.Reader, rev, now int64) error {
		rep.ProjectRevision = rev
		s, err := projections.SessionAt(r.Conn, session, rev)
		if err != nil {
			return err
		}
		if s == nil {
			return fault.New(fault.NotFound, "recovery inspect: session %s not found at revision %d", session, rev).With("session_id", session).WithHint("awr session list")
		}
		rep.Session, rep.PredecessorID, rep.SuccessorID = *s, s.PredecessorID, s.SuccessorID
		claims, err := projections.SessionClaimsAt(r.Conn, s.ID, rev)
		if err != nil {
			return err
		}
		if len(claims) > 0 {
			c := claims[0]
			rep.Claim = &ClaimState{Claim: c, StateNow: c.StateAt(now)}
			if rep.Claim.StateNow == projections.ClaimHeld {
				rep.Claim.StateNow = "live"
			}
		}
		in, err := workcontext.Gather(r.Conn, rev, rev == r.Head, s.Work, s.ID)
		if err != nil {
			return err
		}
		if in.Latest != nil {
			rep.Checkpoint = in.Latest
			rep.Inherited = in.Latest.SessionID != s.ID
		}
		rep.Knowledge, rep.RegisterChanges, rep.NextAction = in.Knowledge, in.Changed, workcontext.NextActionOf(&in)
		rep.Knowledge = rep.Knowledge.Listed(projections.MaxClosedListed)
		if rep.RegisterChanges == nil {
			rep.RegisterChanges = []workcontext.FieldChange{}
		}
		rep.Executions, rep.ExecutionCount = []ExecutionView{}, in.ExecutionCount
		for i := range in.Executions {
			v, err := exec.ViewAt(r.Conn, r.Head, rev, &in.Executions[i])
			if err != nil {
				return err
			}
			rep.Executions = append(rep.Executions, v)
		}
		if rep.Bindings, err = projections.SessionBindingsAt(r.Conn, s.ID, rev); err != nil {
			return err
		}
		if rep.Bindings == nil {
			rep.Bindings = []projections.Binding{}
		}
		since := int64(0)
		if rep.Checkpoint != nil {
			since = rep.Checkpoint.Seq
		}
		log, err := LogOn(r, rev, LogFilter{Work: s.Work, Since: since, Limit: RecoveryChangedLimit, NoSources: true})
		if err != nil {
			return err
		}
		rep.ChangedSince = log
		live, err := projections.LiveClaimAt(r.Conn, s.Work, rev, now, rev == r.Head)
		if err != nil {
			return err
		}
		seat, err := projections.SeatOfSession(r.Conn, s.ID)
		if err != nil {
			return err
		}
		rep.NextStep = nextStep(rep, live != nil && live.SessionID != s.ID, seat)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !req.Past() {
		// A compile refuses while sources are not as indexed: the next
		// step is what makes it work again, not the compile itself.
		if rep.StaleSources, rep.MissingSources, err = p.sourceFreshness(ctx); err != nil {
			return nil, err
		}
		if compile := "awr context compile "; strings.HasPrefix(rep.NextStep, compile) {
			switch {
			case len(rep.MissingSources) > 0:
				rep.NextStep = "awr source list"
			case len(rep.StaleSources) > 0:
				rep.NextStep = "awr source reindex"
			}
		}
	}
	if !req.Past() && rep.Checkpoint != nil {
		sr, err := p.sessionRepoOf(ctx, session)
		if err != nil {
			return nil, err
		}
		if sr != nil {
			rep.Repository = compareRepo(ctx, sr.dir, rep.Checkpoint)
		}
	}
	return rep, nil
}

// nextStep is the one command to run next for the session of rep;
// heldByOther says another session holds its work now, seat names the
// seat whose session it is ("" for none).
func nextStep(rep *RecoveryReport, heldByOther bool, seat string) string {
	s := rep.Session
	switch {
	case s.SuccessorID != "":
		return "awr recovery inspect --session " + s.SuccessorID
	case s.Status != projections.SessionActive && s.Outcome == "completed":
		return "awr ready"
	case s.Status != projections.SessionActive && heldByOther:
		return fmt.Sprintf(`awr session resume --from-session %s --agent "$USER" --no-claim`, s.ID)
	case s.Status != projections.SessionActive:
		return idle.ResumeCommand(s.ID)
	case heldByOther:
		// Fenced: another session holds the work now.
		return fmt.Sprintf("awr session end --session %s --outcome interrupted", s.ID)
	case rep.Claim != nil && rep.Claim.StateNow == "expired":
		// Its claim lapsed while it was active: its agent is gone, with
		// whatever it did after its last checkpoint. Renewing the claim
		// would keep the work for an agent that never comes back; the
		// session is resumed (a seat's, by relaunching the seat).
		if _, rig, err := commands.ParseAddress(seat); seat != "" && err == nil {
			return "awr rig up " + rig
		}
		return idle.ResumeCommand(s.ID)
	default:
		return fmt.Sprintf("awr context compile --work %s --session %s", s.Work, s.ID)
	}
}
