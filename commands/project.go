package commands

import (
	"context"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/internal/fault"
	"github.com/awr-dev/awr/projections"
)

// InitRequest names a new project.
type InitRequest struct {
	Name       string `json:"name"`
	AWRVersion string `json:"awr_version,omitempty"`
	WriteMeta
}

// InitResult reports the project_initialized event.
type InitResult struct {
	Replay
	ProjectID       string `json:"project_id"`
	Name            string `json:"name"`
	AlreadyExisted  bool   `json:"already_initialized"`
	ProjectRevision int64  `json:"project_revision"`
}

// Init appends project_initialized to an empty log. On a log that already
// has it, Init is a no-op that reports the existing project.
func Init(ctx context.Context, env *Env, req InitRequest) (*InitResult, error) {
	if err := required("name", req.Name); err != nil {
		return nil, err
	}
	return write(ctx, env, "awr", req.WriteMeta, []string{"project"}, req, func(tx *events.Tx) (*InitResult, error) {
		return initProject(tx, req)
	})
}

// initProject appends project_initialized inside tx (see Init).
func initProject(tx *events.Tx, req InitRequest) (*InitResult, error) {
	existing, err := projectOf(tx)
	if err != nil {
		return nil, err
	}
	if existing != nil {
		return &InitResult{ProjectID: existing.ProjectID, Name: existing.Name, AlreadyExisted: true, ProjectRevision: tx.Head()}, nil
	}
	if tx.Head() != 0 {
		return nil, fault.New(fault.InvalidTransition, "init project: the log has %d events but no project_initialized", tx.Head()).WithHint("awr verify")
	}
	id := tx.NewID()
	if _, err := tx.Append(events.NewEvent{Stream: "project", Payload: events.ProjectInitialized{
		ProjectID: id, Name: req.Name, AWRVersion: req.AWRVersion,
	}}); err != nil {
		return nil, err
	}
	return &InitResult{ProjectID: id, Name: req.Name, ProjectRevision: tx.Head()}, nil
}

// InitIndexRequest creates a project's log with its first index: the
// project's name and every source's parsed content.
type InitIndexRequest struct {
	Name       string                 `json:"name"`
	AWRVersion string                 `json:"awr_version,omitempty"`
	Sources    []events.SourceIndexed `json:"sources"`
	// Fresh requires an empty log: the log is being built for a new
	// project, so events already in it are another init's.
	Fresh bool `json:"fresh,omitempty"`
}

// InitIndexResult is the new project and what was indexed.
type InitIndexResult struct {
	Project         InitResult         `json:"project"`
	Indexed         IndexSourcesResult `json:"indexed"`
	ProjectRevision int64              `json:"project_revision"`
}

// InitAndIndex is `awr init --accept` as one command: project_initialized
// and one source_indexed per source, in one transaction, so a project
// never exists half-indexed.
// Errors: those of Init and IndexSources.
func InitAndIndex(ctx context.Context, env *Env, req InitIndexRequest) (*InitIndexResult, error) {
	if err := required("name", req.Name); err != nil {
		return nil, err
	}
	if err := checkSources(req.Sources); err != nil {
		return nil, err
	}
	return write(ctx, env, "awr", WriteMeta{}, []string{"project"}, nil, func(tx *events.Tx) (*InitIndexResult, error) {
		if req.Fresh && tx.Head() != 0 {
			// A shared log another init filled first (this one caught up
			// from it) is that project, not this one.
			return nil, fault.New(fault.SourceConflict, "init: the log already holds %d events: another init created the project first", tx.Head()).
				With("project_revision", tx.Head()).WithHint("awr status")
		}
		p, err := initProject(tx, InitRequest{Name: req.Name, AWRVersion: req.AWRVersion})
		if err != nil {
			return nil, err
		}
		idx, err := indexSources(tx, IndexSourcesRequest{Sources: req.Sources})
		if err != nil {
			return nil, err
		}
		return &InitIndexResult{Project: *p, Indexed: *idx, ProjectRevision: tx.Head()}, nil
	})
}

func projectOf(tx *events.Tx) (*events.ProjectInitialized, error) {
	if tx.Head() == 0 {
		return nil, nil
	}
	pi, bad, err := events.ReadInitialized(tx.Conn)
	if err == nil {
		err = bad
	}
	return pi, err
}

// IndexRequest records one parse of a source file. Until source adapters
// parse files themselves, callers (tests, fixtures, the demo) pass the
// parsed content.
type IndexRequest struct {
	Source events.SourceIndexed `json:"source"`
	WriteMeta
}

// IndexResult reports the source_indexed event, or that nothing changed.
type IndexResult struct {
	Replay
	Path        string `json:"path"`
	ContentHash string `json:"content_hash"`
	Changed     bool   `json:"changed"`
	Seq         int64  `json:"seq,omitempty"`
	// Parts is how many events a split index took (0: one event); Seq is
	// then the last one's.
	Parts           int   `json:"parts,omitempty"`
	ProjectRevision int64 `json:"project_revision"`
}

// IndexSource appends source_indexed for a source whose content hash
// differs from the one last indexed (or always, with force).
func IndexSource(ctx context.Context, env *Env, req IndexRequest, force bool) (*IndexResult, error) {
	src := req.Source
	if err := required("path", src.Path); err != nil {
		return nil, err
	}
	if err := required("adapter", src.Adapter); err != nil {
		return nil, err
	}
	if err := required("content_hash", src.ContentHash); err != nil {
		return nil, err
	}
	for _, it := range src.Items {
		if err := required("items[].key", it.Key); err != nil {
			return nil, err
		}
	}
	stream := "source/" + src.Path
	return write(ctx, env, "awr", req.WriteMeta, []string{stream}, req, func(tx *events.Tx) (*IndexResult, error) {
		if p, err := projectOf(tx); err != nil {
			return nil, err
		} else if p == nil {
			return nil, fault.New(fault.NotFound, "index source: project is not initialized").WithHint("awr init")
		}
		if !force {
			same, err := sameSourceHash(tx, src.Path, src.ContentHash)
			if err != nil {
				return nil, err
			}
			if same {
				return &IndexResult{Path: src.Path, ContentHash: src.ContentHash, ProjectRevision: tx.Head()}, nil
			}
		}
		seq, parts, err := appendSource(tx, src)
		if err != nil {
			return nil, err
		}
		return &IndexResult{Path: src.Path, ContentHash: src.ContentHash, Changed: true, Seq: seq, Parts: parts, ProjectRevision: tx.Head()}, nil
	})
}

// appendSource appends the source_indexed events that record src (see
// sourcePayloads) and returns the seq of the last one and how many parts
// it took (0 for one event).
func appendSource(tx *events.Tx, src events.SourceIndexed) (seq int64, parts int, err error) {
	pls, err := sourcePayloads(tx, src)
	if err != nil {
		return 0, 0, err
	}
	for _, pl := range pls {
		e, err := tx.Append(events.NewEvent{Stream: "source/" + src.Path, Payload: pl})
		if err != nil {
			return 0, 0, err
		}
		seq = e.Seq
	}
	if len(pls) > 1 {
		parts = len(pls)
	}
	return seq, parts, nil
}

// sameSourceHash reports whether path's current index has contentHash.
func sameSourceHash(tx *events.Tx, path, contentHash string) (bool, error) {
	srcs, err := projections.SourcesAt(tx.Conn, tx.Head(), true)
	if err != nil {
		return false, err
	}
	for _, s := range srcs {
		if s.Path == path {
			return s.ContentHash == contentHash, nil
		}
	}
	return false, nil
}

// IndexSourcesRequest records a set of sources in one transaction.
type IndexSourcesRequest struct {
	Sources []events.SourceIndexed `json:"sources"`
	// Listed is every path the manifest lists; with Prune, each indexed
	// source not among them is removed in the same transaction.
	Listed []string `json:"listed,omitempty"`
	Prune  bool     `json:"prune,omitempty"`
	Force  bool     `json:"force,omitempty"`
	WriteMeta
}

// IndexSourcesResult reports which sources were appended.
type IndexSourcesResult struct {
	Replay
	Indexed         []IndexResult `json:"indexed"`
	Unchanged       []string      `json:"unchanged"`
	Removed         []string      `json:"removed"`
	ProjectRevision int64         `json:"project_revision"`
}

// IndexSources appends one source_indexed per source whose content hash
// changed since it was last indexed (every source with Force), and, with
// Prune, a removal for each indexed path not in Listed, all in one
// transaction: what is compared and what is written are the same revision.
func IndexSources(ctx context.Context, env *Env, req IndexSourcesRequest) (*IndexSourcesResult, error) {
	if err := checkSources(req.Sources); err != nil {
		return nil, err
	}
	return write(ctx, env, "awr", req.WriteMeta, nil, req, func(tx *events.Tx) (*IndexSourcesResult, error) {
		return indexSources(tx, req)
	})
}

// checkSources checks that every source names its path and adapter.
func checkSources(sources []events.SourceIndexed) error {
	for _, s := range sources {
		if err := required("path", s.Path); err != nil {
			return err
		}
		if err := required("adapter", s.Adapter); err != nil {
			return err
		}
	}
	return nil
}

// indexSources appends the sources of req inside tx (see IndexSources).
func indexSources(tx *events.Tx, req IndexSourcesRequest) (*IndexSourcesResult, error) {
	if p, err := projectOf(tx); err != nil {
		return nil, err
	} else if p == nil {
		return nil, fault.New(fault.NotFound, "index sources: project is not initialized").WithHint("awr init")
	}
	indexed, err := projections.SourcesAt(tx.Conn, tx.Head(), true)
	if err != nil {
		return nil, err
	}
	current := map[string]string{}
	for _, s := range indexed {
		current[s.Path] = s.ContentHash + "\x00" + s.OptionsHash
	}
	res := &IndexSourcesResult{Indexed: []IndexResult{}, Unchanged: []string{}, Removed: []string{}}
	for _, src := range req.Sources {
		if h, ok := current[src.Path]; ok && h == src.ContentHash+"\x00"+src.OptionsHash && !req.Force {
			res.Unchanged = append(res.Unchanged, src.Path)
			continue
		}
		seq, parts, err := appendSource(tx, src)
		if err != nil {
			return nil, err
		}
		res.Indexed = append(res.Indexed, IndexResult{Path: src.Path, ContentHash: src.ContentHash, Changed: true, Seq: seq, Parts: parts, ProjectRevision: seq})
	}
	listed := map[string]bool{}
	for _, path := range req.Listed {
		listed[path] = true
	}
	for _, s := range indexed {
		path := s.Path
		if !req.Prune || listed[path] {
			continue
		}
		if _, err := tx.Append(events.NewEvent{Stream: "source/" + path, Payload: events.SourceIndexed{Path: path, Adapter: "removed", ContentHash: "removed", Removed: true}}); err != nil {
			return nil, err
		}
		res.Removed = append(res.Removed, path)
	}
	res.ProjectRevision = tx.Head()
	return res, nil
}
