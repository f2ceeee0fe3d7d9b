package project

import (
	"context"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/intake"
)

// IntakeResult is `awr intake inspect` (intake.Inspection).
type IntakeResult = intake.Inspection

// GoalView is a goal with the work items that serve it (intake inspect's
// and status's goals[]).
type GoalView = intake.GoalView

// SourcesResult is `awr source list`.
type SourcesResult struct {
	ProjectRevision int64                `json:"project_revision"`
	Sources         []intake.SourceState `json:"sources"`
}

// IntakeInspectRequest is `awr intake inspect` and awr_intake_inspect.
type IntakeInspectRequest struct {
	Read
}

// IntakeInspect reports how organized the project is, as of the request's
// revision: its state, the gaps with their source references, the actions
// in order, and the work an agent can start on. It answers for a project
// without a log too (not initialized).
func (p *Project) IntakeInspect(ctx context.Context, req IntakeInspectRequest) (*IntakeResult, error) {
	if !p.exists() {
		return intake.Uninitialized(), nil
	}
	m, _, err := intake.ReadManifest(p.dir)
	if err != nil {
		return nil, err
	}
	return readResult(ctx, p, req.Read, func(r *events.Reader, rev, now int64) (*IntakeResult, error) {
		return intake.Inspect(r, p.dir, m, rev, now)
	})
}

// SourceListRequest is `awr source list` and awr_source_list.
type SourceListRequest struct {
	Read
}

// SourceList lists each manifest source (or, at a past revision, each indexed
// source) with its adapter, hash, the revision it was indexed at and its
// freshness: fresh, stale, missing or not_indexed.
func (p *Project) SourceList(ctx context.Context, req SourceListRequest) (*SourcesResult, error) {
	dir := p.dir
	m, _, err := intake.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	res := &SourcesResult{}
	err = p.read(ctx, req.Read, func(r *events.Reader, rev, now int64) error {
		_, states, err := intake.FactsAt(r, dir, m, rev, now)
		res.ProjectRevision, res.Sources = rev, states
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// Organization is the organization report of a project: its state, gaps,
// actions and executable work.
type Organization = intake.Organization
