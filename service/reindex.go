package service

import (
	"context"

	"github.com/awr-dev/awr/commands"
	"github.com/awr-dev/awr/fault"
	"github.com/awr-dev/awr/intake"
	"github.com/awr-dev/awr/queries"
)

// ReindexResult is `awr source reindex`.
type ReindexResult struct {
	*commands.IndexSourcesResult
	Missing []string `json:"missing"`
}

// Reindex reads every manifest source and appends source_indexed for each
// one that changed (every one with force), and source removal for indexed
// paths no longer in the manifest, in one transaction. Files listed but
// absent are reported as missing.
// Errors: NotFound without a manifest; those of commands.IndexSources.
func (p *Project) Reindex(ctx context.Context, force bool, meta commands.WriteMeta) (*ReindexResult, error) {
	m, ok, err := intake.ReadManifest(p.Dir)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fault.New(fault.NotFound, "source reindex: %s is missing", intake.ManifestPath(p.Dir)).WithHint("awr init")
	}
	req := commands.IndexSourcesRequest{Force: force, WriteMeta: meta}
	res := &ReindexResult{Missing: []string{}}
	listed := map[string]bool{}
	for _, ms := range m.Sources {
		listed[ms.Path] = true
		si, missing := intake.Read(p.Dir, ms)
		if missing {
			res.Missing = append(res.Missing, ms.Path)
			continue
		}
		req.Sources = append(req.Sources, si)
	}
	indexed, err := queries.IndexedSources(ctx, p.Store)
	if err != nil {
		return nil, err
	}
	for _, s := range indexed {
		if !listed[s.Path] {
			req.Remove = append(req.Remove, s.Path)
		}
	}
	out, err := commands.IndexSources(ctx, p.Env, req)
	if err != nil {
		return nil, err
	}
	res.IndexSourcesResult = out
	return res, nil
}

// LogLimit turns an optional --limit into the queries.Log limit: the
// default when nil, -1 (all) for 0. Errors: InvalidInput when negative.
func LogLimit(limit *int) (int, error) {
	if limit == nil {
		return queries.DefaultLogLimit, nil
	}
	switch n := *limit; {
	case n < 0:
		return 0, fault.New(fault.InvalidInput, "log: --limit %d is negative; use 0 for all events", n).With("flag", "--limit").WithHint("awr log --limit 0")
	case n == 0:
		return -1, nil
	default:
		return n, nil
	}
}
