// Package recovery assembles `awr recovery inspect`: where one session
// stands at a revision (its status and claim, the checkpoint it would
// resume from, its own or inherited, its bindings, predecessor and
// successor, its work's knowledge and the register's changes since the
// checkpoint, the executions a successor must not repeat, the events since
// the checkpoint) and the one command to run next, read from the
// projections. The door adds what only the head can say: whether the
// sources are as indexed and how the repository compares with the
// checkpoint.
package recovery

import (
	"errors"
	"fmt"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/exec"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/idle"
	"github.com/awr-dev/awr/internal/workcontext"
	"github.com/awr-dev/awr/projections"
	"zombiezen.com/go/sqlite"
)

// ClaimState is a session's claim as a reader sees it.
type ClaimState struct {
	projections.Claim
	// StateNow is live, expired, released or moved, judged at the read's
	// clock.
	StateNow string `json:"state_now"`
}

// Report is `awr recovery inspect`: where one session stands at a
// revision.
type Report struct {
	Session       projections.Session     `json:"session"`
	Claim         *ClaimState             `json:"claim"`
	Checkpoint    *projections.Checkpoint `json:"checkpoint"`
	Inherited     bool                    `json:"checkpoint_inherited"`
	Bindings      []projections.Binding   `json:"bindings"`
	PredecessorID string                  `json:"predecessor_id,omitempty"`
	SuccessorID   string                  `json:"successor_id,omitempty"`
	ChangedSince  []events.Envelope       `json:"changed_since_checkpoint"`
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
	Executions     []exec.View `json:"executions"`
	ExecutionCount int         `json:"execution_count"`
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

// ChangedLimit bounds the events a recovery report lists as changed
// since the checkpoint (the first ones after it).
const ChangedLimit = 50

// At reads where session stands at rev, for a reader at now (head is the
// log's head): its status, claim, last checkpoint (its own or inherited),
// the host bindings, its predecessor and successor, what changed on its
// work since that checkpoint, and the exact command to run next. What
// only the head can say (the sources' freshness, the repository now) is
// the door's to add.
// Errors: NotFound for a session unknown at rev.
func At(conn *sqlite.Conn, session string, rev, head, now int64) (*Report, error) {
	rep := &Report{Bindings: []projections.Binding{}, ChangedSince: []events.Envelope{}}
	rep.ProjectRevision = rev
	s, err := projections.SessionAt(conn, session, rev)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, fault.New(fault.NotFound, "recovery inspect: session %s not found at revision %d", session, rev).With("session_id", session).WithHint("awr session list")
	}
	rep.Session, rep.PredecessorID, rep.SuccessorID = *s, s.PredecessorID, s.SuccessorID
	claims, err := projections.SessionClaimsAt(conn, s.ID, rev)
	if err != nil {
		return nil, err
	}
	if len(claims) > 0 {
		c := claims[0]
		rep.Claim = &ClaimState{Claim: c, StateNow: c.StateAt(now)}
		if rep.Claim.StateNow == projections.ClaimHeld {
			rep.Claim.StateNow = "live"
		}
	}
	in, err := workcontext.Gather(conn, rev, rev == head, s.Work, s.ID)
	if err != nil {
		return nil, err
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
	rep.Executions, rep.ExecutionCount = []exec.View{}, in.ExecutionCount
	for i := range in.Executions {
		v, err := exec.ViewAt(conn, head, rev, &in.Executions[i])
		if err != nil {
			return nil, err
		}
		rep.Executions = append(rep.Executions, v)
	}
	if rep.Bindings, err = projections.SessionBindingsAt(conn, s.ID, rev); err != nil {
		return nil, err
	}
	if rep.Bindings == nil {
		rep.Bindings = []projections.Binding{}
	}
	since := int64(0)
	if rep.Checkpoint != nil {
		since = rep.Checkpoint.Seq
	}
	if rep.ChangedSince, err = changedSince(conn, rev, s.Work, since); err != nil {
		return nil, err
	}
	live, err := projections.LiveClaimAt(conn, s.Work, rev, now, rev == head)
	if err != nil {
		return nil, err
	}
	seat, err := projections.SeatOfSession(conn, s.ID)
	if err != nil {
		return nil, err
	}
	rep.NextStep = nextStep(rep, live != nil && live.SessionID != s.ID, seat)
	return rep, nil
}

// changedSince lists the first ChangedLimit events on work after seq
// since, up to rev, sources' own events left out.
func changedSince(conn *sqlite.Conn, rev int64, work string, since int64) ([]events.Envelope, error) {
	out := []events.Envelope{}
	err := projections.ScanLog(conn, projections.LogFilter{Work: work, Since: since, Limit: ChangedLimit, NoSources: true}, rev, ChangedLimit, func(e *events.Event) error {
		if len(out) == ChangedLimit {
			return errFull
		}
		out = append(out, e.ToEnvelope())
		return nil
	})
	if err == errFull {
		err = nil
	}
	return out, err
}

// errFull stops a scan that has what it lists.
var errFull = errors.New("full")

// nextStep is the one command to run next for the session of rep;
// heldByOther says another session holds its work now, seat names the
// seat whose session it is ("" for none).
func nextStep(rep *Report, heldByOther bool, seat string) string {
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
