package project

import (
	"context"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/internal/intake"
	"github.com/awr-dev/awr/projections"
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
	// Changes says, for each source indexed anew, which work items it
	// added, changed and removed (omitted when none was).
	Changes []intake.ItemChanges `json:"changes,omitempty"`
}

// SourceReindex reads every manifest source and, in one transaction,
// appends source_indexed for each one that changed (every one with force)
// and a removal for each indexed path no longer in the manifest: what is
// compared and what is written are the same revision. Files listed but
// absent are reported as missing. When a read shows that nothing would
// be appended (and neither force nor a request id nor an expected
// revision is given), that read is the answer: no file is parsed and no
// write is begun.
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
	if !req.Force && req.WriteMeta == (commands.WriteMeta{}) {
		if res, err := p.reindexUnchanged(ctx, m); res != nil || err != nil {
			return res, err
		}
	}
	in := commands.IndexSourcesRequest{Force: req.Force, Prune: true, WriteMeta: req.WriteMeta}
	res := &ReindexResult{Missing: []string{}}
	var missing []string
	in.Sources, in.Listed, missing = intake.ReadAll(p.dir, m, p.progress("reading sources"))
	res.Missing = append(res.Missing, missing...)
	before, err := p.itemsBySource(ctx)
	if err != nil {
		return nil, err
	}
	out, err := commands.IndexSources(ctx, env, in)
	if err != nil {
		return nil, err
	}
	res.IndexSourcesResult = out
	res.Changes = intake.Changes(out.Indexed, in.Sources, before)
	return res, nil
}

// itemsBySource reads the work items of each indexed source at the head.
func (p *Project) itemsBySource(ctx context.Context) (map[string][]events.WorkItem, error) {
	out := map[string][]events.WorkItem{}
	err := p.read(ctx, commands.Read{}, func(r *events.Reader, rev, _ int64) error {
		items, err := projections.WorkItemsAt(r.Conn, rev, true)
		for _, it := range items {
			out[it.SourcePath] = append(out[it.SourcePath], it.WorkItem)
		}
		return err
	})
	return out, err
}

// reindexUnchanged is the answer of a reindex that would append nothing,
// found by a read: every source the manifest lists that is on disk hashes
// to what the log holds for it with the same options, and nothing indexed
// is left out of the manifest. It is nil (and the caller indexes in a
// write, parsing every source) as soon as one of those fails. The answer
// is the one the write would give at the revision read: no file is
// parsed, no lock is taken and nothing is written.
func (p *Project) reindexUnchanged(ctx context.Context, m *intake.Manifest) (*ReindexResult, error) {
	var res *ReindexResult
	err := p.read(ctx, commands.Read{}, func(r *events.Reader, rev, _ int64) error {
		indexed, err := projections.SourcesAt(r.Conn, rev, true)
		if err != nil {
			return err
		}
		unchanged, missing, ok := intake.Unchanged(p.dir, m, indexed)
		if ok {
			res = &ReindexResult{Missing: missing, IndexSourcesResult: &commands.IndexSourcesResult{
				Indexed: []commands.IndexResult{}, Unchanged: unchanged, Removed: []string{}, ProjectRevision: rev}}
		}
		return nil
	})
	return res, err
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
