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
	"fmt"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/cursor"
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
	Session    projections.Session     `json:"session"`
	Claim      *ClaimState             `json:"claim"`
	Checkpoint *projections.Checkpoint `json:"checkpoint"`
	Inherited  bool                    `json:"checkpoint_inherited"`
	// Bindings are a page of the conversations bound to the session, by
	// external session, after Page.BindingsAfter: BindingsTotal counts
	// every one and BindingsNextCursor, when more follow, is the
	// --bindings-cursor of the next page.
	Bindings           []projections.Binding `json:"bindings"`
	BindingsTotal      int                   `json:"bindings_total"`
	BindingsNextCursor string                `json:"bindings_next_cursor,omitempty"`
	PredecessorID      string                `json:"predecessor_id,omitempty"`
	SuccessorID        string                `json:"successor_id,omitempty"`
	// ChangedSince is a page of the events on the session's work after
	// ChangedSinceSeq (the checkpoint's seq, or a page's cursor), oldest
	// first, sources' own events left out; ChangedMore counts those
	// after the page, and ChangedNextSince is the cursor of the next
	// page (Page.ChangedAfter), 0 when this page is the last.
	ChangedSince     []events.Envelope `json:"changed_since_checkpoint"`
	ChangedSinceSeq  int64             `json:"changed_since_seq"`
	ChangedMore      int               `json:"changed_since_more,omitempty"`
	ChangedNextSince int64             `json:"changed_next_since,omitempty"`
	// Knowledge is the work item's loops, decisions, facts and
	// hypotheses, with a page of those closed since the checkpoint: the
	// items closed after knowledge.closed_since_seq (the seq before the
	// checkpoint's, or a page's cursor), in the order they closed;
	// closed_since_more counts those after the page, and ClosedNextSince
	// is the cursor of the next page (Page.ClosedAfter), 0 when this
	// page is the last. Knowledge is null without a checkpoint.
	Knowledge       *projections.KnowledgeState `json:"knowledge"`
	ClosedNextSince int64                       `json:"closed_next_since,omitempty"`
	// The items in force (knowledge's open loops, decisions, facts and
	// hypotheses) are a page too, in that order and each by number
	// (projections.KnowledgeState.InForcePage): KnowledgeTotal counts
	// every one, and KnowledgeNextCursor, when more follow, is the
	// --knowledge-cursor of the next page (Page.KnowledgeAfter).
	KnowledgeTotal      int    `json:"knowledge_total"`
	KnowledgeNextCursor string `json:"knowledge_next_cursor,omitempty"`
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

// DefaultLimit is the page of each list a report holds (the events
// changed since the checkpoint, the items closed since) when Page.Limit
// is 0, and MaxLimit the largest page: a longer list is paged with the
// report's cursors, or streamed (Each).
const (
	DefaultLimit = 50
	MaxLimit     = 1000
)

// Page selects the page of each list a report holds: the events changed
// after ChangedAfter (nil: after the checkpoint), the items closed after
// ClosedAfter (nil: since the checkpoint), the items in force after
// KnowledgeAfter (nil: from the first) and the bindings after the
// external session BindingsAfter ("": from the first), at most Limit of
// each (0: DefaultLimit; negative: no changed or closed list, for a
// caller that streams them with Each, and every item in force and every
// binding). A page of closed
// items holds whole checkpoints: it ends before a checkpoint's closes
// that would take it past Limit, unless they are its first.
type Page struct {
	ChangedAfter   *int64
	ClosedAfter    *int64
	KnowledgeAfter *projections.KnowledgePlace
	BindingsAfter  string
	Limit          int
}

// At reads where session stands at rev, for a reader at now (head is the
// log's head): its status, claim, last checkpoint (its own or inherited),
// the host bindings, its predecessor and successor, what changed on its
// work since that checkpoint, and the exact command to run next. What
// only the head can say (the sources' freshness, the repository now) is
// the door's to add.
// The lists are pages (see Page): each with the count of what follows
// it and the cursor of the next page.
// Errors: NotFound for a session unknown at rev; InvalidInput for a
// cursor outside its list (before the checkpoint, beyond rev, or a
// closed-items cursor without a checkpoint).
func At(conn *sqlite.Conn, session string, rev, head, now int64, page Page) (*Report, error) {
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
	// The claim is the session's latest: the highest fencing token.
	claims, _, err := projections.SessionClaimsPageAt(conn, s.ID, rev, nil, 1)
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
	in, err := workcontext.GatherOpen(conn, rev, rev == head, s.Work, s.ID)
	if err != nil {
		return nil, err
	}
	if in.Latest != nil {
		rep.Checkpoint = in.Latest
		rep.Inherited = in.Latest.SessionID != s.ID
	}
	rep.Knowledge, rep.RegisterChanges, rep.NextAction = in.Knowledge, in.Changed, workcontext.NextActionOf(&in)
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
	if err := rep.bindings(conn, rev, page); err != nil {
		return nil, err
	}
	if err := rep.lists(conn, rev, head, page); err != nil {
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

// bindings reads rep's page of the conversations bound to its session at
// rev, their total and the cursor of the next page.
func (rep *Report) bindings(conn *sqlite.Conn, rev int64, page Page) (err error) {
	id := rep.Session.ID
	if rep.BindingsTotal, err = projections.SessionBindingCountAt(conn, id, rev); err != nil {
		return err
	}
	limit := page.Limit
	switch {
	case limit < 0:
		limit = 0 // every one
	case limit == 0:
		limit = DefaultLimit
	}
	bs, more, err := projections.SessionBindingsPageAt(conn, id, rev, page.BindingsAfter, limit)
	if err != nil {
		return err
	}
	if more {
		rep.BindingsNextCursor = cursor.EncodeBinding(bs[len(bs)-1].ExternalSession)
	}
	if bs == nil {
		bs = []projections.Binding{}
	}
	rep.Bindings = bs
	return nil
}

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
