package project_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/awr-dev/awr/events"
	"github.com/awr-dev/awr/intake"
	"github.com/awr-dev/awr/project"
	"github.com/awr-dev/awr/projections"
	"github.com/stretchr/testify/require"
)

// TestInit_RerunFinishesAnInterruptedInit: an init killed after it wrote
// the manifest and the log's schema but before its first event leaves a
// project that a rerun of `init --accept` finishes (issue #13, row 1:
// before, the rerun said "already initialized (project_revision 0)" and
// nothing could recover the project).
func TestInit_RerunFinishesAnInterruptedInit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	todo := []byte("# TODO\n\n- [ ] W-1: Work\n")
	// The manifest a complete init writes for a project named proj.
	done := filepath.Join(t.TempDir(), "proj")
	require.NoError(t, os.MkdirAll(done, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(done, "TODO.md"), todo, 0o644))
	p, err := project.Open(ctx, done, project.Options{})
	require.NoError(t, err)
	_, err = p.Init(ctx, project.InitRequest{Accept: true})
	require.NoError(t, err)
	p.Close()
	manifest, err := os.ReadFile(intake.ManifestPath(done))
	require.NoError(t, err)

	// The interrupted one: the same files, the manifest, a log with its
	// schema and no event.
	dir := filepath.Join(t.TempDir(), "proj")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, ".awr"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "TODO.md"), todo, 0o644))
	require.NoError(t, os.WriteFile(intake.ManifestPath(dir), manifest, 0o644))
	st, err := events.Open(ctx, events.DBPath(dir), events.Options{Create: true, Projectors: projections.Projectors()})
	require.NoError(t, err)
	require.NoError(t, st.Close())

	p, err = project.Open(ctx, dir, project.Options{})
	require.NoError(t, err)
	defer p.Close()
	res, err := p.Init(ctx, project.InitRequest{Accept: true})
	require.NoError(t, err)
	require.Equal(t, "initialized", res.Status)
	require.Positive(t, res.ProjectRevision)
	require.NotEmpty(t, res.ProjectID)
	ready, err := p.Ready(ctx, project.ReadyRequest{})
	require.NoError(t, err)
	require.Len(t, ready.Ready, 1)
	again, err := p.Init(ctx, project.InitRequest{Accept: true})
	require.NoError(t, err)
	require.Equal(t, "unchanged", again.Status, "a complete project is left as it is")
}
