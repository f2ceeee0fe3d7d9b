package project

import (
	"context"
	"fmt"
	"github.com/awr-dev/awr/commands"
	"slices"
	"strings"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
)

// Bounds of a search's answer.
const (
	DefaultSearchLimit = 20
	MaxSearchLimit     = commands.MaxLimit
)

// SearchRequest is `awr search` and awr_search.
type SearchRequest struct {
	Query string `arg:"" name:"query" json:"query" help:"Words to find (all of them; a word ending in * is a prefix)." placeholder:"QUERY"`
	Kind  string `name:"kind" json:"kind,omitempty" help:"Only documents of this kind: work, checkpoint, loop, decision, fact, hypothesis or execution." placeholder:"KIND"`
	Limit *int   `name:"limit" json:"limit,omitempty" help:"At most N results (1 to 200; default 20)." placeholder:"N"`
	Read
}

// SearchHit is one search result with the command that shows it.
type SearchHit struct {
	projections.SearchHit
	Show string `json:"show"`
}

// SearchResult is `awr search`.
type SearchResult struct {
	Query string `json:"query"`
	// FTSQuery is the FTS5 query the words became.
	FTSQuery        string      `json:"fts_query"`
	Kind            string      `json:"kind,omitempty"`
	Results         []SearchHit `json:"results"`
	ProjectRevision int64       `json:"project_revision"`
}

// Search finds work items, checkpoints, loops, decisions, facts,
// hypotheses and executions whose text holds every word of the query,
// best match first (SQLite FTS5, BM25 ranking), as of the request's
// revision, each with the command that shows it.
// Errors: InvalidInput for a query without a word, an unknown kind or a
// limit outside 1 to MaxSearchLimit.
func (p *Project) Search(ctx context.Context, req SearchRequest) (*SearchResult, error) {
	fts := projections.FTSQuery(req.Query)
	if fts == "" {
		return nil, fault.New(fault.InvalidInput, "search: the query %q has no word to find", req.Query).With("field", "query").WithHint("awr search --help")
	}
	if req.Kind != "" && !slices.Contains(projections.SearchKinds, req.Kind) {
		return nil, fault.New(fault.InvalidInput, "search: --kind %s is not one of %s", req.Kind, strings.Join(projections.SearchKinds, ", ")).
			With("flag", "--kind").With("kinds", projections.SearchKinds).WithHint("awr search %s", strings.Join(strings.Fields(req.Query), " "))
	}
	limit, lerr := commands.LimitOf("search", "--limit", req.Limit, DefaultSearchLimit)
	if lerr != nil {
		return nil, lerr
	}
	out := &SearchResult{Query: req.Query, FTSQuery: fts, Kind: req.Kind, Results: []SearchHit{}}
	err := p.read(ctx, req.Read, func(r *events.Reader, rev, _ int64) error {
		out.ProjectRevision = rev
		search := projections.SearchHead
		if req.Past() {
			search = projections.SearchAt
		}
		hits, err := search(r.Conn, rev, fts, req.Kind, limit)
		if err != nil && strings.Contains(err.Error(), "fts5") {
			return fault.Wrap(fault.InvalidInput, err, "search: %q", req.Query)
		}
		if err != nil {
			return err
		}
		at := ""
		if req.Past() {
			at = fmt.Sprintf(" --at %d", rev)
		}
		for _, h := range hits {
			out.Results = append(out.Results, SearchHit{SearchHit: h, Show: showCommand(h) + at})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// showCommand is the command that shows what a hit found.
func showCommand(h projections.SearchHit) string {
	switch h.Kind {
	case projections.SearchWork:
		return "awr work show " + h.Ref
	case projections.SearchExecution:
		return "awr exec show " + h.Ref
	}
	return "awr session show " + h.SessionID
}
