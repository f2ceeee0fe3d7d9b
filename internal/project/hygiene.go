package project

import (
	"cmp"
	"context"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/hygiene"
	"github.com/awr-dev/awr/internal/repo"
	"github.com/awr-dev/awr/projections"
)

// Kinds of hygiene findings (internal/hygiene): each is evidence that an
// item died or was completed, quoted in the finding; age alone is never
// one.
const (
	FindingAnswered           = hygiene.FindingAnswered
	FindingLoopCommitted      = hygiene.FindingLoopCommitted
	FindingLoopTicked         = hygiene.FindingLoopTicked
	FindingSourceChangedAfter = hygiene.FindingSourceChangedAfter
	FindingHeadNotAncestor    = hygiene.FindingHeadNotAncestor
	FindingDuplicate          = hygiene.FindingDuplicate
)

// HygieneRequest is `awr context hygiene` and awr_context_hygiene.
type HygieneRequest struct {
	Work string `name:"work" json:"work,omitempty" help:"Only this work item (default: every work item with loops, decisions, facts or hypotheses)." placeholder:"KEY"`
	Read
}

// HygieneReport is what `awr context hygiene` lists: its findings, each
// a Finding with the Evidence it stands on.
type (
	HygieneReport = hygiene.Report
	Finding       = hygiene.Finding
	Evidence      = hygiene.Evidence
)

// ContextConfirmRequest is `awr context confirm` and awr_context_confirm.
type ContextConfirmRequest = commands.ConfirmKnowledgeRequest

// ContextConfirmResult is the item confirmed and the event that recorded
// it.
type ContextConfirmResult = commands.ConfirmKnowledgeResult

// ContextConfirm records that a live loop, decision, fact or hypothesis
// still holds, with the repository's HEAD in the directory of the session
// that opened it (none when it is not a repository), so hygiene stops
// quoting the evidence seen by then. Errors: those of
// commands.ConfirmKnowledge.
func (p *Project) ContextConfirm(ctx context.Context, req ContextConfirmRequest) (*ContextConfirmResult, error) {
	var opened string
	err := p.read(ctx, Read{}, func(r *events.Reader, rev, _ int64) (err error) {
		opened, err = hygiene.OpenedDir(r.Conn, p.dir, req.Work, req.ID, rev)
		return err
	})
	if err != nil {
		return nil, err
	}
	dir := cmp.Or(opened, p.dir)
	if st, err := repo.Capture(ctx, dir); err == nil {
		req.Head = st.Head
	}
	return command(ctx, p, commands.ConfirmKnowledge, req)
}

// ContextHygiene lists what deserves pruning (read-only; internal/hygiene
// finds it): every work item with knowledge, or req.Work's, from the log
// at the read's revision, then, at the head only, the repository.
func (p *Project) ContextHygiene(ctx context.Context, req HygieneRequest) (*HygieneReport, error) {
	h := hygiene.New(p.dir)
	err := p.read(ctx, req.Read, func(r *events.Reader, rev, _ int64) error {
		works := []string{req.Work}
		if req.Work != "" {
			if err := commands.KnownWork(r.Conn, "context hygiene", req.Work, rev); err != nil {
				return err
			}
		} else {
			all, err := projections.AllKnowledgeWorkAt(r.Conn, rev)
			if err != nil {
				return err
			}
			works = all
		}
		return h.Read(r.Conn, works, rev, rev == r.Head, !req.Past())
	})
	if err != nil {
		return nil, err
	}
	if !req.Past() {
		h.CheckRepository(ctx)
	}
	return h.Report(), nil
}
