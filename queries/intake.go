package queries

import (
	"context"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/intake"
	"github.com/awr-dev/awr/projections"
	"github.com/awr-dev/awr/replay"
)

// IntakeResult is `awr intake inspect`.
type IntakeResult struct {
	ProjectRevision int64                `json:"project_revision"`
	Organization    intake.Organization  `json:"organization"`
	Sources         []intake.SourceState `json:"sources"`
	ExecutableWork  []string             `json:"executable_work"`
	NextAction      string               `json:"next_action"`
}

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

// Intake reports how organized the project is, as of at: its state, the
// gaps with their source references, the actions in order, and the work an
// agent can start on. store nil means the project is not initialized.
func Intake(ctx context.Context, store *events.Store, dir string, at At) (*IntakeResult, error) {
	if store == nil {
		org := intake.Organize(intake.Facts{})
		return &IntakeResult{Organization: org, Sources: []intake.SourceState{}, ExecutableWork: org.ExecutableWork, NextAction: org.NextAction}, nil
	}
	m, _, err := intake.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	res := &IntakeResult{}
	err = store.Read(ctx, func(r *events.Reader) error {
		rev, now, err := replay.ResolveAt(r, at.Rev, at.Now.UnixMilli())
		if err != nil {
			return err
		}
		f, states, err := facts(r, dir, m, rev, now)
		if err != nil {
			return err
		}
		res.ProjectRevision, res.Sources = rev, states
		res.Organization = intake.Organize(f)
		res.ExecutableWork, res.NextAction = res.Organization.ExecutableWork, res.Organization.NextAction
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// Sources lists each manifest source (or, at a past revision, each indexed
// source) with its adapter, hash, the revision it was indexed at and its
// freshness: fresh, stale, missing or not_indexed.
func Sources(ctx context.Context, store *events.Store, dir string, at At) (*SourcesResult, error) {
	m, _, err := intake.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	res := &SourcesResult{}
	err = store.Read(ctx, func(r *events.Reader) error {
		rev, now, err := replay.ResolveAt(r, at.Rev, at.Now.UnixMilli())
		if err != nil {
			return err
		}
		_, states, err := facts(r, dir, m, rev, now)
		res.ProjectRevision, res.Sources = rev, states
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// IndexedSources lists the sources the log holds at the head, whatever the
// manifest says now.
func IndexedSources(ctx context.Context, store *events.Store) ([]projections.Source, error) {
	var out []projections.Source
	err := store.Read(ctx, func(r *events.Reader) error {
		var err error
		out, err = projections.SourcesAt(r.Conn, r.Head, true)
		return err
	})
	return out, err
}
