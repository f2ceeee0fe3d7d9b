package project

import (
	"context"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/fault"
	"github.com/awr-dev/awr/intake"
)

// SourceReindexRequest is `awr source reindex` and awr_source_reindex.
type SourceReindexRequest struct {
	Force bool `name:"force" json:"force,omitempty" help:"Index every source, changed or not."`
	WriteMeta
}

// ReindexResult is `awr source reindex`.
type ReindexResult struct {
	*commands.IndexSourcesResult
	Missing []string `json:"missing"`
}

// SourceReindex reads every manifest source and, in one transaction,
// appends source_indexed for each one that changed (every one with force)
// and a removal for each indexed path no longer in the manifest: what is
// compared and what is written are the same revision. Files listed but
// absent are reported as missing.
// Errors: NotFound without a manifest; those of commands.IndexSources.
func (p *Project) SourceReindex(ctx context.Context, req SourceReindexRequest) (*ReindexResult, error) {
	env, err := p.Env(ctx)
	if err != nil {
		return nil, err
	}
	m, ok, err := intake.ReadManifest(p.dir)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fault.New(fault.NotFound, "source reindex: %s is missing", intake.ManifestPath(p.dir)).WithHint("awr init")
	}
	in := commands.IndexSourcesRequest{Force: req.Force, Prune: true, WriteMeta: req.WriteMeta}
	res := &ReindexResult{Missing: []string{}}
	for _, ms := range m.Sources {
		in.Listed = append(in.Listed, ms.Path)
		si, missing := intake.Read(p.dir, ms)
		if missing {
			res.Missing = append(res.Missing, ms.Path)
			continue
		}
		in.Sources = append(in.Sources, si)
	}
	out, err := commands.IndexSources(ctx, env, in)
	if err != nil {
		return nil, err
	}
	res.IndexSourcesResult = out
	return res, nil
}

// SourceAddRequest is `awr source add` and awr_source_add.
type SourceAddRequest struct {
	Path    string `arg:"" name:"path" json:"path" help:"Project-relative path of the file." placeholder:"PATH"`
	Adapter string `name:"adapter" json:"adapter,omitempty" help:"Adapter (default: chosen by name and content)." placeholder:"NAME"`
	Role    string `name:"role" json:"role,omitempty" help:"tasks, goals, plan or rules (default: chosen by name)." placeholder:"ROLE"`
}

// SourceAddResult is `awr source add`.
type SourceAddResult struct {
	Source          intake.ManifestSource `json:"source"`
	Indexed         *commands.IndexResult `json:"indexed"`
	ProjectRevision int64                 `json:"project_revision"`
	// Items is how many work items the file holds (for the text output).
	Items int `json:"-"`
}

// SourceAdd adds a file of the project to the manifest and indexes it, in
// that order of truth: the file is read and indexed first, and the manifest
// changes only once the index is committed. Concurrent adds (several
// agents, several processes) are serialized on a lock of the manifest, so
// none loses another's entry.
// Errors: NotFound without a log; InvalidInput for a missing file or a
// path outside the project; those of commands.IndexSources.
func (p *Project) SourceAdd(ctx context.Context, req SourceAddRequest) (*SourceAddResult, error) {
	env, err := p.Env(ctx)
	if err != nil {
		return nil, err
	}
	unlock, err := p.lockManifest()
	if err != nil {
		return nil, err
	}
	defer unlock()
	m, ms, err := intake.AddSource(p.dir, p.fromWorkingDir(req.Path), req.Adapter, req.Role)
	if err != nil {
		return nil, err
	}
	si, missing := intake.Read(p.dir, ms)
	if missing {
		return nil, fault.New(fault.InvalidInput, "source add: %s is missing", ms.Path).With("path", ms.Path)
	}
	out, err := commands.IndexSources(ctx, env, commands.IndexSourcesRequest{Sources: []events.SourceIndexed{si}})
	if err != nil {
		return nil, err
	}
	if err := intake.WriteManifest(p.dir, m); err != nil {
		return nil, err
	}
	res := &SourceAddResult{Source: ms, ProjectRevision: out.ProjectRevision, Items: len(si.Items)}
	if len(out.Indexed) > 0 {
		res.Indexed = &out.Indexed[0]
	}
	return res, nil
}
