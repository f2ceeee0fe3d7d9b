package project_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/awr-dev/awr/internal/project"
	"github.com/stretchr/testify/require"
)

// TestSourceReindex_UnchangedByRead: a reindex that would append nothing
// answers from a read, exactly what the write path answers (the write is
// forced here by an expected revision) and at the same revision; a
// changed file, a missing one and an edit of the manifest still go to the
// write, which indexes, reports and removes as before.
func TestSourceReindex_UnchangedByRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := initialized(t, []byte("# TODO\n\n- [ ] W-1: Work\n"))
	p := opened(t, dir, project.Options{})
	before := head(t, p)

	read, err := p.SourceReindex(ctx, project.SourceReindexRequest{})
	require.NoError(t, err)
	req := project.SourceReindexRequest{}
	req.ExpectedRevision = &before
	written, err := p.SourceReindex(ctx, req)
	require.NoError(t, err)
	a, err := json.Marshal(read)
	require.NoError(t, err)
	b, err := json.Marshal(written)
	require.NoError(t, err)
	require.JSONEq(t, string(b), string(a))
	require.Equal(t, []string{"TODO.md"}, read.Unchanged)
	require.Equal(t, before, read.ProjectRevision)
	require.Equal(t, before, head(t, p), "nothing was appended")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "TODO.md"), []byte("# TODO\n\n- [ ] W-1: Work\n- [ ] W-2: More\n"), 0o644))
	changed, err := p.SourceReindex(ctx, project.SourceReindexRequest{})
	require.NoError(t, err)
	require.Len(t, changed.Indexed, 1)
	require.Equal(t, "TODO.md", changed.Indexed[0].Path)
	require.Equal(t, before+1, head(t, p))

	require.NoError(t, os.Remove(filepath.Join(dir, "TODO.md")))
	gone, err := p.SourceReindex(ctx, project.SourceReindexRequest{})
	require.NoError(t, err)
	require.Equal(t, []string{"TODO.md"}, gone.Missing)
	require.Empty(t, gone.Unchanged)
	require.Equal(t, before+1, head(t, p), "a missing file is reported, not removed")
}
