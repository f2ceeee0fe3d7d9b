package mcpserver_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/awr-dev/awr/internal/project"
	"github.com/stretchr/testify/require"
)

// replicaOf exports the project at dir and imports it into a new
// directory, which is then a read-only replica of it.
func replicaOf(t *testing.T, dir string) string {
	t.Helper()
	ctx := context.Background()
	src, err := project.Open(ctx, dir, project.Options{Now: func() time.Time { return now }})
	require.NoError(t, err)
	defer src.Close()
	var export bytes.Buffer
	_, err = src.Export(ctx, project.ExportRequest{}, &export)
	require.NoError(t, err)
	dst := filepath.Join(t.TempDir(), "replica")
	require.NoError(t, os.Mkdir(dst, 0o755))
	p, err := project.Open(ctx, dst, project.Options{Now: func() time.Time { return now }})
	require.NoError(t, err)
	defer p.Close()
	_, err = p.Import(ctx, project.ImportRequest{File: "-"}, &export)
	require.NoError(t, err)
	// The team's files, as a checkout of the same repository has them.
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(dir, path)
		if err != nil || d.IsDir() || strings.HasPrefix(rel, filepath.Join(".awr", "awr.db")) || rel == filepath.Join(".awr", "project-id") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o755))
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	}))
	return dst
}

// TestServer_Replica: on an imported replica every writing tool is refused
// with ReadOnlyReplica and appends nothing, until awr_fork with accept
// forks it; awr_status then shows the fork.
func TestServer_Replica(t *testing.T) {
	t.Parallel()
	cs := connect(t, replicaOf(t, initProject(t)))

	st := ok(t, cs, "awr_status", nil)
	head := rev(t, st)
	require.EqualValues(t, head, get(st, "origin.head_seq"))
	require.NotContains(t, st, "fork")
	require.Equal(t, "awr fork", st["next_action"])

	refused := fails(t, cs, "awr_session_start", map[string]any{"work": "CART-1", "agent": "builder", "claim": true}, "ReadOnlyReplica")
	require.Equal(t, "awr fork --accept", refused["hint"])
	require.Contains(t, refused["message"], "read-only replica of project "+get(st, "origin.project_id").(string))
	fails(t, cs, "awr_source_reindex", map[string]any{"force": true}, "ReadOnlyReplica")
	require.EqualValues(t, head, rev(t, ok(t, cs, "awr_status", nil)), "nothing was written")

	preview := ok(t, cs, "awr_fork", nil)
	require.Equal(t, true, preview["replica"])
	require.Equal(t, false, preview["accepted"])
	require.EqualValues(t, head+1, get(preview, "would_append.seq"))
	require.EqualValues(t, head, rev(t, ok(t, cs, "awr_status", nil)), "a preview writes nothing")

	forked := ok(t, cs, "awr_fork", map[string]any{"accept": true, "reason": "a fork for the audit", "agent": "auditor"})
	require.Equal(t, true, forked["accepted"])
	require.EqualValues(t, head+1, get(forked, "fork.seq"))
	require.Equal(t, "auditor", get(forked, "by"))
	fails(t, cs, "awr_fork", map[string]any{"accept": true}, "InvalidTransition")

	start := ok(t, cs, "awr_session_start", map[string]any{"work": "CART-1", "agent": "builder", "claim": true})
	require.NotEmpty(t, get(start, "session.id"))
	st = ok(t, cs, "awr_status", nil)
	require.EqualValues(t, head+1, get(st, "fork.seq"))
	require.EqualValues(t, head, get(st, "fork.origin.head_seq"))
}
