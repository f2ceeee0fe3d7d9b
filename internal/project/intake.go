package project

import (
	"context"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/projections"
)

// IntakeResult is `awr intake inspect`.
type IntakeResult struct {
	ProjectRevision int64                `json:"project_revision"`
	Organization    intake.Organization  `json:"organization"`
	Sources         []intake.SourceState `json:"sources"`
	ExecutableWork  []string             `json:"executable_work"`
	// AwaitingVerification lists the items the source marks completed for
	// which the log holds no work_verified: awr never takes a source's
	// word for done (awr work complete records it with evidence).
	AwaitingVerification []string `json:"awaiting_verification"`
	NextAction           string   `json:"next_action"`
	// Goals are the project's goals, each with the work that serves it
	// (omitted when there is none).
	Goals []intake.GoalView `json:"goals,omitempty"`
}

// GoalView is a goal with the work items that serve it (intake inspect's
// and status's goals[]).
type GoalView = intake.GoalView

// SourcesResult is `awr source list`.
type SourcesResult struct {
	ProjectRevision int64                `json:"project_revision"`
	Sources         []intake.SourceState `json:"sources"`
}

// facts gathers what the organization report needs from the projections
// at rev and, at the head, the freshness of the manifest's files.
func facts(r *events.Reader, dir string, m *intake.Manifest, rev, now int64) (intake.Facts, []intake.SourceState, error) {
	f := intake.Facts{Initialized: true}
	indexed, err := projections.SourcesAt(r.Conn, rev, rev == r.Head)
	if err != nil {
		return f, nil, err
	}
	var states []intake.SourceState
	if rev == r.Head && m != nil {
		states = intake.Compare(dir, m, indexed)
	} else {
		for _, s := range indexed {
			states = append(states, intake.SourceState{Path: s.Path, Adapter: s.Adapter, Role: s.Role, ContentHash: s.ContentHash,
				RevisionIndexed: s.Revision, Items: s.ItemCount, Issues: len(s.Issues), Freshness: "as_indexed"})
		}
	}
	if states == nil {
		states = []intake.SourceState{}
	}
	f.Sources = states
	for _, s := range indexed {
		f.Issues = append(f.Issues, s.Issues...)
	}
	if f.Readiness, err = projections.ReadinessAt(r.Conn, rev, now, rev == r.Head); err != nil {
		return f, nil, err
	}
	if f.Goals, err = projections.GoalsAt(r.Conn, rev); err != nil {
		return f, nil, err
	}
	if f.Rules, err = projections.RulesAt(r.Conn, rev); err != nil {
		return f, nil, err
	}
	return f, states, nil
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
	dir := p.dir
	if !p.exists() {
		org := intake.Organize(intake.Facts{})
		return &IntakeResult{Organization: org, Sources: []intake.SourceState{}, ExecutableWork: org.ExecutableWork, AwaitingVerification: []string{}, NextAction: org.NextAction}, nil
	}
	m, _, err := intake.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	res := &IntakeResult{}
	err = p.read(ctx, req.Read, func(r *events.Reader, rev, now int64) error {
		f, states, err := facts(r, dir, m, rev, now)
		if err != nil {
			return err
		}
		res.ProjectRevision, res.Sources = rev, states
		if len(f.Goals) > 0 {
			res.Goals = intake.LinkGoals(f.Goals, f.Readiness)
		}
		res.AwaitingVerification = []string{}
		for _, rd := range f.Readiness {
			if rd.Item.Status != projections.StatusCompleted {
				continue
			}
			vs, err := projections.WorkEventsAt(r.Conn, rd.Item.Key, events.KindWorkVerified, rev, 1)
			if err != nil {
				return err
			}
			if len(vs) == 0 {
				res.AwaitingVerification = append(res.AwaitingVerification, rd.Item.Key)
			}
		}
		res.Organization = intake.Organize(f)
		res.ExecutableWork, res.NextAction = res.Organization.ExecutableWork, res.Organization.NextAction
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
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
		_, states, err := facts(r, dir, m, rev, now)
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
